-- online: each statement commits by itself (db/migrate.ts), so that the index of open orders is built
-- without blocking creates (seconds with a million orders: bench/README.md); every statement can run again.
-- Issue 23: a deposit is one log of one block, job leadership is a lease row, and reserved address
-- indexes are recorded so that the ones a process never used are handed out again.

-- A deposit's identity includes its log index (from the block it was read from): the n-th transfer of a
-- transaction to an order is no identity of its own, since a node that once omitted one of two transfers
-- would make a later rescan credit the other twice. A re-mined transaction is recognised by the code
-- (orders/deposits.ts), under the order's row lock. The new key is built before the old one goes, so
-- that deposits are never without one.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS deposits_log_identity ON deposits (network, tx_hash, order_uuid, log_index, (COALESCE(block_hash, '')));
ALTER TABLE deposits DROP CONSTRAINT IF EXISTS deposits_transfer_identity;

-- Which instance runs each background job (process/leadership.ts): a lease its holder renews at every
-- round and any other instance takes over once expired, by the database's clock alone.
CREATE TABLE IF NOT EXISTS job_leases (
  job text PRIMARY KEY,
  holder uuid NOT NULL,
  expires_at timestamptz NOT NULL
);

-- Address indexes reserved by a process and not yet used by an order (addresses/pool.ts): one that was
-- never used (the process stopped or crashed) is reserved again after its deadline, lowest first, so the
-- used indexes of a network keep no gap beyond a wallet's gap limit. The order's insert removes its row.
CREATE TABLE IF NOT EXISTS address_reservations (
  network text NOT NULL CHECK (network IN ('Tron', 'Ethereum')),
  address_index bigint NOT NULL,
  holder uuid NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (network, address_index)
);

-- The next new address index of each network, in a row: unlike the sequences (no longer used), it never
-- jumps ahead when the database crashes. It starts past every index handed out before.
CREATE TABLE IF NOT EXISTS address_counters (
  network text PRIMARY KEY CHECK (network IN ('Tron', 'Ethereum')),
  next_index bigint NOT NULL CHECK (next_index BETWEEN 0 AND 2147483648)
);
INSERT INTO address_counters (network, next_index)
SELECT 'Tron', GREATEST((SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM address_index_tron),
                        (SELECT COALESCE(max(address_index) + 1, 0) FROM deposit_orders WHERE blockchain = 'Tron'))
ON CONFLICT (network) DO NOTHING;
INSERT INTO address_counters (network, next_index)
SELECT 'Ethereum', GREATEST((SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM address_index_ethereum),
                            (SELECT COALESCE(max(address_index) + 1, 0) FROM deposit_orders WHERE blockchain = 'Ethereum'))
ON CONFLICT (network) DO NOTHING;

-- A merchant's open orders are counted for MAX_OPEN_ORDERS_PER_MERCHANT (at most every 5 s per merchant, afresh near the bound).
CREATE INDEX CONCURRENTLY IF NOT EXISTS deposit_orders_open_per_merchant ON deposit_orders (merchant_id) WHERE status = 'NEW';
