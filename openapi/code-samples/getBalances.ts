// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
// In the smallest unit, like order amounts: 1500000 is 1.5 USDT.
for (const balance of await partner.getBalances()) {
  console.log(balance.blockchain, balance.currency, balance.available, balance.held, balance.received, balance.withdrawn);
}
