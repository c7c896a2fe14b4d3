/**
 * What the link table specs share: a records service on its own database with a schema of links
 * and multi_links applied, the link rows records.record_link must hold (read from the records
 * independently of its trigger) and those it holds, and records inserted straight into the table.
 */
import { afterAll, beforeAll } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import type pg from 'pg';
import { querySnapshot, startRecordsWorld, text, type RecordsWorld } from './records.world.js';

export const asAdmin: CallContext = { requestId: 'lt-admin', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
export const asService: CallContext = { requestId: 'lt-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };

export const SNAPSHOT = querySnapshot([
  { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
  { code: 'User', project_scoped: false, fields: [text('name')] },
  { code: 'Sequence', project_scoped: true, fields: [text('code'), { code: 'owner', type: 'link', link_types: ['User'] }] },
  {
    code: 'Shot',
    project_scoped: true,
    fields: [
      text('code'),
      { code: 'cut_in', type: 'integer' },
      { code: 'sequence', type: 'link', link_types: ['Sequence'] },
      { code: 'parent', type: 'link', link_types: ['Shot'] },
      { code: 'watchers', type: 'multi_link', link_types: ['User'] },
    ],
  },
  {
    code: 'Task',
    project_scoped: true,
    fields: [text('name'), { code: 'entity', type: 'link', link_types: ['Shot', 'Sequence'] }, { code: 'assignees', type: 'multi_link', link_types: ['User'] }],
  },
  { code: 'Note', project_scoped: true, fields: [text('content'), { code: 'links', type: 'multi_link' }] },
]);

let world: RecordsWorld;
export let sql: pg.Client;
export let client: GrpcClient<recordsv1.RecordsServiceClient>;

/** The hooks of a spec file: a records service on a new database with SNAPSHOT applied before its tests, stopped after them. */
export function useLinkTableWorld(): void {
  beforeAll(async () => {
    world = await startRecordsWorld('linktable');
    ({ client, sql } = world);
    await client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
  }, 60_000);

  afterAll(async () => {
    await world?.stop();
  });
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `->> 'id'` of a JSON object: a string as is, another scalar or a structure as its JSON text. */
const idText = (o: Record<string, unknown>): string | undefined => {
  const v = o.id;
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
};

/** The link rows the table must hold, read from records.record independently of the trigger. */
export async function expectedLinks(): Promise<string[]> {
  const res = await sql.query<{ id: string; entity_type: string; project_id: string | null; data: Record<string, unknown> }>(
    'select id, entity_type, project_id, data from records.record where retired_at is null',
  );
  const rows = new Set<string>();
  for (const r of res.rows) {
    for (const [key, value] of Object.entries(r.data)) {
      const add = (o: unknown, multi: boolean) => {
        if (!isObject(o)) return;
        const id = idText(o);
        if (id !== undefined && UUID.test(id)) rows.add(`${r.id} ${r.entity_type}.${key}${multi ? '[]' : ''} ${id.toLowerCase()} ${r.project_id ?? '-'}`);
      };
      if (Array.isArray(value)) value.forEach((e) => add(e, true));
      else add(value, false);
    }
  }
  return [...rows].sort();
}

export async function storedLinks(): Promise<string[]> {
  const res = await sql.query<{ row: string }>(
    `select from_id || ' ' || link || ' ' || to_id || ' ' || coalesce(project_id::text, '-') as row from records.record_link`,
  );
  return res.rows.map((r) => r.row).sort();
}

/** Inserts a record straight into the table (as the bulk paths and the bench do); its id. */
export async function insert(entityType: string, projectId: string | null, data: unknown, retired = false): Promise<string> {
  const id = newId();
  await sql.query(
    `insert into records.record (id, entity_type, project_id, status, created_at, updated_at, data, retired_at)
     values ($1, $2, $3, 'ip', now(), now(), $4::jsonb, case when $5::boolean then now() end)`,
    [id, entityType, projectId, JSON.stringify(data), retired],
  );
  return id;
}
