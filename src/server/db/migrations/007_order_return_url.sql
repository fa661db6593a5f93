-- The payment page's "Back to the shop" link (returnUrl in the create request); null when not given.
ALTER TABLE deposit_orders ADD COLUMN return_url text CHECK (length(return_url) <= 2048)
