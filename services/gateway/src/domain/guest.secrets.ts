/**
 * What the gateway hands a share-link guest in place of real keys and passwords (docs/review.md,
 * "Security decisions"), sealed with keys every gateway replica derives alike from the shared
 * INTERNAL_AUTH_SECRET (HKDF-SHA256, one label per use), so any replica opens what another issued:
 *
 * - **Guest media keys** `sh/<86 base64url>/<name>`: AES-256-GCM over the link id (16 bytes), an
 *   expiry (Unix seconds, 4 bytes) and the 128 random bits of the `rv/` key it stands for; the
 *   name (`proxy.mp4`, `proxy.jpg`, `thumb.jpg`) is authenticated data. The GCM tag is the
 *   signature: a key changed in any bit does not open. The guest never sees the `rv/` key.
 * - **Guest sessions**: the link id and an expiry with their HMAC-SHA256, base64url (70
 *   characters), given after one correct password and taken instead of it until they expire.
 *
 * Neither says whether the link is still live: whoever takes one asks records each time.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { isUuid, uuidFromBytes, uuidToBytes, type CallContext } from '@reelbase/lib-platform';

const SALT = 'reelbase share guests';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Link id, expiry, the rv key's 128 bits. */
const PLAIN_BYTES = 16 + 4 + 16;
const SEALED_BYTES = NONCE_BYTES + PLAIN_BYTES + TAG_BYTES;
const SESSION_BYTES = 16 + 4 + 32;
/** The names of the objects a guest may be given. */
const GUEST_NAMES: ReadonlySet<string> = new Set(['proxy.mp4', 'proxy.jpg', 'thumb.jpg']);
const RV_KEY = /^rv\/([0-9a-f]{32})\/(proxy\.mp4|proxy\.jpg|thumb\.jpg)$/;

/** The context of a share-link guest's calls: the request, and a principal that is no user. */
export const guestContext = (ctx: CallContext): CallContext => ({ requestId: ctx.requestId, principal: { userId: '', role: 'Guest', authKind: 'guest' } });

/** An opened guest media key: the link it was issued for and the object it stands for. */
export interface GuestMedia {
  linkId: string;
  key: string;
}

export class GuestSecrets {
  private readonly sealKey: Buffer;
  private readonly sessionKey: Buffer;

  constructor(
    secret: string,
    private readonly now: () => number = Date.now,
  ) {
    this.sealKey = Buffer.from(hkdfSync('sha256', secret, SALT, 'guest media keys v1', 32));
    this.sessionKey = Buffer.from(hkdfSync('sha256', secret, SALT, 'guest sessions v1', 32));
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /**
   * The guest key standing for `key` (a proxy or thumbnail, `rv/<32 hex>/<name>`) on link `linkId`
   * for `ttlSeconds`; undefined for any other key (nothing else is ever handed to a guest).
   */
  mediaKey(linkId: string, key: string, ttlSeconds: number): string | undefined {
    const m = RV_KEY.exec(key);
    if (!m || !isUuid(linkId)) return undefined;
    const name = m[2]!;
    const plain = Buffer.alloc(PLAIN_BYTES);
    uuidToBytes(linkId).copy(plain, 0);
    plain.writeUInt32BE(Math.min(0xffffffff, this.seconds() + ttlSeconds), 16);
    Buffer.from(m[1]!, 'hex').copy(plain, 20);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(name));
    const sealed = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return `sh/${sealed.toString('base64url')}/${name}`;
  }

  /** The link and `rv/` key behind a guest key; undefined when forged, altered, malformed or expired. */
  openMediaKey(guestKey: string): GuestMedia | undefined {
    const parts = guestKey.split('/');
    if (parts.length !== 3 || parts[0] !== 'sh' || !GUEST_NAMES.has(parts[2]!)) return undefined;
    const sealed = Buffer.from(parts[1]!, 'base64url');
    if (sealed.length !== SEALED_BYTES || sealed.toString('base64url') !== parts[1]) return undefined;
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(parts[2]!));
      decipher.setAuthTag(sealed.subarray(SEALED_BYTES - TAG_BYTES));
      plain = Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, SEALED_BYTES - TAG_BYTES)), decipher.final()]);
    } catch {
      return undefined;
    }
    if (plain.readUInt32BE(16) <= this.seconds()) return undefined;
    return { linkId: uuidFromBytes(plain.subarray(0, 16)), key: `rv/${plain.subarray(20).toString('hex')}/${parts[2]}` };
  }

  /** A session for link `linkId`, valid for `ttlSeconds`. */
  session(linkId: string, ttlSeconds: number): { token: string; expiresAt: string } {
    const body = Buffer.alloc(20);
    uuidToBytes(linkId).copy(body, 0);
    const exp = Math.min(0xffffffff, this.seconds() + ttlSeconds);
    body.writeUInt32BE(exp, 16);
    const mac = createHmac('sha256', this.sessionKey).update(body).digest();
    return { token: Buffer.concat([body, mac]).toString('base64url'), expiresAt: new Date(exp * 1000).toISOString() };
  }

  /** The link id of a session that is genuine and not expired; undefined otherwise. */
  openSession(token: string | undefined): string | undefined {
    if (token === undefined || token.length !== Math.ceil((SESSION_BYTES * 4) / 3)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length !== SESSION_BYTES || raw.toString('base64url') !== token) return undefined;
    const body = raw.subarray(0, 20);
    const mac = createHmac('sha256', this.sessionKey).update(body).digest();
    if (!timingSafeEqual(mac, raw.subarray(20))) return undefined;
    if (body.readUInt32BE(16) <= this.seconds()) return undefined;
    return uuidFromBytes(body.subarray(0, 16));
  }
}
