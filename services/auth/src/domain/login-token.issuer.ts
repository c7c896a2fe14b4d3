/**
 * Login tokens: ES256 JWTs with the signing key's kid in the header and the user id as `sub`.
 */
import { SignJWT, jwtVerify } from 'jose';
import { AppError } from '@reelbase/lib-platform';
import { SIGNING_ALG, type SigningKeyRing } from './signing-key.ring.js';

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
    return { token, expiresIn: this.ttlSeconds };
  }

  /** The user id of a valid token; anything else is `unauthenticated`. */
  async verify(token: string): Promise<string> {
    try {
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
      return payload.sub;
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('unauthenticated', 'invalid or expired token', { cause: err });
    }
  }
}
