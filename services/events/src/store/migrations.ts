/**
 * The migrations of schema `events`, applied by openOrm at start-up (see docs/architecture.md,
 * "Service shape"). Each is a hand-written `<what>.migration.ts`; a `name` is stored in
 * `events.mikro_orm_migrations` once applied and never changes.
 */
import type { MigrationObject } from '@mikro-orm/postgresql';
import { ChangesBytesMigration } from './changes-bytes.migration.js';
import { EventLogMigration } from './event-log.migration.js';

/** Every migration of schema `events`, oldest first. */
export const EVENTS_MIGRATIONS: MigrationObject[] = [
  { name: 'Migration0001EventLog', class: EventLogMigration },
  { name: 'Migration0002ChangesBytes', class: ChangesBytesMigration },
];
