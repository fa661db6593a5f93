// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
// Every event, orders' and withdrawals', oldest first, up to the latest (a failure throws PartnerApiError).
let cursor: string | undefined = process.env.CURSOR || undefined;
for await (const page of partner.listAllEvents({ cursor }).pages()) {
  for (const event of page.data) {
    if (event.withdrawalUuid && 'withdrawal' in event.data) console.log(event.type, event.data.withdrawal.status, event.data.withdrawal.txId);
    else if (event.orderUuid && 'uuid' in event.data) console.log(event.type, event.data.status, event.data.receivedAmount);
    // else: a type this code does not know yet; skip it
  }
  cursor = page.nextCursor; // store it once the page is applied; next time, read on from it
}
console.log(cursor);
