-- An order's address and its QR code (a PNG data URL, addresses/qr.ts) are made by the platform from
-- base58, hex and base64 characters: none that JSON escapes. Its read and each list item write them
-- between quotes as they are (orders/order-rows.ts), without looking through every QR code's 390
-- characters for one to escape (a tenth of a list page's writing). The database holds them to it: a
-- value with a quote, a backslash or a control character is refused here, never sent as broken JSON.
ALTER TABLE deposit_orders ADD CONSTRAINT deposit_orders_addresses_need_no_json_escape
  CHECK (address !~ '["\\[:cntrl:]]' AND address_qr !~ '["\\[:cntrl:]]');
