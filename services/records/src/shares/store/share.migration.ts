/**
 * Share links (docs/review.md): the token is kept only as its SHA-256 digest (unique, the
 * lookup key), the password only as a scrypt hash. Also an index for the latest reviewable of a
 * version (live Representations by `data.version.id`), read when a guest opens a link.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsShareLinksMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists records.share_link (
        id uuid primary key,
        playlist_id uuid not null,
        token_digest bytea not null,
        token_prefix text not null,
        password_hash text,
        expires_at timestamptz,
        can_comment boolean not null,
        created_by uuid,
        created_at timestamptz not null default clock_timestamp(),
        revoked_at timestamptz,
        constraint share_link_token_digest_key unique (token_digest),
        constraint share_link_token_digest_len check (octet_length(token_digest) = 32)
      )`,
    );
    this.addSql('create index if not exists share_link_playlist_idx on records.share_link (playlist_id, created_at desc)');
    this.addSql(
      `create index if not exists record_representation_version_idx on records.record ((data->'version'->>'id'), created_at)
        where entity_type = 'Representation' and retired_at is null`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists records.record_representation_version_idx');
    this.addSql('drop table if exists records.share_link');
  }
}
