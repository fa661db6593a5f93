-- Issue 33, a payment seen before it is confirmed: the transfers to watched orders that the scanner
-- sees in blocks above the confirmed head. A network's rows are replaced at each scan (so a reorg that
-- removes a transfer removes its row), and a transfer leaves when its block is confirmed and credited,
-- in the transaction that credits it. Never summed into received_amount: the order's read shows them as
-- unconfirmedDeposits.
CREATE TABLE unconfirmed_deposits (
  network text NOT NULL CHECK (network IN ('Tron', 'Ethereum')),
  order_uuid uuid NOT NULL,
  tx_hash text NOT NULL,
  log_index integer NOT NULL,
  block_number bigint NOT NULL,
  block_hash text,
  amount bigint NOT NULL CHECK (amount > 0),
  confirmations integer NOT NULL,
  required_confirmations integer NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (network, tx_hash, log_index, order_uuid)
);
CREATE INDEX unconfirmed_deposits_order ON unconfirmed_deposits (order_uuid, block_number, log_index);
