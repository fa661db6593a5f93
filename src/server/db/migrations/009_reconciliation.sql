-- online: each statement commits by itself (db/migrate.ts), so that no lock on the orders outlives a
-- statement: the columns are added at once, filled in batches that each commit, made NOT NULL through
-- a check validated apart, and the indexes built concurrently (creates were blocked for minutes with a
-- million orders: bench/README.md); every statement can run again.
-- Issue 32, reconciliation: merchants list their orders and withdrawals a page at a time (keyset
-- pagination, newest first), read their events as a feed from a cursor, and see each delivery attempt.

-- When an order's state last changed (created, credited, expired): the list's updatedSince filter. An
-- order created from here on is dated by the default; one before, by its last event, in batches of
-- 10,000 in uuid order.
ALTER TABLE deposit_orders ADD COLUMN IF NOT EXISTS updated_at timestamptz;
ALTER TABLE deposit_orders ALTER COLUMN updated_at SET DEFAULT now();
DO $$
DECLARE
  done uuid := '00000000-0000-0000-0000-000000000000';
  upto uuid;
BEGIN
  LOOP
    SELECT batch.uuid INTO upto FROM (SELECT uuid FROM deposit_orders WHERE uuid > done ORDER BY uuid LIMIT 10000) AS batch ORDER BY batch.uuid DESC LIMIT 1;
    EXIT WHEN upto IS NULL;
    UPDATE deposit_orders o SET updated_at = GREATEST(o.created_at, COALESCE((SELECT max(c.created_at) FROM callback_outbox c WHERE c.order_uuid = o.uuid), o.created_at))
     WHERE o.uuid > done AND o.uuid <= upto AND o.updated_at IS NULL;
    done := upto;
    COMMIT;
  END LOOP;
END $$;
ALTER TABLE deposit_orders DROP CONSTRAINT IF EXISTS deposit_orders_updated_at_set;
ALTER TABLE deposit_orders ADD CONSTRAINT deposit_orders_updated_at_set CHECK (updated_at IS NOT NULL) NOT VALID;
ALTER TABLE deposit_orders VALIDATE CONSTRAINT deposit_orders_updated_at_set;
-- Proven by the check: no scan of the table.
ALTER TABLE deposit_orders ALTER COLUMN updated_at SET NOT NULL;
ALTER TABLE deposit_orders DROP CONSTRAINT deposit_orders_updated_at_set;

-- A merchant's orders newest first (the index read backwards), and the page after a cursor: one index
-- range, however deep the walk (db/pages.ts).
CREATE INDEX CONCURRENTLY IF NOT EXISTS deposit_orders_merchant_created ON deposit_orders (merchant_id, created_at, uuid);
-- Orders changed since a moment: a few recent rows, whatever the merchant's total.
CREATE INDEX CONCURRENTLY IF NOT EXISTS deposit_orders_merchant_updated ON deposit_orders (merchant_id, updated_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS withdrawals_merchant_created ON withdrawals (merchant_id, created_at, uuid);

-- The feed's order: the transaction that wrote the event, then its id. An event shows only once every
-- transaction older than the oldest one still running has ended (callbacks/feed.ts), so an event that
-- commits late can never land behind a cursor already handed out. Rows written before share one value,
-- the first batch's transaction (so that they keep their id order, before every event written after),
-- filled in batches of 10,000 in id order.
ALTER TABLE callback_outbox ADD COLUMN IF NOT EXISTS tx_id xid8;
ALTER TABLE callback_outbox ALTER COLUMN tx_id SET DEFAULT pg_current_xact_id();
DO $$
DECLARE
  before xid8 := pg_current_xact_id();
  done bigint := 0;
  upto bigint;
BEGIN
  LOOP
    SELECT max(id) INTO upto FROM (SELECT id FROM callback_outbox WHERE id > done ORDER BY id LIMIT 10000) AS batch;
    EXIT WHEN upto IS NULL;
    UPDATE callback_outbox SET tx_id = before WHERE id > done AND id <= upto AND tx_id IS NULL;
    done := upto;
    COMMIT;
  END LOOP;
END $$;
ALTER TABLE callback_outbox DROP CONSTRAINT IF EXISTS callback_outbox_tx_id_set;
ALTER TABLE callback_outbox ADD CONSTRAINT callback_outbox_tx_id_set CHECK (tx_id IS NOT NULL) NOT VALID;
ALTER TABLE callback_outbox VALIDATE CONSTRAINT callback_outbox_tx_id_set;
ALTER TABLE callback_outbox ALTER COLUMN tx_id SET NOT NULL;
ALTER TABLE callback_outbox DROP CONSTRAINT callback_outbox_tx_id_set;
CREATE INDEX CONCURRENTLY IF NOT EXISTS callback_outbox_feed ON callback_outbox (merchant_id, tx_id, id);

-- What went wrong with an attempt, as a word of the contract's DeliveryError (NULL for older rows: other).
ALTER TABLE callback_attempts ADD COLUMN IF NOT EXISTS error_kind text
