# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment; CURSOR to read on.
# The feed of every event, orders' and withdrawals', oldest first: store nextCursor once the page is
# applied, and pass it as CURSOR to read on.
TARGET="/partner/v2/platforms/events?limit=20${CURSOR:+&cursor=$CURSOR}"
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s' "$TIMESTAMP" GET "$TARGET" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body "$PARTNER_API_URL$TARGET" \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE"
