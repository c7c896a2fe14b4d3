/**
 * The farm's claim index holds queued chunks only (docs/farm.md, "The claim: one statement"):
 * a chunk leaves it when it is leased, so a claim never walks past the leases other agents hold.
 * Chunks whose lease ran out are found by the claim through `farm_chunk_lease_idx`.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsFarmQueueMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop index if exists records.farm_chunk_claim_idx');
    this.addSql(
      `create index if not exists farm_chunk_queue_idx on records.farm_chunk (pool, priority desc, job_seq, idx)
        where offerable and state = 'queued'`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists records.farm_chunk_queue_idx');
    this.addSql(
      `create index if not exists farm_chunk_claim_idx on records.farm_chunk (pool, priority desc, job_seq, idx)
        where offerable and state in ('queued', 'leased')`,
    );
  }
}
