/**
 * Internal calls prove who sends them and what they ask (docs/architecture.md, "Internal calls").
 * A service trusts the `x-principal-*` metadata of a call only when it carries a short-lived
 * assertion signed with the INTERNAL_AUTH_SECRET every service of one deployment shares:
 *
 *   x-internal-auth: v2.<expiry, ms since the epoch>.<nonce>.<base64url HMAC-SHA256>
 *
 * The HMAC covers the method path, the request id, every principal field as sent, the expiry,
 * the nonce and the sha256 of the request message as it travels (its protobuf bytes), so a
 * captured assertion cannot be moved to another principal, method or request body, and is
 * worthless after {@link INTERNAL_AUTH_TTL_MS}. Each server process accepts a nonce once: it
 * remembers the nonces of the assertions it accepted until they expire (a bounded in-memory set),
 * so the very same call cannot be replayed to it either. A replay sent to another replica of the
 * same service within those seconds is not caught (the sets are per process); it would repeat
 * the identical request of the identical caller, and every write that matters is guarded by its
 * own precondition or idempotency. A client-streaming call (an upload) cannot have its messages in
 * the header: its assertion covers everything but the messages (marked as a stream instead of a
 * digest), so it is single-use per replica like every other. Signatures are compared in constant time.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { PRINCIPAL_METADATA_KEYS } from '../context.js';

/** Metadata key of the assertion. */
export const INTERNAL_AUTH_KEY = 'x-internal-auth';
/** How long an assertion is valid after it was made. */
export const INTERNAL_AUTH_TTL_MS = 15_000;
/** Shortest INTERNAL_AUTH_SECRET accepted. */
export const INTERNAL_AUTH_MIN_SECRET_BYTES = 32;
/** Tolerated clock difference between the caller's and the callee's hosts. */
const CLOCK_SKEW_MS = 5_000;
const VERSION = 'v2';
/** Most nonces a server process remembers; beyond it the oldest (nearly expired) are forgotten first. */
const MAX_NONCES = 1_000_000;

/** What the assertion of a client-streaming call covers instead of a message digest. */
export const STREAM_BODY = 'stream';

/** Start of the details of a call refused for its assertion (status UNAUTHENTICATED). */
export const INTERNAL_AUTH_REFUSED = 'internal call refused';

/** Why an incoming call's assertion was not accepted. */
export type InternalAuthFailure = 'missing' | 'malformed' | 'expired' | 'bad signature' | 'replayed';

/** The digest of a request message as the assertion covers it: base64url sha256 of its bytes. */
export function requestDigest(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'base64url');
}

/**
 * HMAC-SHA256 (RFC 2104) over two one-shot hashes: the same bytes as `createHmac('sha256', key)`
 * at a fifth of the cost, which matters at two HMACs per internal call.
 */
export class HmacSha256 {
  private readonly inner: Buffer;
  private readonly outer: Buffer;

  constructor(key: Buffer) {
    const block = Buffer.alloc(64);
    (key.length > 64 ? hash('sha256', key, 'buffer') : key).copy(block);
    this.inner = Buffer.from(block.map((b) => b ^ 0x36));
    this.outer = Buffer.from(block.map((b) => b ^ 0x5c));
  }

  digest(message: string): Buffer {
    const innerHash = hash('sha256', Buffer.concat([this.inner, Buffer.from(message, 'utf8')]), 'buffer');
    return hash('sha256', Buffer.concat([this.outer, innerHash]), 'buffer');
  }
}

/** True when `secret` is long enough to sign internal calls with. */
export function isInternalAuthSecret(secret: string): boolean {
  return Buffer.byteLength(secret, 'utf8') >= INTERNAL_AUTH_MIN_SECRET_BYTES;
}

/**
 * Nonces seen within their assertion's lifetime, oldest first. Entries go once their expiry has
 * passed (an expired assertion is refused anyway), so the set holds about (calls per second) x
 * (lifetime + skew) entries, capped at {@link MAX_NONCES}.
 */
