/**
 * A chunk's `output` is kept as the JSON text records wrote (compact, at most 64 KiB: docs/farm.md,
 * "Bounds"), in a `json` column rather than `jsonb`: its stored length is then exactly the bytes a
 * page of chunks carries, which the chunk list reads without reading the value, and nothing
 * re-formats it on the way out (`jsonb` writes numbers in full: `1e300` comes back as 301 digits).
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsFarmOutputMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table records.farm_chunk alter column output type json using output::json');
  }

  override async down(): Promise<void> {
    this.addSql('alter table records.farm_chunk alter column output type jsonb using output::jsonb');
  }
}
