/**
 * The schema service's use cases (docs/architecture.md, "The schema service"). A change is
 * committed with its event (outbox) under the definitions lock, then handed to records
 * (ApplySchema) before the caller gets the answer, so no record write validates against the
 * old definitions once a change has answered. A rename also runs its cascade over the records
 * (a journal entry committed with the renamed definitions, completed at start-up if a crash
 * cut it short) and publishes one event with the old code, the new code and the count.
 */
import { AppError, isUuid, newId, SCHEMA_OPERATIONS, type CallContext, type Logger, type SchemaChangeName, type StreamEvent } from '@reelbase/lib-platform';
import type { z } from 'zod';
import { v5 as uuidv5 } from 'uuid';
import { parseBody } from '../../kernel/domain/bodies.js';
import { SCHEMA_CHANGES, type SchemaRequest } from './operations.js';
import { DEFAULT_TOOLS, resolveActiveTools, resolveApplications } from './catalog.js';
import type { Commit, JournalEntry, RecordsPort, SchemaFaults, SchemaStore } from './ports.js';
import * as E from './schema.editor.js';
import type { DefinitionChange, Edit, RenameAnswer } from './schema.editor.js';
import type { SchemaDoc, SchemaUsage } from './schema.types.js';
import { schemaView, snapshotOf } from './snapshot.js';

/** Namespace of the definitions' event entity ids (UUID v5 of `<kind>:<key>`). */
const DEFINITION_NAMESPACE = '6f1c2a52-3c3e-4b8e-9a55-3f0e1c7d2b90';

/** The event entity id of one definition. */
export function definitionId(kind: string, key: string): string {
  return uuidv5(`${kind}:${key}`, DEFINITION_NAMESPACE);
}

export type { SchemaRequest } from './operations.js';

export interface SchemaServiceDeps {
  store: SchemaStore;
  records: RecordsPort;
  faults: SchemaFaults;
  logger: Logger;
}

function actorOf(ctx: CallContext | null): string | null {
  const id = ctx?.principal?.userId;
  return isUuid(id) ? id.toLowerCase() : null;
}

function requireAdmin(ctx: CallContext): void {
  if (ctx.principal?.role !== 'Admin') throw new AppError('forbidden', 'changing the schema is for Admins');
}

export class SchemaService {
  /** The highest version records has confirmed (by this replica). */
  private appliedVersion = 0;
  /** Built-in definitions checked since this replica started. */
  private seeded = false;

  constructor(private readonly deps: SchemaServiceDeps) {}

  /** A stream event of one definition change. */
  private event(change: DefinitionChange, actor: string | null): StreamEvent {
    return {
      event_id: newId(),
      entity_type: change.kind,
      entity_id: definitionId(change.kind, change.key),
      project_id: null,
      action: change.action,
      actor,
      changes: change.changes,
      occurred_at: new Date().toISOString(),
    };
  }

  private toCommit<R>(edit: Edit<R>, actor: string | null): Commit<R> {
    const journal: JournalEntry | undefined = edit.rename ? { ...edit.rename, id: newId(), actor } : undefined;
    return { doc: edit.doc, events: edit.changes.map((c) => this.event(c, actor)), journal, result: edit.result };
  }

  /** Hands records the snapshot of `doc` unless it already has it (or a newer one). */
  private async apply(doc: SchemaDoc): Promise<void> {
    if (doc.version <= this.appliedVersion) return;
    await this.deps.records.applySchema(doc.version, JSON.stringify(snapshotOf(doc)));
    this.appliedVersion = Math.max(this.appliedVersion, doc.version);
  }

