# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment, and EVENT_ID.
# No body: the signature covers the timestamp, POST and the target only, and no Content-Type is sent.
TARGET="/partner/v1/platforms/events/$EVENT_ID/redeliver"
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s' "$TIMESTAMP" POST "$TARGET" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body -X POST "$PARTNER_API_URL$TARGET" \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE"
