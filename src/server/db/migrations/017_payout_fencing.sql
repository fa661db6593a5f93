-- Issue 53, payouts on a bad day. A job's lease carries a fencing token, raised each time another holder
-- takes the lease over (never on a renewal): every write a payout job makes proves, in its own database
-- transaction, that the token it read at the start of its round is still the lease's (jobs/lease.ts), so
-- a round that stalled past its lease and resumes writes nothing once another instance has taken over.
ALTER TABLE job_leases ADD COLUMN fence bigint NOT NULL DEFAULT 1;
