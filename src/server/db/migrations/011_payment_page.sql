-- online: each statement commits by itself (db/migrate.ts): the columns are added at once, and their
-- checks validated apart, without blocking creates (seconds with a million orders, and creates
-- deadlocked with the two tables' locks taken in one transaction: bench/README.md); every statement can
-- run again.
-- Issue 35, the payment page says whom the payer pays and for what.

-- The merchant's name as payers see it on the payment page, set by the operator
-- (merchants create --display-name, merchants set-display-name), or null: the page then names no one.
-- merchants.name stays the operator's own name for the merchant.
ALTER TABLE merchants ADD COLUMN IF NOT EXISTS display_name text CHECK (length(display_name) BETWEEN 1 AND 100);

-- The order's description or reference for the payer (description in the create request), or null.
ALTER TABLE deposit_orders ADD COLUMN IF NOT EXISTS description text;
ALTER TABLE deposit_orders DROP CONSTRAINT IF EXISTS deposit_orders_description_check;
ALTER TABLE deposit_orders ADD CONSTRAINT deposit_orders_description_check CHECK (length(description) BETWEEN 1 AND 140) NOT VALID;
ALTER TABLE deposit_orders VALIDATE CONSTRAINT deposit_orders_description_check
