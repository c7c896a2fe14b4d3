/**
 * The {@link SchemaStore} on PostgreSQL (schema `schema`): one `definition` row per
 * definition, written as the difference between two documents; `state` holds the version and
 * is the lock every change takes (`select … for update`), so replicas change the schema one at
 * a time; the rename journal and the outbox are written in the same transaction.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { guarded, type NatsNames, type StreamEvent } from '@reelbase/lib-platform';
import { appendSchemaEvent } from '../../kernel/store/schema.outbox.js';
import type { Commit, JournalEntry, SchemaStore } from '../domain/ports.js';
import type { RenameKind } from '../domain/schema.editor.js';
import { emptyDoc, type EntityTypeDef, type SchemaDoc } from '../domain/schema.types.js';

type Db = Knex | Knex.Transaction;

interface Row {
  kind: string;
  code: string;
  position: number;
  def: unknown;
}

const SINGLE = 'studio';

/** The rows of `doc`, keyed by `<kind> <code>`. */
function rowsOf(doc: SchemaDoc): Map<string, Row> {
  const rows = new Map<string, Row>();
  const put = (kind: string, code: string, position: number, def: unknown) => rows.set(`${kind} ${code}`, { kind, code, position, def });
  doc.entity_types.forEach((t, i) => {
    const { fields, ...rest } = t;
    put('entity_type', t.code, i, rest);
    fields.forEach((f, j) => put('field', `${t.code}.${f.code}`, j, f));
  });
  doc.statuses.forEach((s, i) => put('status', s.code, i, s));
  doc.steps.forEach((s, i) => put('step', s.code, i, s));
  doc.priorities.forEach((s, i) => put('priority', s.code, i, s));
  doc.workflows.forEach((s, i) => put('workflow', s.code, i, s));
  Object.entries(doc.transitions).forEach(([type, list], i) => put('transitions', type, i, list));
  doc.task_templates.forEach((s, i) => put('task_template', s.code, i, s));
  put('branding', SINGLE, 0, doc.branding);
  put('applications', SINGLE, 0, doc.applications);
  if (doc.tools !== null) put('tools', SINGLE, 0, doc.tools);
  return rows;
}

/** The document of `rows` (in kind, position order). */
function docOf(rows: Row[], version: number): SchemaDoc {
  const doc = emptyDoc();
  doc.version = version;
  const types = new Map<string, EntityTypeDef>();
  for (const r of rows) {
    if (r.kind === 'entity_type') {
      const t = { ...(r.def as Omit<EntityTypeDef, 'fields'>), fields: [] } as EntityTypeDef;
      types.set(t.code, t);
      doc.entity_types.push(t);
    }
  }
  for (const r of rows) {
    const def = r.def as never;
    switch (r.kind) {
      case 'field': {
        const type = r.code.slice(0, r.code.indexOf('.'));
        types.get(type)?.fields.push(def);
        break;
      }
      case 'status':
        doc.statuses.push(def);
        break;
      case 'step':
        doc.steps.push(def);
        break;
      case 'priority':
        doc.priorities.push(def);
        break;
      case 'workflow':
        doc.workflows.push(def);
        break;
      case 'transitions':
        doc.transitions[r.code] = def;
        break;
      case 'task_template':
        doc.task_templates.push(def);
        break;
      case 'branding':
        doc.branding = def;
        break;
      case 'applications':
        doc.applications = def;
        break;
      case 'tools':
        doc.tools = def;
        break;
    }
  }
  return doc;
}

interface JournalRow {
  id: string;
  kind: string;
  entity_type: string;
  field: string;
  from_code: string;
  to_code: string;
  actor: string | null;
}

export class DefinitionRepository implements SchemaStore {
  constructor(
    private readonly db: Knex,
    private readonly names: NatsNames,
  ) {}

