/**
 * User passwords (docs/architecture.md, "Auth decisions"): lib-platform's scrypt hasher, plus a
 * verification against a dummy hash that takes as long as a real one, for unknown emails.
 */
import { randomBytes } from 'node:crypto';
import { ScryptHasher } from '@reelbase/lib-platform';

/** Hashes and verifies passwords at cost N. */
export class PasswordHasher extends ScryptHasher {
  private dummy: Promise<string> | undefined;

  /**
   * Spends the same time as a real verification and returns false: used for unknown
   * emails so response times do not reveal which emails have an account.
   */
  async verifyDummy(password: string): Promise<false> {
    await this.verify(password, await this.dummyHash());
    return false;
  }

  /** Computes the dummy hash ahead of the first login. */
  async warm(): Promise<void> {
    await this.dummyHash();
  }

  private dummyHash(): Promise<string> {
    this.dummy ??= this.hash(randomBytes(18).toString('base64url'));
    return this.dummy;
  }
}
