# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
# Pays 12.5 USDT (plus the network's fee) of your Tron balance to the address; the same externalId again
# returns the same withdrawal (200), so a retry after a timeout never pays twice.
TARGET=/partner/v1/platforms/withdrawals
BODY='{"externalId":"wd-2001","blockchain":"Tron","currency":"USDT","amount":12.5,"destinationAddress":"TAVtmAR779HopKtw1b3Wa52itoJxYR1Ah4","callbackUrl":"https://merchant.example/callbacks/withdrawals"}'
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s%s' "$TIMESTAMP" POST "$TARGET" "$BODY" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body "$PARTNER_API_URL$TARGET" \
  -H 'Content-Type: application/json' \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE" \
  --data-raw "$BODY"
