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

  async create(name: string): Promise<MerchantCredentials & { name: string }> {
    const { id, apiKey } = newMerchantIdentity(this.mode);
    await this.db.query('INSERT INTO merchants (id, name, api_key) VALUES ($1, $2, $3)', [id, name, apiKey]);
    return { name, ...this.secrets.credentials({ id, apiKey, secretVersion: 1 }) };
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
