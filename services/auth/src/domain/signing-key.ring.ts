/**
 * The JWT signing keys held in memory. The newest unretired key signs; every unretired key
 * verifies. A token naming a kid we do not know triggers a reload, because another replica
 * may have rotated; reloads are single-flight and rate-limited so forged kids cannot flood
 * the database.
 */
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { newId } from '@reelbase/lib-platform';

export interface StoredSigningKey {
  kid: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
}

/** Persistence of signing keys. */
export interface SigningKeyStore {
  /** Unretired keys, newest first. */
  listUsable(): Promise<StoredSigningKey[]>;
  insert(key: StoredSigningKey): Promise<void>;
  /** Inserts the generated key only if no unretired key exists. */
  ensureOne(generate: () => Promise<StoredSigningKey>): Promise<void>;
}

export const SIGNING_ALG = 'ES256';
const MIN_RELOAD_INTERVAL_MS = 1000;

interface LoadedKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** A fresh ES256 key pair as JWKs with a new kid. */
export async function generateSigningKey(): Promise<StoredSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = newId();
  const [priv, pub] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
  return { kid, privateJwk: { ...priv, kid, alg: SIGNING_ALG }, publicJwk: { ...pub, kid, alg: SIGNING_ALG } };
}

export class SigningKeyRing {
  private keys = new Map<string, LoadedKey>();
  private signing: LoadedKey | undefined;
  private reloading: Promise<void> | undefined;
  private lastReload = 0;

  constructor(
    private readonly store: SigningKeyStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Creates the first key if there is none, then loads every usable key. */
  async init(): Promise<void> {
    await this.store.ensureOne(generateSigningKey);
    await this.load();
  }

  /** Adds a new key that signs from now on; older keys keep verifying. Returns its kid. */
  async rotate(): Promise<string> {
    const key = await generateSigningKey();
    await this.store.insert(key);
    await this.load();
    return key.kid;
  }

  /** The key new tokens are signed with. */
  current(): { kid: string; privateKey: CryptoKey } {
    if (!this.signing) throw new Error('signing keys not loaded');
    return this.signing;
  }

  /** The public key for `kid`, or null when no usable key has that id. */
  async verificationKey(kid: string | undefined): Promise<CryptoKey | null> {
    if (!kid) return null;
    const known = this.keys.get(kid);
    if (known) return known.publicKey;
    if (this.now() - this.lastReload >= MIN_RELOAD_INTERVAL_MS || this.reloading) await this.reload();
    return this.keys.get(kid)?.publicKey ?? null;
  }

  private reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async load(): Promise<void> {
    this.lastReload = this.now();
    const rows = await this.store.listUsable();
    const loaded = await Promise.all(
      rows.map(async (row) => {
        const cached = this.keys.get(row.kid);
        if (cached) return cached;
        const [privateKey, publicKey] = await Promise.all([
          importJWK(row.privateJwk as JWK, SIGNING_ALG) as Promise<CryptoKey>,
          importJWK(row.publicJwk as JWK, SIGNING_ALG) as Promise<CryptoKey>,
        ]);
        return { kid: row.kid, privateKey, publicKey };
      }),
    );
    if (loaded.length === 0) throw new Error('no usable signing key');
    this.keys = new Map(loaded.map((k) => [k.kid, k]));
    this.signing = loaded[0];
  }
}
