-- Issue 32, reconciliation: merchants list their orders and withdrawals a page at a time (keyset
-- pagination, newest first), read their events as a feed from a cursor, and see each delivery attempt.

-- When an order's state last changed (created, credited, expired): the list's updatedSince filter.
ALTER TABLE deposit_orders ADD COLUMN updated_at timestamptz;
UPDATE deposit_orders o SET updated_at = GREATEST(o.created_at, COALESCE((SELECT max(c.created_at) FROM callback_outbox c WHERE c.order_uuid = o.uuid), o.created_at));
ALTER TABLE deposit_orders ALTER COLUMN updated_at SET DEFAULT now();
ALTER TABLE deposit_orders ALTER COLUMN updated_at SET NOT NULL;

-- A merchant's orders newest first (the index read backwards), and the page after a cursor: one index
-- range, however deep the walk (db/pages.ts).
CREATE INDEX deposit_orders_merchant_created ON deposit_orders (merchant_id, created_at, uuid);
-- Orders changed since a moment: a few recent rows, whatever the merchant's total.
CREATE INDEX deposit_orders_merchant_updated ON deposit_orders (merchant_id, updated_at);
CREATE INDEX withdrawals_merchant_created ON withdrawals (merchant_id, created_at, uuid);

-- The feed's order: the transaction that wrote the event, then its id. An event shows only once every
-- transaction older than the oldest one still running has ended (callbacks/feed.ts), so an event that
-- commits late can never land behind a cursor already handed out. Rows written before share one value.
ALTER TABLE callback_outbox ADD COLUMN tx_id xid8;
UPDATE callback_outbox SET tx_id = pg_current_xact_id();
ALTER TABLE callback_outbox ALTER COLUMN tx_id SET DEFAULT pg_current_xact_id();
ALTER TABLE callback_outbox ALTER COLUMN tx_id SET NOT NULL;
CREATE INDEX callback_outbox_feed ON callback_outbox (merchant_id, tx_id, id);

-- What went wrong with an attempt, as a word of the contract's DeliveryError (NULL for older rows: other).
ALTER TABLE callback_attempts ADD COLUMN error_kind text
