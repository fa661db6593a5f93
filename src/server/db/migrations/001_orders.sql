-- Merchants, deposit orders and withdrawals. Amounts are bigint smallest units; secrets are not
-- stored at all (they are derived from the server's master key, see secrets.ts).

CREATE TABLE merchants (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  api_key text NOT NULL UNIQUE,
  secret_version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Address indexes come from sequences: never handed out twice, also across crashes and restarts
-- (a sequence value is consumed even when its transaction rolls back).
CREATE SEQUENCE address_index_tron MINVALUE 0 START 0 MAXVALUE 2147483647 NO CYCLE;
CREATE SEQUENCE address_index_ethereum MINVALUE 0 START 0 MAXVALUE 2147483647 NO CYCLE;

CREATE TABLE deposit_orders (
  uuid uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  external_id text NOT NULL,
  blockchain text NOT NULL CHECK (blockchain IN ('Tron', 'Ethereum')),
  currency text NOT NULL CHECK (currency = 'USDT'),
  customer_id text NOT NULL,
  callback_url text NOT NULL,
  address_index bigint NOT NULL,
  address text NOT NULL,
  address_qr text NOT NULL,
  status text NOT NULL DEFAULT 'NEW' CHECK (status IN ('NEW', 'DONE', 'EXPIRED')),
  min_amount bigint NOT NULL CHECK (min_amount >= 0),
  received_amount bigint NOT NULL DEFAULT 0 CHECK (received_amount >= 0),
  expired_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant_id, external_id),
  UNIQUE (blockchain, address_index),
  UNIQUE (blockchain, address)
);

CREATE TABLE withdrawals (
  uuid uuid PRIMARY KEY,
  merchant_id uuid NOT NULL REFERENCES merchants (id),
  external_id text NOT NULL,
  amount_units bigint NOT NULL CHECK (amount_units > 0),
  blockchain text NOT NULL CHECK (blockchain IN ('Tron', 'Ethereum')),
  currency_code text NOT NULL CHECK (currency_code = 'USDT'),
  destination_address text NOT NULL,
  status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DONE', 'FAILED')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (merchant_id, external_id)
);
