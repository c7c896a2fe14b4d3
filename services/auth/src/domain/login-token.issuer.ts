/**
 * Login tokens: ES256 JWTs with the signing key's kid in the header and the user id as `sub`.
 * Only the canonical spelling is issued and accepted (login-token.form.ts), and no token may
 * live longer than the configured lifetime (`JWT_TTL_SECONDS`), whatever its `exp` says.
 */
import { SignJWT, decodeProtectedHeader, jwtVerify } from 'jose';
import { AppError } from '@reelbase/lib-platform';
import { nonCanonicalReason, withLowS } from './login-token.form.js';
import { SIGNING_ALG, type SigningKeyRing } from './signing-key.ring.js';

/** Clock difference between replicas tolerated for `iat` and for `exp` measured from now. */
export const CLOCK_SKEW_SECONDS = 60;

export interface IssuedToken {
  token: string;
  expiresIn: number;
}

export class LoginTokenIssuer {
  constructor(
    private readonly ring: SigningKeyRing,
    private readonly issuer: string,
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  async issue(userId: string): Promise<IssuedToken> {
    const { kid, privateKey } = this.ring.current();
    const iat = Math.floor(this.now() / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(this.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .sign(privateKey);
    // WebCrypto picks either of the signature's two S values; issue the one we accept.
    return { token: withLowS(token), expiresIn: this.ttlSeconds };
  }

  /**
   * When the key that signed `token` (already verified) retires, in ms since the epoch; undefined
   * when it is not scheduled to. Such a token stops being valid then, whatever its `exp` says.
   */
  keyRetiresAt(token: string): number | undefined {
    return this.ring.retiresAt(decodeProtectedHeader(token).kid);
  }

  /** The user id of a valid token; anything else is `unauthenticated`. */
  async verify(token: string): Promise<string> {
    try {
      const odd = nonCanonicalReason(token);
      if (odd) throw new Error(`token not canonical: ${odd}`);
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = await this.ring.verificationKey(header.kid);
          if (!key) throw new Error('unknown signing key');
          return key;
        },
        {
          algorithms: [SIGNING_ALG],
          issuer: this.issuer,
          requiredClaims: ['sub', 'exp', 'iat'],
          currentDate: new Date(this.now()),
        },
      );
      if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('no subject');
      // A validly signed token may still claim a lifetime this service never grants.
      const now = Math.floor(this.now() / 1000);
      const { iat, exp } = payload as { iat: number; exp: number };
      if (iat > now + CLOCK_SKEW_SECONDS) throw new Error('issued in the future');
      if (exp - iat > this.ttlSeconds || exp > now + this.ttlSeconds + CLOCK_SKEW_SECONDS) {
        throw new Error('lifetime longer than JWT_TTL_SECONDS');
      }
      return payload.sub;
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('unauthenticated', 'invalid or expired token', { cause: err });
    }
  }
}
