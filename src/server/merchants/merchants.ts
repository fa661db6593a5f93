import type { Database } from '../db/database.js';
import { newMerchantIdentity, type MerchantCredentials, type Mode, type SecretKeeper } from './secrets.js';

export interface Merchant {
  id: string;
  name: string;
  apiKey: string;
  secretVersion: number;
}

interface MerchantRow {
  id: string;
  name: string;
  api_key: string;
  secret_version: number;
}

const toMerchant = (row: MerchantRow): Merchant => ({
  id: row.id,
  name: row.name,
  apiKey: row.api_key,
  secretVersion: row.secret_version,
});

export class Merchants {
  constructor(
    private readonly db: Database,
    private readonly secrets: SecretKeeper,
    private readonly mode: Mode,
  ) {}

  /** `displayName`: the name payers see on the payment page (none shown without one). */
  async create(name: string, displayName?: string): Promise<MerchantCredentials & { name: string; displayName?: string }> {
    const { id, apiKey } = newMerchantIdentity(this.mode);
    await this.db.query('INSERT INTO merchants (id, name, api_key, display_name) VALUES ($1, $2, $3, $4)', [id, name, apiKey, displayName ?? null]);
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
   * New API and callback secrets for a merchant (its secret version moves on); the old ones stop
   * working. Undefined when no merchant has this API key.
   */
  async rotateSecrets(apiKey: string): Promise<(MerchantCredentials & { name: string }) | undefined> {
    const [row] = await this.db.query<MerchantRow>(
      'UPDATE merchants SET secret_version = secret_version + 1 WHERE api_key = $1 RETURNING id, name, api_key, secret_version',
      [apiKey],
    );
    return row && { name: row.name, ...this.credentials(toMerchant(row)) };
  }

  async byApiKey(apiKey: string): Promise<Merchant | undefined> {
    const [row] = await this.db.query<MerchantRow>('SELECT id, name, api_key, secret_version FROM merchants WHERE api_key = $1', [apiKey]);
    return row && toMerchant(row);
  }

  async byName(name: string): Promise<Merchant | undefined> {
    const [row] = await this.db.query<MerchantRow>(
      'SELECT id, name, api_key, secret_version FROM merchants WHERE name = $1 ORDER BY created_at LIMIT 1',
      [name],
    );
    return row && toMerchant(row);
  }

  credentials(merchant: Merchant): MerchantCredentials {
    return this.secrets.credentials(merchant);
  }
}
