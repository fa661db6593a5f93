// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
// In whole units, like a withdrawal's amount and fee: 12.5 is 12.5 USDT; null where there is no limit.
for (const terms of await partner.getWithdrawalTerms()) {
  console.log(terms.blockchain, terms.currency, terms.enabled, terms.fee, terms.minimum, terms.maximum, terms.dailyLeft);
}
