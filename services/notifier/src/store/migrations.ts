/**
 * The migrations of schema `notifier`, applied by openOrm at start-up (see docs/architecture.md,
 * "Service shape"). A `name` is stored in `notifier.mikro_orm_migrations` once applied and never changes.
 */
import type { MigrationObject } from '@mikro-orm/postgresql';
import { ActionDeliveryMigration } from './action-delivery.migration.js';
import { NoteCreatorMigration } from './note-creator.migration.js';
import { NotificationProjectMigration } from './notification-project.migration.js';
import { NotifierMigration } from './notifier.migration.js';

/** Every migration of schema `notifier`, oldest first. */
export const NOTIFIER_MIGRATIONS: MigrationObject[] = [
  { name: 'notifier-0001-initial', class: NotifierMigration },
  { name: 'notifier-0002-note-creator', class: NoteCreatorMigration },
  { name: 'notifier-0003-action-delivery', class: ActionDeliveryMigration },
  { name: 'notifier-0004-notification-project', class: NotificationProjectMigration },
];
