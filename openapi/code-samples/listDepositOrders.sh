# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
# One page: the 20 newest orders that are DONE. While hasMore, pass nextCursor as cursor, with the same filters.
# The signature covers the request target with its query string, exactly as sent.
TARGET="/partner/v1/platforms/orders?status=DONE&limit=20"
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s' "$TIMESTAMP" GET "$TARGET" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body "$PARTNER_API_URL$TARGET" \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE"
