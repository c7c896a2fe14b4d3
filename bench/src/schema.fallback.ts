/**
 * The records tables for a run without the stack (`--skip-gateway`): the same shape the
 * records service migrates, so pgbench and the baseline can be measured on their own.
 * With the stack running, the records service creates them and this is not used.
 */
import pg from 'pg';

const DDL = `
create schema if not exists records;
create table if not exists records.record (
  id uuid primary key,
  entity_type text not null,
  project_id uuid null,
  status text null,
  active boolean not null default true,
  thumbnail_id uuid null,
  created_by uuid null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  retired_at timestamptz null,
  data jsonb not null default '{}'::jsonb
);
create table if not exists records.outbox (
  seq bigserial primary key,
  event_id uuid not null unique,
  subject text not null,
  payload jsonb not null,
  created_at timestamptz not null default now()
);
`;

/** Creates the records schema and its two tables when they are missing. */
export async function ensureFallbackSchema(databaseUrl: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query(DDL);
  } finally {
    await c.end();
  }
}
