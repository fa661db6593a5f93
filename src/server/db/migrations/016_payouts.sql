-- Issue 47, money out (part two): the platform pays withdrawals on chain from its hot wallet, exactly
-- once. Every transaction of a payout is written here, signed, with its hash, before it is broadcast
-- (its intent); after a crash the same bytes are sent again; a stuck one is replaced under the same nonce
-- (every candidate kept: whichever is mined is the one recorded); the chain alone says it is done.
CREATE TABLE payout_transactions (
  id bigserial PRIMARY KEY,
  withdrawal_uuid uuid NOT NULL REFERENCES withdrawals (uuid),
  network text NOT NULL CHECK (network IN ('Tron', 'Ethereum')),
  -- Signed by the platform's hot wallet, or paid by the operator and recorded (partner-api withdrawals record-tx).
  payer text NOT NULL CHECK (payer IN ('hot_wallet', 'operator')),
  -- The paying address (the hot wallet's); the operator's payment may come from any address.
  from_address text,
  -- Ethereum: the hot wallet's nonce the payout is pinned to (its replacements share it).
  nonce bigint CHECK (nonce >= 0),
  -- As the network writes it: 0x + 64 hex on Ethereum, 64 hex on Tron (lower case).
  tx_hash text NOT NULL UNIQUE CHECK (tx_hash ~ '^(0x)?[0-9a-f]{64}$'),
  -- The signed transaction: Ethereum's raw bytes (0x hex), Tron's broadcast body (JSON). None for the operator's.
  raw text,
  max_fee_per_gas numeric(78, 0),
  max_priority_fee_per_gas numeric(78, 0),
  -- Tron: raw_data.expiration; the transaction can never be included after it.
  expires_at timestamptz,
  -- pending: may still be mined; mined: in a block (its block below); dropped: can never be mined (its
  -- nonce was taken by another transaction, or it expired unknown to the node); failed: mined, not a payout.
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'mined', 'dropped', 'failed')),
  block_number bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  broadcast_at timestamptz,
  CHECK ((payer = 'hot_wallet') = (raw IS NOT NULL) AND (payer = 'hot_wallet') = (from_address IS NOT NULL))
);
CREATE INDEX payout_transactions_withdrawal ON payout_transactions (withdrawal_uuid);
CREATE INDEX payout_transactions_nonce ON payout_transactions (from_address, nonce) WHERE state <> 'dropped';

-- How a DONE withdrawal's settlement was proven: by the chain (a confirmed transfer of its exact amount to
-- its destination), or not at all (the operator's `set-status DONE --without-proof`, recorded and shown).
ALTER TABLE withdrawals ADD COLUMN settled_without_proof boolean NOT NULL DEFAULT false;
-- Since when a queued withdrawal waits for the hot wallet to cover it (null: not waiting).
ALTER TABLE withdrawals ADD COLUMN funds_awaited_since timestamptz;