  /** Runs one rename cascade in records and records it as done with its event. */
  private async cascade(entry: JournalEntry): Promise<number> {
    const rewritten = await this.deps.records.applyRename(entry);
    const answer = {
      kind: entry.kind,
      entity_type: entry.entityType || null,
      field: entry.field || null,
      old_code: entry.from,
      new_code: entry.to,
      rewritten,
    };
    const kind = E.renameEventKind(entry.kind);
    const key = entry.kind === 'option' ? `${entry.entityType}.${entry.field}` : entry.to;
    await this.deps.store.finishRename(entry.id, rewritten, this.event({ kind, key, action: 'update', changes: { rename: answer } }, entry.actor));
    this.deps.logger.info({ rename: answer, journal_id: entry.id }, 'rename cascaded');
    return rewritten;
  }

  /**
   * One Admin change: commit (with events), apply to records, cascade a rename; the answer.
   *
   * A change that removes codes (`removes`: the deletes, options dropped from a field) checked
   * their usage before it was made, but a record write may land after that count. So records gets
   * its snapshot inside the change's transaction, before it commits, and counts the removed codes
   * again under the lock every record write holds while it validates and commits: one still in use
   * refuses it (409 `code_in_use`) and the change rolls back. A delete and a write racing it never
   * both succeed (docs/architecture.md, "The schema service").
   */
  private async mutate<R>(ctx: CallContext, edit: (doc: SchemaDoc) => Edit<R>, opts: { removes?: boolean } = {}): Promise<R> {
    requireAdmin(ctx);
    const actor = actorOf(ctx);
    let handed = 0;
    const beforeCommit = opts.removes
      ? async (out: Commit<R>) => {
          if (out.journal) return;
          await this.deps.records.applySchema(out.doc.version, JSON.stringify(snapshotOf(out.doc)), { refuseRemovedInUse: true });
          handed = out.doc.version;
        }
      : undefined;
    let committed: Commit<R> | null;
    try {
      committed = await this.deps.store.commit((doc) => this.toCommit(edit(doc), actor), beforeCommit);
    } catch (err) {
      if (handed > 0) await this.moveRecordsPast(handed);
      throw err;
    }
    if (!committed) throw new AppError('internal', 'the change was not committed');
    if (handed > 0) this.appliedVersion = Math.max(this.appliedVersion, committed.doc.version);
    await this.apply(committed.doc);
    if (!committed.journal) return committed.result;
    this.deps.faults.afterJournal();
    // Cascades run in journal order: an earlier rename still unfinished (another replica, a
    // crash) goes first, so `a → b` then `b → c` never leaves records holding `b`.
    for (const earlier of await this.deps.store.pendingRenames()) {
      if (earlier.id === committed.journal.id) break;
      await this.cascade(earlier);
    }
    const rewritten = await this.cascade(committed.journal);
    return { ...(committed.result as RenameAnswer), rewritten } as R;
  }

  /**
   * Records took the snapshot of `version` but the change behind it may not have committed here
   * (the commit failed after records answered): unless it did, commit the definitions unchanged
   * until the version passes `version` and hand records that, so records never keeps definitions
   * the schema does not have. Best effort: when this fails too, it is logged, and records keeps the
   * narrower definitions until the schema version passes `version` (docs/architecture.md).
   */
  private async moveRecordsPast(version: number): Promise<void> {
    try {
      if ((await this.deps.store.version()) >= version) return;
      let out: Commit<null> | null;
      do out = await this.deps.store.commit((doc) => ({ doc, events: [], result: null }));
      while (out && out.doc.version <= version);
      if (out) await this.apply(out.doc);
      this.deps.logger.warn(
        { version, now: out?.doc.version },
        'a change records had taken did not commit: the definitions were handed again at a newer version',
      );
    } catch (err) {
      this.deps.logger.error({ err, version }, 'records may hold a change that did not commit, until the schema version passes it');
    }
  }

  /** Usage of every code by records (a delete checks it before it commits). */
  private usage(): Promise<SchemaUsage> {
    return this.deps.records.countUsage();
  }

