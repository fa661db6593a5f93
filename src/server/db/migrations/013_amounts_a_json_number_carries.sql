-- The order's read and list are written as JSON by the database (orders/order-rows.ts ORDER_JSON_SQL),
-- where a bigint prints as a JSON number whatever its size. A JSON number is exact only up to 2^53 - 1,
-- so the amounts they show are held to that here, as the code that writes them already holds them
-- (the contract's TokenAmount at a create, deposits.ts, unconfirmed.ts): one that passed it would be refused by the
-- database, never sent rounded.
ALTER TABLE deposit_orders ADD CONSTRAINT deposit_orders_amounts_exact_in_json
  CHECK (min_amount <= 9007199254740991 AND received_amount <= 9007199254740991);
ALTER TABLE unconfirmed_deposits ADD CONSTRAINT unconfirmed_deposits_amount_exact_in_json
  CHECK (amount <= 9007199254740991);
