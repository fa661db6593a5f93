-- Issue 23: a deposit is one log of one block, job leadership is a lease row, and reserved address
-- indexes are recorded so that the ones a process never used are handed out again.

-- A deposit's identity includes its log index (from the block it was read from): the n-th transfer of a
-- transaction to an order is no identity of its own, since a node that once omitted one of two transfers
-- would make a later rescan credit the other twice. A re-mined transaction is recognised by the code
-- (orders/deposits.ts), under the order's row lock.
ALTER TABLE deposits DROP CONSTRAINT deposits_transfer_identity;
CREATE UNIQUE INDEX deposits_log_identity ON deposits (network, tx_hash, order_uuid, log_index, (COALESCE(block_hash, '')));

-- Which instance runs each background job (process/leadership.ts): a lease its holder renews at every
-- round and any other instance takes over once expired, by the database's clock alone.
CREATE TABLE job_leases (
  job text PRIMARY KEY,
  holder uuid NOT NULL,
  expires_at timestamptz NOT NULL
);
