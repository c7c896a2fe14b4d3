/**
 * The farm's tables (docs/farm.md): `farm_job`, one row beside each FarmJob record with what
 * the claim and the job-level rules read, and `farm_chunk`, the chunks agents claim. A chunk row
 * carries copies of its job's pool, kind, priority, order and whether the job is offerable, so
 * the claim is one index scan in claim order (`farm_chunk_queue_idx`, records-0012, which replaced
 * `farm_chunk_claim_idx`).
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsFarmMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists records.farm_job (
        id uuid primary key,
        seq bigserial not null,
        status text not null,
        pool text not null,
        kind text not null,
        priority integer not null,
        max_attempts integer not null,
        manager text,
        depends_on uuid[] not null default '{}',
        deps_pending integer not null default 0,
        ever_claimed boolean not null default false,
        offerable boolean generated always as (status in ('queued', 'running') and deps_pending = 0 and manager is null) stored
      )`,
    );
    this.addSql(`create index if not exists farm_job_depends_idx on records.farm_job using gin (depends_on) where deps_pending > 0`);
    this.addSql(
      `create table if not exists records.farm_chunk (
        id uuid primary key,
        job_id uuid not null references records.farm_job (id),
        idx integer not null,
        frames text,
        state text not null default 'queued',
        attempts integer not null default 0,
        max_attempts integer not null,
        claims integer not null default 0,
        pool text not null,
        kind text not null,
        priority integer not null,
        job_seq bigint not null,
        offerable boolean not null,
        lease_digest bytea,
        lease_seconds integer,
        lease_expires_at timestamptz,
        worker text,
        progress smallint,
        output jsonb,
        error text,
        finished_at timestamptz,
        constraint farm_chunk_job_idx_key unique (job_id, idx),
        constraint farm_chunk_state_check check (state in ('queued', 'leased', 'done', 'failed'))
      )`,
    );
    // The claim: open chunks of offerable jobs of one pool, in claim order.
    this.addSql(
      `create index if not exists farm_chunk_claim_idx on records.farm_chunk (pool, priority desc, job_seq, idx)
        where offerable and state in ('queued', 'leased')`,
    );
    // The sweeper: leases by expiry.
    this.addSql(`create index if not exists farm_chunk_lease_idx on records.farm_chunk (lease_expires_at) where state = 'leased'`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists records.farm_chunk');
    this.addSql('drop table if exists records.farm_job');
  }
}
