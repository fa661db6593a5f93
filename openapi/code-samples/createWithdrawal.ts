// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.
import { createPartnerClient, WithdrawalRefusedError } from 'partner-api-client';

const partner = createPartnerClient({
  baseUrl: process.env.PARTNER_API_URL!,
  apiKey: process.env.PARTNER_API_KEY!,
  apiSecret: process.env.PARTNER_API_SECRET!,
});
// 12.5 USDT (plus the network's fee) of your Tron balance to the address. The same externalId again
// returns the same withdrawal, so a retry after a timeout never pays twice.
try {
  const withdrawal = await partner.createWithdrawal({
    externalId: 'wd-2002',
    blockchain: 'Tron',
    currency: 'USDT',
    amount: 12.5,
    destinationAddress: 'TAVtmAR779HopKtw1b3Wa52itoJxYR1Ah4',
    callbackUrl: 'https://merchant.example/callbacks/withdrawals',
  });
  console.log(withdrawal.uuid, withdrawal.status, withdrawal.stage, withdrawal.fee);
} catch (error) {
  // A refusal changed nothing: insufficient_balance says what is available (smallest units).
  if (error instanceof WithdrawalRefusedError && error.problem.code === 'insufficient_balance') console.log('available:', error.problem.available);
  else throw error;
}
