/**
 * Schema `auth`, migration 4 (docs/api-notes.md, Authentication): private signing keys are
 * stored sealed (`private_key_sealed`; rows written before are sealed at start-up, when the
 * SECRETS_KEY is known, and their `private_jwk` emptied), API keys may expire, and
 * `session_revocation` holds, per user, the time before which their login tokens are refused.
 */
import { Migration } from '@mikro-orm/migrations';

export class CredentialLifetimesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "auth"."signing_key" add column if not exists "private_key_sealed" text null');
    this.addSql('alter table "auth"."signing_key" alter column "private_jwk" drop not null');
    this.addSql('alter table "auth"."api_key" add column if not exists "expires_at" timestamptz null');
    this.addSql(`create table if not exists "auth"."session_revocation" (
      "user_id" uuid primary key,
      "revoked_before" timestamptz not null
    )`);
  }
}
