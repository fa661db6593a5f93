-- Issue 35, the payment page says whom the payer pays and for what.

-- The merchant's name as payers see it on the payment page, set by the operator
-- (merchants create --display-name, merchants set-display-name), or null: the page then names no one.
-- merchants.name stays the operator's own name for the merchant.
ALTER TABLE merchants ADD COLUMN display_name text CHECK (length(display_name) BETWEEN 1 AND 100);

-- The order's description or reference for the payer (description in the create request), or null.
ALTER TABLE deposit_orders ADD COLUMN description text CHECK (length(description) BETWEEN 1 AND 140)
