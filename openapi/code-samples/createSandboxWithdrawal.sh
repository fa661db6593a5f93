# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
TARGET=/sandbox/v1/withdrawals
BODY='{"externalId":"wd-1001","amount":12.5,"blockchain":"Tron","currency":"USDT","destinationAddress":"TAVtmAR779HopKtw1b3Wa52itoJxYR1Ah4"}'
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s%s' "$TIMESTAMP" POST "$TARGET" "$BODY" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body "$PARTNER_API_URL$TARGET" \
  -H 'Content-Type: application/json' \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE" \
  --data-raw "$BODY"