class NonceSet {
  private readonly seen = new Map<string, number>();

  /** Remembers `nonce` until `expiry`; false when it was seen already. */
  add(nonce: string, expiry: number, now: number): boolean {
    for (const [n, until] of this.seen) {
      if (until >= now) break;
      this.seen.delete(n);
    }
    if (this.seen.has(nonce)) return false;
    if (this.seen.size >= MAX_NONCES) this.seen.delete(this.seen.keys().next().value as string);
    this.seen.set(nonce, expiry);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}

/** Signs outgoing and checks incoming calls with one shared secret. */
export class InternalAuth {
  private readonly hmac: HmacSha256;
  private readonly nonces = new NonceSet();
  /** Nonces are this process's random prefix and a counter: unique, and cheap to make. */
  private readonly noncePrefix = randomBytes(9).toString('base64url');
  private counter = 0;

  constructor(
    secret: string,
    private readonly now: () => number = Date.now,
  ) {
    if (!isInternalAuthSecret(secret)) {
      throw new Error(`INTERNAL_AUTH_SECRET must be at least ${INTERNAL_AUTH_MIN_SECRET_BYTES} bytes`);
    }
    this.hmac = new HmacSha256(Buffer.from(secret, 'utf8'));
  }

  /**
   * Adds the assertion for a call of `path` (e.g. `/reelbase.records.v1.RecordsService/GetRecord`)
   * carrying `md`, with `body` the request message's bytes ({@link requestDigest} of them), or
   * {@link STREAM_BODY} for a client-streaming call.
   */
  sign(md: Metadata, path: string, body: Uint8Array | typeof STREAM_BODY): void {
    const expiry = this.now() + INTERNAL_AUTH_TTL_MS;
    const nonce = `${this.noncePrefix}${(this.counter++).toString(36)}`;
    const digest = body === STREAM_BODY ? STREAM_BODY : requestDigest(body);
    md.set(INTERNAL_AUTH_KEY, `${VERSION}.${expiry}.${nonce}.${this.mac(md, path, expiry, nonce, digest).toString('base64url')}`);
  }

  /**
   * Checks the assertion of an incoming call of `path` whose request message has `digest`
   * ({@link requestDigest}, or {@link STREAM_BODY} for a client stream); null when it is valid.
   * A valid assertion is accepted once: its nonce is remembered until it expires.
   */
  verify(md: Metadata, path: string, digest: string): InternalAuthFailure | null {
    const values = md.get(INTERNAL_AUTH_KEY);
    if (values.length === 0) return 'missing';
    if (values.length > 1) return 'malformed';
    const parts = String(values[0]).split('.');
    if (parts.length !== 4 || parts[0] !== VERSION || !/^\d{1,16}$/.test(parts[1]!) || !/^[A-Za-z0-9_-]{1,64}$/.test(parts[2]!)) return 'malformed';
    const expiry = Number(parts[1]);
    const nonce = parts[2]!;
    const now = this.now();
    if (expiry < now || expiry > now + INTERNAL_AUTH_TTL_MS + CLOCK_SKEW_MS) return 'expired';
    const given = Buffer.from(parts[3]!, 'base64url');
    const expected = this.mac(md, path, expiry, nonce, digest);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad signature';
    if (!this.nonces.add(nonce, expiry, now)) return 'replayed';
    return null;
  }

  /** Nonces remembered now (for tests and metrics). */
  get remembered(): number {
    return this.nonces.size;
  }

  private mac(md: Metadata, path: string, expiry: number, nonce: string, digest: string): Buffer {
    // Every field as it travels (the first value, which is the one read), unambiguously joined.
    const fields = PRINCIPAL_METADATA_KEYS.map((k) => {
      const v = md.get(k);
      return v.length ? [v.length, String(v[0])] : null;
    });
    return this.hmac.digest(JSON.stringify([VERSION, path, expiry, nonce, digest, fields]));
  }
}
