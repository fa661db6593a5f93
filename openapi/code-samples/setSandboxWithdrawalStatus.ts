// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
const { data, error, response } = await partner.POST('/sandbox/v1/withdrawals/{uuid}/status', {
  params: { path: { uuid: process.env.WITHDRAWAL_UUID! } },
  body: { status: 'DONE' },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(data.uuid, data.status);
