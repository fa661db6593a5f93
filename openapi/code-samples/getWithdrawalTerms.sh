# Needs PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
TARGET=/partner/v1/platforms/withdrawals/terms
TIMESTAMP=$(date +%s)
SIGNATURE=$(printf '%s%s%s' "$TIMESTAMP" GET "$TARGET" | openssl dgst -sha256 -hmac "$PARTNER_API_SECRET" -r | cut -d' ' -f1)
curl -sS --fail-with-body "$PARTNER_API_URL$TARGET" \
  -H "X-Api-Key: $PARTNER_API_KEY" -H "X-Timestamp: $TIMESTAMP" -H "X-Signature: $SIGNATURE"
