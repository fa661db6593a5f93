-- Addresses derived ahead, shared by every process (addresses/pool.ts). An order's insert takes the
-- lowest ready one of its network in the same statement and removes its row, so no process holds
-- indexes of its own: however many processes run, the used indexes of a network leave no gap but
-- the few rows of creates in flight at one moment that did not insert (a replay, a rollback), and the
-- next create takes those first.
-- A row with no address is an index still to derive: the indexes reserved and not used before this
-- table (and those of an earlier wallet) are derived again and handed out first, lowest first.
CREATE TABLE address_pool (
  network text NOT NULL CHECK (network IN ('Tron', 'Ethereum')),
  address_index bigint NOT NULL,
  -- A fingerprint of the xpub the address was derived from: a process uses only its own wallet's.
  wallet text,
  address text,
  address_qr text,
  PRIMARY KEY (network, address_index),
  CHECK ((wallet IS NULL) = (address IS NULL) AND (address IS NULL) = (address_qr IS NULL))
);
INSERT INTO address_pool (network, address_index) SELECT network, address_index FROM address_reservations;
DROP TABLE address_reservations
