-- The chain scanner against misbehaving nodes (issue 9): block hashes to see reorgs, a halt per
-- network, and a deposit identity that survives a transaction being re-mined at another position.

-- The hash of the block each credited transfer was read from (NULL for rows credited before).
ALTER TABLE deposits ADD COLUMN block_hash text;

-- A transaction keeps its hash when it is re-mined, but its logs get new indexes: a deposit is the
-- n-th transfer (from 0, in log order) of one transaction to one order's address.
ALTER TABLE deposits ADD COLUMN transfer_ordinal integer NOT NULL DEFAULT 0 CHECK (transfer_ordinal >= 0);
UPDATE deposits d SET transfer_ordinal = o.ordinal
  FROM (SELECT id, (row_number() OVER (PARTITION BY network, tx_hash, order_uuid ORDER BY log_index) - 1)::integer AS ordinal FROM deposits) o
 WHERE d.id = o.id;
ALTER TABLE deposits ADD CONSTRAINT deposits_transfer_identity UNIQUE (network, tx_hash, order_uuid, transfer_ordinal);
ALTER TABLE deposits DROP CONSTRAINT deposits_network_tx_hash_log_index_key;

-- The hash of the cursor's last scanned block (next_block - 1): the next scan checks the node still
-- has it. A network whose scanned chain changed is halted until an operator resumes it.
ALTER TABLE chain_cursors ADD COLUMN last_block_hash text;
ALTER TABLE chain_cursors ADD COLUMN halted_at timestamptz;
ALTER TABLE chain_cursors ADD COLUMN halt_reason text;
