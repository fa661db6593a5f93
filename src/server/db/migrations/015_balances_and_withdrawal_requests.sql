-- Issue 46, money out (part one): each merchant's balance per network and currency as append-only ledger
-- entries, withdrawals a merchant asks for through the API (with their fee, stage, transaction and
-- failure reason), the operator's withdrawal policy per merchant, and withdrawal events in the outbox.

-- A withdrawal tells its story. `stage` says where a PENDING one stands (and only a PENDING one);
-- `source` who asked for it; `settle_after` when a sandbox API withdrawal settles by itself.
ALTER TABLE withdrawals ADD COLUMN fee_units bigint NOT NULL DEFAULT 0 CHECK (fee_units >= 0 AND fee_units <= 9007199254740991);
ALTER TABLE withdrawals ADD COLUMN stage text CHECK (stage IN ('awaiting_approval', 'queued', 'sent'));
ALTER TABLE withdrawals ADD COLUMN tx_id text CHECK (tx_id ~ '^(0x)?[0-9a-fA-F]{64}$');
ALTER TABLE withdrawals ADD COLUMN failure_reason text CHECK (length(failure_reason) BETWEEN 1 AND 500);
ALTER TABLE withdrawals ADD COLUMN callback_url text;
ALTER TABLE withdrawals ADD COLUMN source text NOT NULL DEFAULT 'operator' CHECK (source IN ('api', 'operator', 'sandbox'));
ALTER TABLE withdrawals ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE withdrawals ADD COLUMN settle_after timestamptz;
UPDATE withdrawals SET stage = 'queued' WHERE status = 'PENDING';
ALTER TABLE withdrawals ADD CONSTRAINT withdrawals_stage_while_pending CHECK ((status = 'PENDING') = (stage IS NOT NULL));
ALTER TABLE withdrawals ADD CONSTRAINT withdrawals_amount_exact_in_json CHECK (amount_units <= 9007199254740991);
-- The sandbox's settlement job reads the due ones.
CREATE INDEX withdrawals_settle_due ON withdrawals (settle_after) WHERE status = 'PENDING' AND settle_after IS NOT NULL;

-- The operator's policy for a merchant's withdrawals through the API (live mode; the sandbox allows
-- them without a row). Amounts in smallest units; no allowed address means any destination.
CREATE TABLE withdrawal_policies (
  merchant_id uuid PRIMARY KEY REFERENCES merchants (id),
  enabled boolean NOT NULL DEFAULT false,
  max_amount bigint CHECK (max_amount > 0),
  daily_limit bigint CHECK (daily_limit > 0),
  approve_above bigint CHECK (approve_above >= 0),
  allowed_addresses text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The books. Every change of a balance is an entry, and entries are only ever added: a credited
-- deposit (once per deposit), a withdrawal's hold (its amount plus fee, once), and the hold's end,
-- spent when the withdrawal is DONE or released when it FAILED (one of the two, once, for the hold's
-- amount). The balance row is the entries' sum, kept by the trigger below in the same statement;
-- its CHECKs make the database refuse any entry that would take a balance below zero.
CREATE TABLE ledger_entries (
  id bigserial PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  blockchain text NOT NULL CHECK (blockchain IN ('Tron', 'Ethereum')),
  currency text NOT NULL CHECK (currency = 'USDT'),
  kind text NOT NULL CHECK (kind IN ('deposit', 'hold', 'spend', 'release')),
  amount bigint NOT NULL CHECK (amount > 0),
  deposit_id bigint UNIQUE REFERENCES deposits (id),
  withdrawal_uuid uuid REFERENCES withdrawals (uuid),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_entries_one_source CHECK ((kind = 'deposit') = (deposit_id IS NOT NULL) AND (kind = 'deposit') = (withdrawal_uuid IS NULL))
);
CREATE UNIQUE INDEX ledger_entries_one_hold ON ledger_entries (withdrawal_uuid) WHERE kind = 'hold';
CREATE UNIQUE INDEX ledger_entries_one_settlement ON ledger_entries (withdrawal_uuid) WHERE kind IN ('spend', 'release');
CREATE INDEX ledger_entries_merchant ON ledger_entries (merchant_id, blockchain, currency);

CREATE TABLE balances (
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  blockchain text NOT NULL CHECK (blockchain IN ('Tron', 'Ethereum')),
  currency text NOT NULL CHECK (currency = 'USDT'),
  received bigint NOT NULL DEFAULT 0 CHECK (received >= 0),
  available bigint NOT NULL DEFAULT 0 CHECK (available >= 0),
  held bigint NOT NULL DEFAULT 0 CHECK (held >= 0),
  withdrawn bigint NOT NULL DEFAULT 0 CHECK (withdrawn >= 0),
  PRIMARY KEY (merchant_id, blockchain, currency),
  CONSTRAINT balances_add_up CHECK (received - withdrawn = available + held)
);

-- Deposits credited before the books opened, each once; their balances in one pass.
INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, deposit_id, created_at)
SELECT o.merchant_id, d.network, o.currency, 'deposit', d.amount, d.id, d.credited_at
  FROM deposits d JOIN deposit_orders o ON o.uuid = d.order_uuid
 ORDER BY d.id;
