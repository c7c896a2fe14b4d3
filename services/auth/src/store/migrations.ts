/**
 * The migrations of schema `auth`, applied by openOrm at start-up (see docs/architecture.md,
 * "Service shape"). Each is a hand-written `<what>.migration.ts`; a `name` is stored in
 * `auth.mikro_orm_migrations` once applied and never changes.
 */
import type { MigrationObject } from '@mikro-orm/postgresql';
import { AuthInitialMigration } from './initial.migration.js';
import { EmailClaimMigration } from './email-claim.migration.js';
import { LoginAttemptPendingMigration } from './login-attempt-pending.migration.js';
import { CredentialLifetimesMigration } from './credential-lifetimes.migration.js';
import { AgentKeysMigration } from './agent-keys.migration.js';

/** Every migration of schema `auth`, oldest first. */
export const AUTH_MIGRATIONS: MigrationObject[] = [
  { name: 'auth-0001-initial', class: AuthInitialMigration },
  { name: 'auth-0002-login-attempt-pending', class: LoginAttemptPendingMigration },
  { name: 'auth-0003-email-claim', class: EmailClaimMigration },
  { name: 'auth-0004-credential-lifetimes', class: CredentialLifetimesMigration },
  { name: 'auth-0005-agent-keys', class: AgentKeysMigration },
];
