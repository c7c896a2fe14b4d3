/**
 * Site sync (docs/sitesync.md): the sites and one state per (representation, site). A state's
 * lease is kept only as the SHA-256 digest of its token. The partial indexes serve the claim
 * order (queued states of a site by priority, then oldest) and the leases running out; the
 * others serve the state pages by site and by project in key order.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsSiteSyncMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists records.sitesync_site (
        code text primary key,
        id uuid not null unique,
        name text not null,
        kind text not null check (kind in ('studio', 'remote', 'cloud')),
        root text,
        created_at timestamptz not null default clock_timestamp(),
        updated_at timestamptz not null default clock_timestamp()
      )`,
    );
    this.addSql(
      `create table if not exists records.sitesync_state (
        representation_id uuid not null,
        site text not null references records.sitesync_site (code),
        project_id uuid,
        status text not null check (status in ('queued', 'in_progress', 'synced', 'failed', 'paused', 'removed')),
        priority integer not null check (priority between 0 and 100),
        progress double precision not null default 0 check (progress between 0 and 1),
        size bigint,
        total_size bigint,
        attempts integer not null default 0,
        error text,
        agent text,
        lease_hash bytea,
        lease_expires_at timestamptz,
        lease_seconds integer,
        requested_at timestamptz not null default clock_timestamp(),
        updated_at timestamptz not null default clock_timestamp(),
        primary key (representation_id, site),
        constraint sitesync_state_lease check ((status = 'in_progress') = (lease_hash is not null and lease_expires_at is not null))
      )`,
    );
    this.addSql(
      `create index if not exists sitesync_state_claim_idx on records.sitesync_state (site, priority desc, requested_at, representation_id)
        where status = 'queued'`,
    );
    this.addSql(`create index if not exists sitesync_state_lease_idx on records.sitesync_state (lease_expires_at, site) where status = 'in_progress'`);
    this.addSql('create index if not exists sitesync_state_site_idx on records.sitesync_state (site, representation_id) include (status)');
    this.addSql('create index if not exists sitesync_state_project_idx on records.sitesync_state (project_id, representation_id, site) include (status)');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists records.sitesync_state');
    this.addSql('drop table if exists records.sitesync_site');
  }
}