  private async read(db: Db, version: number): Promise<SchemaDoc> {
    const res = await db.raw<{ rows: Row[] }>('select kind, code, position, def from schema.definition order by kind, position, code');
    return docOf(res.rows, version);
  }

  version(): Promise<number> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { version: string }[] }>('select version from schema.state where id = 1');
      return Number(res.rows[0]?.version ?? 0);
    });
  }

  load(): Promise<SchemaDoc> {
    // One statement, so the version and the rows are one snapshot.
    return guarded(async () => {
      const res = await this.db.raw<{ rows: (Row & { version: string | null })[] }>(
        `select d.kind, d.code, d.position, d.def, s.version
           from (select 1) one
           left join schema.state s on s.id = 1
           left join schema.definition d on true
          order by d.kind, d.position, d.code`,
      );
      const version = Number(res.rows[0]?.version ?? 0);
      return docOf(
        res.rows.filter((r) => r.kind !== null),
        version,
      );
    });
  }

  commit<R>(change: (doc: SchemaDoc) => Commit<R> | null, beforeCommit?: (out: Commit<R>) => Promise<void>): Promise<Commit<R> | null> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        await trx.raw('insert into schema.state (id, version) values (1, 0) on conflict do nothing');
        const state = await trx.raw<{ rows: { version: string }[] }>('select version from schema.state where id = 1 for update');
        const version = Number(state.rows[0]!.version);
        const before = await this.read(trx, version);
        const out = change(before);
        if (!out) return null;
        const nextVersion = version + 1;
        out.doc.version = nextVersion;
        await this.writeDiff(trx, before, out.doc);
        await trx.raw('update schema.state set version = ? where id = 1', [nextVersion]);
        for (const e of out.events) await this.append(trx, e);
        if (out.journal) {
          const j = out.journal;
          await trx.raw(
            `insert into schema.rename_journal (id, kind, entity_type, field, from_code, to_code, actor)
             values (?, ?, ?, ?, ?, ?, ?)`,
            [j.id, j.kind, j.entityType, j.field, j.from, j.to, j.actor],
          );
        }
        if (beforeCommit) await beforeCommit(out);
        return out;
      }),
    );
  }

  private async writeDiff(trx: Db, before: SchemaDoc, after: SchemaDoc): Promise<void> {
    const old = rowsOf(before);
    const next = rowsOf(after);
    for (const [key, r] of old) {
      if (!next.has(key)) await trx.raw('delete from schema.definition where kind = ? and code = ?', [r.kind, r.code]);
    }
    for (const [key, r] of next) {
      const o = old.get(key);
      if (o && o.position === r.position && JSON.stringify(o.def) === JSON.stringify(r.def)) continue;
      await trx.raw(
        `insert into schema.definition (kind, code, position, def) values (?, ?, ?, ?::jsonb)
         on conflict (kind, code) do update set position = excluded.position, def = excluded.def, updated_at = now()`,
        [r.kind, r.code, r.position, JSON.stringify(r.def)],
      );
    }
  }

  private async append(trx: Db, e: StreamEvent): Promise<void> {
    await appendSchemaEvent(trx, this.names, e);
  }

  pendingRenames(): Promise<JournalEntry[]> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: JournalRow[] }>(
        `select id, kind, entity_type, field, from_code, to_code, actor from schema.rename_journal
          where done_at is null order by created_at, id`,
      );
      return res.rows.map((r) => ({
        id: r.id,
        kind: r.kind as RenameKind,
        entityType: r.entity_type,
        field: r.field,
        from: r.from_code,
        to: r.to_code,
        actor: r.actor,
      }));
    });
  }

  finishRename(id: string, rewritten: number, event: StreamEvent): Promise<boolean> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        const res = await trx.raw<{ rowCount: number }>('update schema.rename_journal set done_at = now(), rewritten = ? where id = ? and done_at is null', [
          rewritten,
          id,
        ]);
        if (res.rowCount === 0) return false;
        await this.append(trx, event);
        return true;
      }),
    );
  }
}
