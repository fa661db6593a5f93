-- A check value of the master key the database was created with (an HMAC, not the key): a server or
-- an operator command started with another key refuses, instead of handing out credentials that the
-- platform will not accept.
CREATE TABLE platform_settings (
  name text PRIMARY KEY,
  value text NOT NULL
);
