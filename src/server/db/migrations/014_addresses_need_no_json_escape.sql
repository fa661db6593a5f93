-- online: each statement commits by itself (db/migrate.ts): the check is added NOT VALID and validated
-- apart, without blocking creates (seconds with a million orders: bench/README.md); every statement can
-- run again.
-- An order's address and its QR code (a PNG data URL, addresses/qr.ts) are made by the platform from
-- base58, hex and base64 characters: none that JSON escapes. Its read and each list item write them
-- between quotes as they are (orders/order-rows.ts), without looking through every QR code's 390
-- characters for one to escape (a tenth of a list page's writing). The database holds them to it: a
-- value with a quote, a backslash or a control character is refused here, never sent as broken JSON.
-- The pattern is an escape string (E''), read the same whatever standard_conforming_strings says: a
-- bracket of the quote, the backslash (\\\\ in it, \\ to the regex) and the control characters.
ALTER TABLE deposit_orders DROP CONSTRAINT IF EXISTS deposit_orders_addresses_need_no_json_escape;
ALTER TABLE deposit_orders ADD CONSTRAINT deposit_orders_addresses_need_no_json_escape
  CHECK (address !~ E'["\\\\[:cntrl:]]' AND address_qr !~ E'["\\\\[:cntrl:]]') NOT VALID;
ALTER TABLE deposit_orders VALIDATE CONSTRAINT deposit_orders_addresses_need_no_json_escape
