-- online: each statement commits by itself (db/migrate.ts): the column is added at once, and its check
-- validated apart, without blocking creates (over a second with a million orders: bench/README.md); every
-- statement can run again.
-- The payment page's "Back to the shop" link (returnUrl in the create request); null when not given.
ALTER TABLE deposit_orders ADD COLUMN IF NOT EXISTS return_url text;
ALTER TABLE deposit_orders DROP CONSTRAINT IF EXISTS deposit_orders_return_url_check;
ALTER TABLE deposit_orders ADD CONSTRAINT deposit_orders_return_url_check CHECK (length(return_url) <= 2048) NOT VALID;
ALTER TABLE deposit_orders VALIDATE CONSTRAINT deposit_orders_return_url_check
