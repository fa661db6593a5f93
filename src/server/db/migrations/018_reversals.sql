-- Issue 53 (item 7): a deposit credited from blocks that a reorg deeper than the confirmations removed,
-- and that the new chain does not hold again, is reversed when the operator resumes the network. The
-- deposit row stays (its reversal is recorded on it); the books get a `reversal` entry, once per deposit.

-- When the deposit was reversed (NULL: it stands). A reversed deposit no longer counts as credited: the
-- same transfer found later on the chain is credited again, as a new deposit.
ALTER TABLE deposits ADD COLUMN reversed_at timestamptz;

-- A reversal names the deposit it takes back; a deposit is reversed at most once.
ALTER TABLE ledger_entries ADD COLUMN reversed_deposit_id bigint UNIQUE REFERENCES deposits (id);
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check CHECK (kind IN ('deposit', 'hold', 'spend', 'release', 'reversal'));
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_one_source;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_one_source CHECK (
  num_nonnulls(deposit_id, withdrawal_uuid, reversed_deposit_id) = 1
  AND (kind = 'deposit') = (deposit_id IS NOT NULL)
  AND (kind = 'reversal') = (reversed_deposit_id IS NOT NULL));

-- What a reversal took beyond the available balance: the merchant owes it, and the next deposits (or a
-- released hold) pay it before anything becomes available again. The balance itself never goes below
-- zero (its CHECK stands); a balance that owes has nothing available.
ALTER TABLE balances ADD COLUMN owed bigint NOT NULL DEFAULT 0 CHECK (owed >= 0);
ALTER TABLE balances DROP CONSTRAINT balances_add_up;
ALTER TABLE balances ADD CONSTRAINT balances_add_up CHECK (received - withdrawn = available + held - owed);
ALTER TABLE balances ADD CONSTRAINT balances_owed_only_when_empty CHECK (owed = 0 OR available = 0);

-- Applies an entry to its balance, as before, with reversals: money in (a deposit, a released hold)
-- pays what is owed first; a reversal takes the available balance, and owes the rest.
CREATE OR REPLACE FUNCTION ledger_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind IN ('spend', 'release') AND NOT EXISTS (
       SELECT 1 FROM ledger_entries WHERE withdrawal_uuid = NEW.withdrawal_uuid AND kind = 'hold' AND amount = NEW.amount AND merchant_id = NEW.merchant_id
          AND blockchain = NEW.blockchain AND currency = NEW.currency) THEN
    RAISE EXCEPTION 'a % of withdrawal % ends no hold of its amount', NEW.kind, NEW.withdrawal_uuid USING ERRCODE = '23514';
  END IF;
  INSERT INTO balances (merchant_id, blockchain, currency) VALUES (NEW.merchant_id, NEW.blockchain, NEW.currency) ON CONFLICT DO NOTHING;
  UPDATE balances
     SET received = received + CASE NEW.kind WHEN 'deposit' THEN NEW.amount WHEN 'reversal' THEN -NEW.amount ELSE 0 END,
         available = CASE NEW.kind
                       WHEN 'deposit' THEN available + greatest(NEW.amount - owed, 0)
                       WHEN 'release' THEN available + greatest(NEW.amount - owed, 0)
                       WHEN 'hold' THEN available - NEW.amount
                       WHEN 'reversal' THEN greatest(available - NEW.amount, 0)
                       ELSE available END,
         owed = CASE NEW.kind
                  WHEN 'deposit' THEN greatest(owed - NEW.amount, 0)
                  WHEN 'release' THEN greatest(owed - NEW.amount, 0)
                  WHEN 'reversal' THEN owed + greatest(NEW.amount - available, 0)
                  ELSE owed END,
         held = held + CASE NEW.kind WHEN 'hold' THEN NEW.amount WHEN 'spend' THEN -NEW.amount WHEN 'release' THEN -NEW.amount ELSE 0 END,
         withdrawn = withdrawn + CASE WHEN NEW.kind = 'spend' THEN NEW.amount ELSE 0 END
   WHERE merchant_id = NEW.merchant_id AND blockchain = NEW.blockchain AND currency = NEW.currency;
  RETURN NEW;
END
$$;
