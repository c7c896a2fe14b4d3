/**
 * Secrets at rest (signing keys in auth, webhook secrets in notifier; docs/operations.md, "The
 * secrets key"): AES-256-GCM with the deployment's SECRETS_KEY, a random 96-bit IV per value, and
 * the row the value belongs to as additional data, so a ciphertext copied into another row does
 * not decrypt. A stored value reads
 *
 *   enc:v1:<key id>:<base64url IV>:<base64url ciphertext>:<base64url tag>
 *
 * where the key id is the first 8 bytes (hex) of sha256 over the key: it names which key sealed
 * the value without revealing anything about it, so the key can be rotated (the new key in
 * SECRETS_KEY, the old ones in SECRETS_KEY_PREVIOUS until every value was sealed again).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

const PREFIX = 'enc';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Length of a SECRETS_KEY once decoded. */
export const SECRETS_KEY_BYTES = 32;

/** A value could not be opened: not our format, sealed by a key we lack, or altered. */
export class SecretCipherError extends Error {
  override readonly name = 'SecretCipherError';
}

/** What to do about stored secrets the configured keys cannot open (for start-up failures). */
export const SECRETS_KEY_REMEDY =
  'start with the SECRETS_KEY they were stored with (or put it in SECRETS_KEY_PREVIOUS); `npm start` keeps its key in DATA_DIR/secrets.key (docs/operations.md, "The secrets key")';

/** The key bytes of a base64 (or base64url) SECRETS_KEY; null unless it decodes to exactly 32 bytes. */
export function decodeSecretsKey(text: string): Buffer | null {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return null;
  const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === SECRETS_KEY_BYTES ? bytes : null;
}

const KEY_HINT = `must be ${SECRETS_KEY_BYTES} bytes in base64 (e.g. \`openssl rand -base64 32\`)`;

/** SECRETS_KEY in a service's config shape: required, 32 bytes base64. */
export const envSecretsKey = () =>
  z.string({ error: `is required: the key secrets are encrypted with at rest; ${KEY_HINT}` }).refine((v) => decodeSecretsKey(v) !== null, KEY_HINT);

/** SECRETS_KEY_PREVIOUS: earlier keys (comma-separated) that still open values, never seal; unset: none. */
export const envSecretsKeysPrevious = () =>
  z
    .string()
    .refine((v) => v.split(',').every((k) => k.trim() === '' || decodeSecretsKey(k) !== null), `each key ${KEY_HINT}`)
    .transform((v) =>
      v
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
    )
    .optional();

function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** Seals and opens secrets with the current key; opens values of the previous keys too. */
export class SecretCipher {
  private readonly currentId: string;
  private readonly keys = new Map<string, Buffer>();

  /** `current` and `previous` as SECRETS_KEY spells them (base64, 32 bytes each). */
  constructor(current: string, previous: readonly string[] = []) {
    const key = decodeSecretsKey(current);
    if (!key) throw new Error(`SECRETS_KEY ${KEY_HINT}`);
    this.currentId = keyIdOf(key);
    for (const p of previous) {
      const old = decodeSecretsKey(p);
      if (!old) throw new Error(`SECRETS_KEY_PREVIOUS: each key ${KEY_HINT}`);
      this.keys.set(keyIdOf(old), old);
    }
    this.keys.set(this.currentId, key);
  }

  /** True when `value` has the form of a sealed value (whichever key sealed it). */
  static isSealed(value: string): boolean {
    return value.startsWith(`${PREFIX}:${VERSION}:`);
  }

  /** True when `value` was sealed with the current key (nothing to re-seal). */
  isCurrent(value: string): boolean {
    return value.startsWith(`${PREFIX}:${VERSION}:${this.currentId}:`);
  }

  /** Seals `plain` for the row named by `context` (e.g. `auth.signing_key:<kid>`). */
  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const b = (x: Buffer) => x.toString('base64url');
    return [PREFIX, VERSION, this.currentId, b(iv), b(body), b(cipher.getAuthTag())].join(':');
  }

  /** Opens a value sealed for `context`; throws {@link SecretCipherError} otherwise. */
  open(value: string, context: string): string {
    const parts = value.split(':');
    if (parts.length !== 6 || parts[0] !== PREFIX || parts[1] !== VERSION) throw new SecretCipherError('not a sealed value');
    const key = this.keys.get(parts[2]!);
    if (!key) throw new SecretCipherError(`sealed with key ${parts[2]}, which is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS`);
    const iv = Buffer.from(parts[3]!, 'base64url');
    const body = Buffer.from(parts[4]!, 'base64url');
    const tag = Buffer.from(parts[5]!, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretCipherError('malformed sealed value');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch (err) {
      throw new SecretCipherError('sealed value does not open (altered, or sealed for another row)', { cause: err });
    }
  }
}
