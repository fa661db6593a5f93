# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment, and ORDER_UUID.
TARGET="/sandbox/v1/orders/$ORDER_UUID/deposits"
BODY='{"amount":30000000}'
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s%s' "$TIMESTAMP" POST "$TARGET" "$BODY" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body "$PARTNER_API_URL$TARGET" \
  -H 'Content-Type: application/json' \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE" \
  -H "Idempotency-Key: deposit-$ORDER_UUID-1" \
  --data-raw "$BODY"
