/**
 * The migrations of schema `schema`, applied by openOrm at start-up (see docs/architecture.md,
 * "Service shape"); a `name` is stored in `schema.mikro_orm_migrations` once applied and never changes.
 */
import type { MigrationObject } from '@mikro-orm/postgresql';
import { SchemaActionsMigration } from './actions/store/actions.migration.js';
import { SchemaAddonsMigration } from './addons/store/addons.migration.js';
import { SchemaInitialMigration } from './definitions/store/initial.migration.js';
import { SchemaSchedulePrincipalMigration } from './scheduler/store/schedule-principal.migration.js';
import { SchemaSchedulerMigration } from './scheduler/store/scheduler.migration.js';

/** The PostgreSQL schema the service owns. */
export const SCHEMA_SCHEMA = 'schema';

/** Every migration of schema `schema`, oldest first. */
export const SCHEMA_MIGRATIONS: MigrationObject[] = [
  { name: 'schema-0001-initial', class: SchemaInitialMigration },
  { name: 'schema-0002-actions', class: SchemaActionsMigration },
  { name: 'schema-0003-addons', class: SchemaAddonsMigration },
  { name: 'schema-0004-scheduler', class: SchemaSchedulerMigration },
  { name: 'schema-0005-schedule-principal', class: SchemaSchedulePrincipalMigration },
];
