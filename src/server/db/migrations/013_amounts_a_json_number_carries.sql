-- online: each statement commits by itself (db/migrate.ts): the checks are added NOT VALID and
-- validated apart, without blocking creates (seconds with a million orders: bench/README.md); every
-- statement can run again.
-- The amounts of an order's unconfirmed transfers come from the database as JSON numbers
-- (orders/unconfirmed.ts), where a bigint prints as one whatever its size; the order's own amounts are
-- written as JSON numbers by its read (order-rows.ts). A JSON number is exact only up to 2^53 - 1,
-- so the amounts they show are held to that here, as the code that writes them already holds them (the
-- contract's TokenAmount at a create, deposits.ts, unconfirmed.ts): one that passed it would be refused
-- by the database, never sent rounded.
ALTER TABLE deposit_orders DROP CONSTRAINT IF EXISTS deposit_orders_amounts_exact_in_json;
ALTER TABLE deposit_orders ADD CONSTRAINT deposit_orders_amounts_exact_in_json
  CHECK (min_amount <= 9007199254740991 AND received_amount <= 9007199254740991) NOT VALID;
ALTER TABLE deposit_orders VALIDATE CONSTRAINT deposit_orders_amounts_exact_in_json;
ALTER TABLE unconfirmed_deposits DROP CONSTRAINT IF EXISTS unconfirmed_deposits_amount_exact_in_json;
ALTER TABLE unconfirmed_deposits ADD CONSTRAINT unconfirmed_deposits_amount_exact_in_json
  CHECK (amount <= 9007199254740991) NOT VALID;
ALTER TABLE unconfirmed_deposits VALIDATE CONSTRAINT unconfirmed_deposits_amount_exact_in_json
