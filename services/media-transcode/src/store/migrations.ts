/**
 * The migrations of schema `media`, applied by openOrm at start-up (docs/architecture.md,
 * "Service shape"). Names follow `<schema>-NNNN-<what>` and never change once applied.
 */
import type { MigrationObject } from '@mikro-orm/postgresql';
import { JobsMigration } from './jobs.migration.js';

/** Every migration of schema `media`, oldest first. */
export const MEDIA_MIGRATIONS: MigrationObject[] = [{ name: 'media-0001-jobs', class: JobsMigration }];