INSERT INTO balances (merchant_id, blockchain, currency, received, available)
SELECT merchant_id, blockchain, currency, sum(amount), sum(amount) FROM ledger_entries GROUP BY 1, 2, 3;

-- Applies an entry to its balance. A spend or release must end the withdrawal's hold, for its amount.
CREATE FUNCTION ledger_entry_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind IN ('spend', 'release') AND NOT EXISTS (
       SELECT 1 FROM ledger_entries WHERE withdrawal_uuid = NEW.withdrawal_uuid AND kind = 'hold' AND amount = NEW.amount AND merchant_id = NEW.merchant_id
          AND blockchain = NEW.blockchain AND currency = NEW.currency) THEN
    RAISE EXCEPTION 'a % of withdrawal % ends no hold of its amount', NEW.kind, NEW.withdrawal_uuid USING ERRCODE = '23514';
  END IF;
  INSERT INTO balances (merchant_id, blockchain, currency) VALUES (NEW.merchant_id, NEW.blockchain, NEW.currency) ON CONFLICT DO NOTHING;
  UPDATE balances
     SET received = received + CASE WHEN NEW.kind = 'deposit' THEN NEW.amount ELSE 0 END,
         available = available + CASE NEW.kind WHEN 'deposit' THEN NEW.amount WHEN 'hold' THEN -NEW.amount WHEN 'release' THEN NEW.amount ELSE 0 END,
         held = held + CASE NEW.kind WHEN 'hold' THEN NEW.amount WHEN 'spend' THEN -NEW.amount WHEN 'release' THEN -NEW.amount ELSE 0 END,
         withdrawn = withdrawn + CASE WHEN NEW.kind = 'spend' THEN NEW.amount ELSE 0 END
   WHERE merchant_id = NEW.merchant_id AND blockchain = NEW.blockchain AND currency = NEW.currency;
  RETURN NEW;
END
$$;
CREATE TRIGGER ledger_entries_apply AFTER INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_entry_applied();

CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are only ever added' USING ERRCODE = '42501';
END
$$;
CREATE TRIGGER ledger_entries_no_change BEFORE UPDATE OR DELETE ON ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();

-- Withdrawals recorded before the books drew on no balance. Those the balance covers, oldest first,
-- are booked as if asked for now (held, and spent if DONE); any it does not cover stay outside the
-- books, as they were (`partner-api ledger check` lists them).
DO $$
DECLARE
  w record;
BEGIN
  FOR w IN SELECT uuid, merchant_id, blockchain, currency_code, amount_units, status FROM withdrawals WHERE status <> 'FAILED' ORDER BY created_at, uuid LOOP
    IF EXISTS (SELECT 1 FROM balances WHERE merchant_id = w.merchant_id AND blockchain = w.blockchain AND currency = w.currency_code AND available >= w.amount_units) THEN
      INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, withdrawal_uuid)
      VALUES (w.merchant_id, w.blockchain, w.currency_code, 'hold', w.amount_units, w.uuid);
      IF w.status = 'DONE' THEN
        INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, withdrawal_uuid)
        VALUES (w.merchant_id, w.blockchain, w.currency_code, 'spend', w.amount_units, w.uuid);
      END IF;
    END IF;
  END LOOP;
END
$$;

-- Events about withdrawals, beside orders' events, in the same outbox: one subject per event, numbered
-- per subject. A withdrawal created without a callback URL still has its events (the feed shows them);
-- they have no URL and nothing to deliver (state 'none').
ALTER TABLE callback_outbox ALTER COLUMN order_uuid DROP NOT NULL;
ALTER TABLE callback_outbox ALTER COLUMN url DROP NOT NULL;
ALTER TABLE callback_outbox ADD COLUMN withdrawal_uuid uuid REFERENCES withdrawals (uuid);
ALTER TABLE callback_outbox ADD CONSTRAINT callback_outbox_one_subject CHECK (num_nonnulls(order_uuid, withdrawal_uuid) = 1);
ALTER TABLE callback_outbox DROP CONSTRAINT callback_outbox_event_check;
ALTER TABLE callback_outbox ADD CONSTRAINT callback_outbox_event_check
  CHECK (event IN ('order.deposit', 'order.expired', 'withdrawal.updated', 'withdrawal.done', 'withdrawal.failed'));
ALTER TABLE callback_outbox DROP CONSTRAINT callback_outbox_state_check;
ALTER TABLE callback_outbox ADD CONSTRAINT callback_outbox_state_check CHECK (state IN ('pending', 'delivered', 'gone', 'failed', 'none'));
ALTER TABLE callback_outbox ADD CONSTRAINT callback_outbox_url_to_deliver CHECK ((url IS NULL) = (state = 'none'));
CREATE UNIQUE INDEX callback_outbox_withdrawal_sequence ON callback_outbox (withdrawal_uuid, sequence);
