// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
const { data, error, response } = await partner.POST('/sandbox/v1/withdrawals', {
  body: { externalId: 'wd-1002', amount: 12.5, blockchain: 'Tron', currency: 'USDT', destinationAddress: 'TAVtmAR779HopKtw1b3Wa52itoJxYR1Ah4' },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(data.uuid, data.status);
