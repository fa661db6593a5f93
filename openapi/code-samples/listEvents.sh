# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment; CURSOR to read on.
# One page of the feed, oldest first. nextCursor is always there, also on an empty page: store it once
# the page is applied, and pass it as CURSOR (with the same filters) to read on from there.
TARGET="/partner/v1/platforms/events?type=order.deposit&limit=20${CURSOR:+&cursor=$CURSOR}"
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s' "$TIMESTAMP" GET "$TARGET" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body "$PARTNER_API_URL$TARGET" \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE"
