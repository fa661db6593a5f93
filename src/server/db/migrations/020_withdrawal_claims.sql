-- Issue 54 (items 2 and 6). A queued withdrawal the operator takes to pay by hand (`partner-api withdrawals
-- claim`; the issue's "claim", a word the README gives the callbacks' dispatcher): while claimed, no
-- payer picks it, and the payer's intent write refuses it under the row's lock
-- (payouts/payout-store.ts recordIntent), so a claim and a hot wallet's payout never both win.
-- NULL: the payer's to pay. The merchant never sees it: the contract's stage stays `queued`.
ALTER TABLE withdrawals ADD COLUMN claimed_at timestamptz;

-- Why the operator created a withdrawal past its merchant's policy (`withdrawals create --override-policy
-- --reason`); NULL when the policy allowed it. Shown by `withdrawals list --json`, never to the merchant.
ALTER TABLE withdrawals ADD COLUMN policy_override_reason text;
