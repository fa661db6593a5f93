// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
const { data, error, response } = await partner.POST('/partner/v1/platforms/orders', {
  body: {
    externalId: 'ord-1002',
    blockchain: 'Ethereum',
    currency: 'USDT',
    customerId: 'cust-42',
    callbackUrl: 'https://merchant.example/callbacks/deposits',
  },
});
if (error) throw new Error(`${response.status} ${error.code}: ${error.detail}`);
console.log(response.status, data.uuid, data.address); // 201 new, 200 the same order again
