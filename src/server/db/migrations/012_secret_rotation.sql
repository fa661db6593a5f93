-- Issue 34, rolling a merchant's secrets without a gap: after `merchants rotate-secrets` the secrets of
-- the version before keep working until previous_secret_until (the database's clock), both derived
-- from the master key as ever (nothing secret is stored). NULL when no grace period runs.
ALTER TABLE merchants ADD COLUMN previous_secret_version integer;
ALTER TABLE merchants ADD COLUMN previous_secret_until timestamptz;
ALTER TABLE merchants ADD CONSTRAINT merchants_previous_secret CHECK (
  (previous_secret_version IS NULL) = (previous_secret_until IS NULL) AND
  (previous_secret_version IS NULL OR previous_secret_version < secret_version))
