/**
 * The JWT signing keys held in memory. The newest key signs; every key not yet retired
 * verifies. A rotation schedules the retirement of every older key for when the longest token
 * it can have signed has expired (rotation time + the token lifetime, on the database's
 * clock), or retires them at once (an emergency rotation). A key past its retirement verifies
 * nothing, on every replica, without a reload: each loaded key carries its deadline.
 *
 * A token naming a kid we do not know triggers a reload, because another replica may have
 * rotated; reloads are single-flight and rate-limited so forged kids cannot flood the
 * database. Replicas also reload when told of a rotation (NATS) and every
 * {@link SIGNING_KEY_REFRESH_MS}, so they switch to the new signing key promptly.
 */
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { newId } from '@reelbase/lib-platform';
import type { SigningKeyStore, StoredSigningKey } from './ports.js';

export const SIGNING_ALG = 'ES256';
const MIN_RELOAD_INTERVAL_MS = 1000;
/** How often a replica reloads its keys unasked (a lost rotation message costs at most this). */
export const SIGNING_KEY_REFRESH_MS = 10_000;

interface LoadedKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** When the key stops verifying (this host's clock, ms); undefined: not scheduled. */
  retiresAt?: number;
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

  /** `tokenTtlSeconds`: the longest a login token lives (JWT_TTL_SECONDS). */
  constructor(
    private readonly store: SigningKeyStore,
    private readonly now: () => number = Date.now,
    private readonly tokenTtlSeconds = 43_200,
  ) {}

  /** Creates the first key if there is none, then loads every usable key. */
  async init(): Promise<void> {
    await this.store.ensureOne(generateSigningKey);
    await this.load();
  }

  /**
   * Adds a new key that signs from now on. Older keys keep verifying until the longest token
   * they signed has expired, or (`retirePrevious`) stop at once. Returns the new kid and how
   * many older keys were retired or scheduled to retire.
   */
  async rotate(retirePrevious = false): Promise<{ kid: string; retired: number }> {
    const key = await generateSigningKey();
    const retired = await this.store.rotate(key, retirePrevious ? 0 : this.tokenTtlSeconds * 1000);
    await this.load();
    return { kid: key.kid, retired };
  }

  /** The key new tokens are signed with. */
  current(): { kid: string; privateKey: CryptoKey } {
    if (!this.signing) throw new Error('signing keys not loaded');
    return this.signing;
  }

  /** The public key for `kid`, or null when no usable key has that id. */
  async verificationKey(kid: string | undefined): Promise<CryptoKey | null> {
    if (!kid) return null;
    let key = this.keys.get(kid);
    if (!key && (this.now() - this.lastReload >= MIN_RELOAD_INTERVAL_MS || this.reloading)) {
      await this.reload();
      key = this.keys.get(kid);
    }
    if (!key) return null;
    return key.retiresAt !== undefined && key.retiresAt <= this.now() ? null : key.publicKey;
  }

  /** When the loaded key `kid` retires (this host's clock, ms); undefined when it is not scheduled or not loaded. */
  retiresAt(kid: string | undefined): number | undefined {
    return kid ? this.keys.get(kid)?.retiresAt : undefined;
  }

  /** Reads the keys again (another replica rotated); single-flight. */
  refresh(): Promise<void> {
    return this.reload();
  }

  private reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async load(): Promise<void> {
    const asked = this.now();
    this.lastReload = asked;
    const rows = await this.store.listUsable();
    const loaded = await Promise.all(
      rows.map(async (row): Promise<LoadedKey> => {
        // Measured from before the query, so the local deadline is never later than the database's.
        const retiresAt = row.retiresInMs === null || row.retiresInMs === undefined ? undefined : asked + row.retiresInMs;
        const cached = this.keys.get(row.kid);
        if (cached) return { ...cached, retiresAt };
        const [privateKey, publicKey] = await Promise.all([
          importJWK(row.privateJwk as JWK, SIGNING_ALG) as Promise<CryptoKey>,
          importJWK(row.publicJwk as JWK, SIGNING_ALG) as Promise<CryptoKey>,
        ]);
        return { kid: row.kid, privateKey, publicKey, retiresAt };
      }),
    );
    if (loaded.length === 0) throw new Error('no usable signing key');
    this.keys = new Map(loaded.map((k) => [k.kid, k]));
    // The newest key not scheduled to retire signs (the newest at all, should every key be scheduled).
    this.signing = loaded.find((k) => k.retiresAt === undefined) ?? loaded[0];
  }
}
