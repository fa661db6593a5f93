-- Issue 54 (item 3): an operator's pause of a network's payouts (`partner-api payouts pause`), kept in the
-- database so that every instance's payer reads it at its next round. A row is a pause in force; resuming
-- deletes it. While paused the payer sends nothing new but follows what is already out.
CREATE TABLE payout_pauses (
  network text PRIMARY KEY CHECK (network IN ('Tron', 'Ethereum')),
  paused_at timestamptz NOT NULL DEFAULT now(),
  reason text NOT NULL
);
