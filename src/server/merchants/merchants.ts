import type { Database } from '../db/database.js';
import { newMerchantIdentity, type MerchantCredentials, type Mode, type SecretKeeper } from './secrets.js';

export interface Merchant {
  id: string;
  name: string;
  /** The name payers see on the payment page, or null: none shown. */
  displayName: string | null;
  apiKey: string;
  secretVersion: number;
  /**
   * The secret version before the last rotation while its grace period runs (the database's clock, at
   * the read): its API secret is still accepted and callbacks carry its signature too. Else undefined.
   */
  previousSecretVersion: number | undefined;
  /** How long after the read the previous version still works, in ms (0 without one). */
  previousSecretRemainingMs: number;
}

interface MerchantRow {
  id: string;
  name: string;
  display_name: string | null;
  api_key: string;
  secret_version: number;
  previous_secret_version: number | null;
  previous_remaining_ms: number | null;
}

const toMerchant = (row: MerchantRow): Merchant => ({
  id: row.id,
  name: row.name,
  displayName: row.display_name,
  apiKey: row.api_key,
  secretVersion: row.secret_version,
  previousSecretVersion: row.previous_secret_version ?? undefined,
  previousSecretRemainingMs: row.previous_secret_version === null ? 0 : Math.max(0, Number(row.previous_remaining_ms)),
});

/** A merchant's columns, the previous secret version only while its grace period runs by the database's clock. */
const MERCHANT_COLUMNS = `id, name, display_name, api_key, secret_version,
  CASE WHEN previous_secret_until > now() THEN previous_secret_version END AS previous_secret_version,
  CASE WHEN previous_secret_until > now() THEN (extract(epoch FROM previous_secret_until - now()) * 1000)::float8 END AS previous_remaining_ms`;

/** The longest grace period of a rotation's old secrets: 7 days. */
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

export interface RotatedSecrets extends MerchantCredentials {
  name: string;
  /** Until when the old API and callback secrets keep working (the database's clock); null: not at all. */
  previousSecretsValidUntil: string | null;
}

/** `merchants create` with a name another merchant has: names tell the operator's merchants apart. */
export class DuplicateMerchantNameError extends Error {
  constructor(
    readonly merchantName: string,
    /** The API key of the merchant that has the name. */
    readonly apiKey: string,
  ) {
    super(`a merchant named ${merchantName} exists`);
  }
}

export class Merchants {
  /** Told of each merchant whose secrets changed here (a rotation, an ended grace), by API key. */
  private readonly secretsChangedListeners = new Set<(apiKey: string) => void>();

  constructor(
    private readonly db: Database,
    private readonly secrets: SecretKeeper,
    private readonly mode: Mode,
  ) {}

  /**
   * Calls `listener` with the API key of each merchant whose secrets change through this instance, once
   * the change is committed: the request authenticator forgets what it cached of the merchant.
   */
  onSecretsChanged(listener: (apiKey: string) => void): void {
    this.secretsChangedListeners.add(listener);
  }

  private secretsChanged(apiKey: string): void {
    for (const listener of this.secretsChangedListeners) listener(apiKey);
  }