  /**
   * Start-up and periodic upkeep: seeds built-in types and fields the store lacks (once per
   * start, one replica at a time under the definitions lock), hands records the current
   * snapshot when it may not hold it, and completes rename cascades a crash left unfinished.
   */
  async sync(): Promise<void> {
    if (!this.seeded) {
      const seeded = await this.deps.store.commit((doc) => {
        const edit = E.seedBuiltins(doc);
        return edit ? this.toCommit(edit, null) : null;
      });
      if (seeded) {
        this.deps.logger.info({ added: (seeded.result as { added: string[] }).added.length, version: seeded.doc.version }, 'built-in types and fields seeded');
      }
      this.seeded = true;
    }
    // A cheap one-row read first: the whole document only when records may lag behind it.
    if ((await this.deps.store.version()) > this.appliedVersion) await this.apply(await this.deps.store.load());
    for (const entry of await this.deps.store.pendingRenames()) {
      this.deps.logger.warn({ journal_id: entry.id, kind: entry.kind, from: entry.from, to: entry.to }, 'completing an unfinished rename');
      await this.cascade(entry);
    }
  }

  /** True once records has confirmed a snapshot from this replica. */
  get synced(): boolean {
    return this.appliedVersion > 0;
  }

  // ─── reads ─────────────────────────────────────────────────────────────────────────────

  async getSchema(): Promise<unknown> {
    return schemaView(await this.deps.store.load());
  }

  async getUsage(): Promise<unknown> {
    const u = await this.usage();
    return { entity_types: u.entity_types, fields: u.fields, statuses: u.statuses, steps: u.steps, priorities: u.priorities };
  }

  async getBranding(): Promise<unknown> {
    return (await this.deps.store.load()).branding;
  }

  async getTools(): Promise<unknown> {
    return { tools: (await this.deps.store.load()).tools ?? DEFAULT_TOOLS };
  }

  private async overrides(projectId: string): Promise<Record<string, unknown>> {
    if (!isUuid(projectId)) throw AppError.invalid([{ loc: ['query', 'project_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
    return (await this.deps.records.projectOverrides(projectId.toLowerCase())) ?? {};
  }

  async getApplications(projectId: string | undefined, step: string | undefined): Promise<unknown> {
    const doc = await this.deps.store.load();
    if (projectId === undefined || projectId === '') return { applications: doc.applications };
    return { applications: resolveApplications(doc.applications, await this.overrides(projectId), step || undefined) };
  }

  async getActiveTools(projectId: string | undefined, step: string | undefined): Promise<unknown> {
    if (projectId === undefined || projectId === '') {
      throw AppError.invalid([{ loc: ['query', 'project_id'], msg: 'Field required', type: 'missing' }]);
    }
    const overrides = await this.overrides(projectId);
    const doc = await this.deps.store.load();
    return { tools: resolveActiveTools(doc.tools ?? DEFAULT_TOOLS, overrides, step || undefined) };
  }

  // ─── changes ───────────────────────────────────────────────────────────────────────────

  /**
   * One change of the operations table (operations.ts): Admins only, then its body, its path
   * codes and, when it needs them, records' usage counts are checked before it is made.
   */
  async change(name: SchemaChangeName, ctx: CallContext, r: SchemaRequest): Promise<unknown> {
    requireAdmin(ctx);
    const op = SCHEMA_CHANGES[name];
    const schema: z.ZodType | undefined = SCHEMA_OPERATIONS[name].body;
    const body = (schema ? parseBody(schema, r.body) : undefined) as never;
    const codes = op.codes?.(r) as never;
    const counted = op.usage === true || (op.usage !== undefined && op.usage(body));
    const usage = counted ? await this.usage() : emptyUsage();
    return this.mutate(ctx, (doc) => op.edit(doc, body, codes, usage), op.removes ? { removes: true } : {});
  }
}

function emptyUsage(): SchemaUsage {
  return { entity_types: {}, fields: {}, statuses: {}, steps: {}, priorities: {} };
}
