// Merchant secrets are never stored: each is an HMAC of the server's master key over the merchant's
// public identifiers and a version. The database alone reveals no secret, and the operator can
// print a merchant's credentials again from the master key. A new secret_version rotates both
// (`partner-api merchants rotate-secrets`); the version before keeps working during the rotation's
// grace period (merchants.previous_secret_version until previous_secret_until), derived the same way.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownerOnlyDirectory } from '../db/data-directory.js';

import type { Mode } from '../config.js';

export type { Mode };

export interface MerchantCredentials {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
  callbackSecret: string;
}

export class SecretKeeper {
  constructor(private readonly masterKey: Buffer) {
    if (masterKey.length < 32) throw new Error('the master key must be at least 32 bytes');
  }

  private derive(purpose: string, subject: string, version: number): Buffer {
    return createHmac('sha256', this.masterKey).update(`${purpose}\0${subject}\0v${version}`).digest();
  }

  apiSecret(apiKey: string, version: number): string {
    const prefix = apiKey.startsWith('pk_live_') ? 'sk_live_' : 'sk_test_';
    return prefix + this.derive('api-secret', apiKey, version).toString('base64url');
  }

  callbackSecret(merchantId: string, version: number): string {
    return 'whsec_' + this.derive('callback-secret', merchantId, version).subarray(0, 24).toString('base64');
  }

  /** The key of the payment pages' link tokens (payment-page/links.ts): nothing to store, nothing to rotate apart. */
  paymentPageKey(): Buffer {
    return this.derive('payment-page', '', 1);
  }

  /** The key of the lists' and the feed's cursors (shared/cursors.ts): nothing to store, the same in every instance. */
  cursorKey(): Buffer {
    return this.derive('page-cursor', '', 1);
  }

  /** A value that identifies the master key without revealing it. */
  keyCheck(): string {
    return this.derive('key-check', '', 1).toString('hex');
  }

  credentials(merchant: { id: string; apiKey: string; secretVersion: number }): MerchantCredentials {
    return {
      merchantId: merchant.id,
      apiKey: merchant.apiKey,
      apiSecret: this.apiSecret(merchant.apiKey, merchant.secretVersion),
      callbackSecret: this.callbackSecret(merchant.id, merchant.secretVersion),
    };
  }
}

export function newMerchantIdentity(mode: Mode): { id: string; apiKey: string } {
  return { id: randomUUID(), apiKey: `pk_${mode === 'live' ? 'live' : 'test'}_${randomBytes(18).toString('base64url')}` };
}

/**
 * The sandbox keeps its master key in the data directory (created on first run, mode 0600); live
 * mode must be given SECRET_KEY so that the key never sits beside the database.
 */
export function sandboxMasterKey(dataDir: string): Buffer {
  const file = join(dataDir, 'master.key');
  ownerOnlyDirectory(dataDir); // a key in a directory another user could write may be that user's
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}
