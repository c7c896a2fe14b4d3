/**
 * The migrations of schema `media`, applied by openOrm at start-up (docs/architecture.md,
 * "Service shape"). Names follow `<schema>-NNNN-<what>` and never change once applied.
 */
import type { MigrationObject } from '@mikro-orm/postgresql';
import { JobCopiedMigration } from './job-copied.migration.js';
import { JobOutputsMigration } from './job-outputs.migration.js';
import { JobResultMigration } from './job-result.migration.js';
import { JobsMigration } from './jobs.migration.js';

/** Every migration of schema `media`, oldest first. */
export const MEDIA_MIGRATIONS: MigrationObject[] = [
  { name: 'media-0001-jobs', class: JobsMigration },
  { name: 'media-0002-job-outputs', class: JobOutputsMigration },
  { name: 'media-0003-job-result', class: JobResultMigration },
  { name: 'media-0004-job-copied', class: JobCopiedMigration },
];
