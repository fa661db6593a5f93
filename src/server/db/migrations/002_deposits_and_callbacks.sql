-- online: each statement commits by itself (db/migrate.ts), so that the indexes of a table of orders
-- are built without blocking its creates (seconds with a million orders: bench/README.md); every
-- statement can run again.
-- Deposits from the chain (or the sandbox helper), per-network scan cursors, and the callback outbox.

-- One row per on-chain transfer credited: the unique key makes every credit happen exactly once.
CREATE TABLE IF NOT EXISTS deposits (
  id bigserial PRIMARY KEY,
  network text NOT NULL CHECK (network IN ('Tron', 'Ethereum')),
  tx_hash text NOT NULL,
  log_index integer NOT NULL CHECK (log_index >= 0),
  block_number bigint NOT NULL,
  order_uuid uuid NOT NULL REFERENCES deposit_orders (uuid),
  amount bigint NOT NULL CHECK (amount > 0),
  source text NOT NULL CHECK (source IN ('chain', 'sandbox')),
  credited_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (network, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS deposits_order ON deposits (order_uuid);

-- The next block each network's scanner reads; advanced in the same transaction as the credits.
CREATE TABLE IF NOT EXISTS chain_cursors (
  network text PRIMARY KEY CHECK (network IN ('Tron', 'Ethereum')),
  next_block bigint NOT NULL CHECK (next_block >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Orders whose addresses are watched: until expired_at + the watch window.
CREATE INDEX CONCURRENTLY IF NOT EXISTS deposit_orders_watch ON deposit_orders (blockchain, expired_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS deposit_orders_new_expiry ON deposit_orders (expired_at) WHERE status = 'NEW';

-- The transactional outbox: a row per event, written with the change it reports; the body is frozen
-- at that moment so that every retry sends the same bytes under the same webhook-id.
CREATE TABLE IF NOT EXISTS callback_outbox (
  id bigserial PRIMARY KEY,
  webhook_id text NOT NULL UNIQUE,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  order_uuid uuid NOT NULL REFERENCES deposit_orders (uuid),
  event text NOT NULL CHECK (event IN ('order.deposit', 'order.expired')),
  url text NOT NULL,
  body text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'gone', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX IF NOT EXISTS callback_outbox_due ON callback_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS callback_outbox_order ON callback_outbox (order_uuid);

-- Every delivery attempt, for the operator (partner-api callbacks list).
CREATE TABLE IF NOT EXISTS callback_attempts (
  id bigserial PRIMARY KEY,
  outbox_id bigint NOT NULL REFERENCES callback_outbox (id),
  attempted_at timestamptz NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  error text
);
CREATE INDEX IF NOT EXISTS callback_attempts_outbox ON callback_attempts (outbox_id);
