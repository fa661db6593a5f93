-- Callbacks carry a per-order sequence (1, 2, 3, … in the order the platform recorded the events), so a
-- merchant can order deliveries that arrive out of order. Rows written before get theirs in id order.
ALTER TABLE callback_outbox ADD COLUMN sequence integer;
UPDATE callback_outbox o SET sequence = numbered.n
  FROM (SELECT id, row_number() OVER (PARTITION BY order_uuid ORDER BY id) AS n FROM callback_outbox) numbered
 WHERE o.id = numbered.id;
ALTER TABLE callback_outbox ALTER COLUMN sequence SET NOT NULL;
CREATE UNIQUE INDEX callback_outbox_order_sequence ON callback_outbox (order_uuid, sequence);

-- A claim is a lease with a token: only the dispatcher holding the current token records the outcome of
-- an attempt, so a late result never overwrites a newer state; no token means no delivery in flight.
ALTER TABLE callback_outbox ADD COLUMN lease_token uuid;

-- The time of the last block a network's scanner committed: orders of a scanned network expire by
-- chain time, so a payment mined before expiredAt is credited before the order can expire.
ALTER TABLE chain_cursors ADD COLUMN scanned_block_time timestamptz;