  /**
   * `displayName`: the name payers see on the payment page (none shown without one). `uniqueName`: refuse
   * a name another merchant has (DuplicateMerchantNameError), as `merchants create` does; two such creates
   * at once take turns (an advisory lock of the transaction), so the second sees the first's row.
   */
  async create(name: string, displayName?: string, { uniqueName = false } = {}): Promise<MerchantCredentials & { name: string; displayName?: string }> {
    const { id, apiKey } = newMerchantIdentity(this.mode);
    const insert = 'INSERT INTO merchants (id, name, api_key, display_name) VALUES ($1, $2, $3, $4)';
    if (!uniqueName) await this.db.query(insert, [id, name, apiKey, displayName ?? null]);
    else {
      await this.db.transaction(async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(hashtext('partner-api: merchant names'))");
        const [existing] = await tx.query<{ api_key: string }>('SELECT api_key FROM merchants WHERE name = $1 ORDER BY created_at LIMIT 1', [name]);
        if (existing) throw new DuplicateMerchantNameError(name, existing.api_key);
        await tx.query(insert, [id, name, apiKey, displayName ?? null]);
      });
    }
    return { name, ...(displayName === undefined ? {} : { displayName }), ...this.secrets.credentials({ id, apiKey, secretVersion: 1 }) };
  }

  /** Sets (or with null, removes) the name payers see on the payment page. Undefined when no merchant has this API key. */
  async setDisplayName(apiKey: string, displayName: string | null): Promise<{ merchantId: string; name: string; displayName: string | null } | undefined> {
    const [row] = await this.db.query<{ id: string; name: string; display_name: string | null }>(
      'UPDATE merchants SET display_name = $2 WHERE api_key = $1 RETURNING id, name, display_name',
      [apiKey, displayName],
    );
    return row && { merchantId: row.id, name: row.name, displayName: row.display_name };
  }

  /**
   * New API and callback secrets for a merchant (its secret version moves on), working at once. The
   * old ones keep working for `graceSeconds` (0 to 7 days) by the database's clock, then stop; with 0
   * they stop at once. A rotation during a grace period ends that grace: only the secrets just replaced
   * keep working beside the new ones. Undefined when no merchant has this API key.
   */
  async rotateSecrets(apiKey: string, graceSeconds: number): Promise<RotatedSecrets | undefined> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) throw new RangeError(`a grace period is 0 to ${MAX_GRACE_SECONDS} s`);
    // Every right-hand side reads the row as it was: the previous version is the one replaced.
    const [row] = await this.db.query<{ id: string; name: string; api_key: string; secret_version: number; previous_secret_until: Date | null }>(
      `UPDATE merchants
          SET secret_version = secret_version + 1,
              previous_secret_version = CASE WHEN $2::integer > 0 THEN secret_version END,
              previous_secret_until = CASE WHEN $2::integer > 0 THEN now() + $2::integer * interval '1 second' END
        WHERE api_key = $1
       RETURNING id, name, api_key, secret_version, previous_secret_until`,
      [apiKey, graceSeconds],
    );
    if (!row) return undefined;
    this.secretsChanged(apiKey);
    const credentials = this.secrets.credentials({ id: row.id, apiKey: row.api_key, secretVersion: row.secret_version });
    return { name: row.name, ...credentials, previousSecretsValidUntil: row.previous_secret_until && new Date(row.previous_secret_until).toISOString() };
  }

  /**
   * Ends a rotation's grace period now (a leaked old secret): only the current secrets work from here
   * on. `ended` says whether a grace period was running. Undefined when no merchant has this API key.
   */
  async endGrace(apiKey: string): Promise<{ name: string; ended: boolean } | undefined> {
    const [row] = await this.db.query<{ name: string; ended: boolean }>(
      `UPDATE merchants m SET previous_secret_version = NULL, previous_secret_until = NULL
         FROM (SELECT id, coalesce(previous_secret_until > now(), false) AS ended FROM merchants WHERE api_key = $1 FOR UPDATE) before
        WHERE m.id = before.id
       RETURNING m.name, before.ended`,
      [apiKey],
    );
    if (row) this.secretsChanged(apiKey);
    return row && { name: row.name, ended: row.ended };
  }

  async byApiKey(apiKey: string): Promise<Merchant | undefined> {
    const [row] = await this.db.query<MerchantRow>(`SELECT ${MERCHANT_COLUMNS} FROM merchants WHERE api_key = $1`, [apiKey]);
    return row && toMerchant(row);
  }

  async byName(name: string): Promise<Merchant | undefined> {
    const [row] = await this.db.query<MerchantRow>(`SELECT ${MERCHANT_COLUMNS} FROM merchants WHERE name = $1 ORDER BY created_at LIMIT 1`, [name]);
    return row && toMerchant(row);
  }

  credentials(merchant: Merchant): MerchantCredentials {
    return this.secrets.credentials(merchant);
  }

  /** The secrets of the version before the last rotation while its grace period runs, else undefined. */
  previousCredentials(merchant: Merchant): MerchantCredentials | undefined {
    const version = merchant.previousSecretVersion;
    return version === undefined ? undefined : this.secrets.credentials({ ...merchant, secretVersion: version });
  }
}
