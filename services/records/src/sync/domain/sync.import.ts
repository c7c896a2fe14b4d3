/**
 * A sync import (docs/api-notes.md, "Sync"; docs/architecture.md, "Sync"): a batch of items upserted by
 * (source, entity_type, external_id) in ONE transaction. Each item goes through the checks a create or a
 * PATCH goes through — the same functions (schema.validator.ts: checkCreate / checkUpdate /
 * checkTransition; record.changes.ts: merge, no-op detection, changes; review.rules.ts and
 * timelog.rules.ts; the event built by RecordService.event) — but the batch reads, checks its links and
 * writes with one statement each instead of one per item: the schema is read once, the mappings and rows
 * in one statement each, every link of the batch in one `deadLinks`, and the rows, outbox events,
 * mappings and echo marks with multi-row statements.
 */
import { AppError, canonicalLinks, newId, type CallContext, type Principal, type Problem } from '@reelbase/lib-platform';
import { createChanges, dropNulls, isPlainObject, mergeData, updateChanges } from '../../kernel/domain/record.changes.js';
import { actorOf } from '../../kernel/domain/record.event.js';
import { checkEntityType, requiresProject } from '../../kernel/domain/record.rules.js';
import type { RecordService } from '../../core/domain/record.service.js';
import type { InProcessBus } from '@reelbase/lib-platform';
import { toView, type NewRecord, type OutboxEvent, type RecordValues, type StoredRecord } from '../../kernel/domain/record.ports.js';
import { checkFieldWrite, checkNoteChange, foreignVersion, playlistVersionLinks, withAuthor } from '../../kernel/domain/review.rules.js';
import { SchemaCache, type CompiledSchema } from '../../kernel/domain/schema.snapshot.js';
import { checkCreate, checkTransition, checkUpdate, type LinkRef } from '../../kernel/domain/schema.validator.js';
import { checkTimeLogChange, checkTimeLogCreate } from '../../kernel/domain/timelog.rules.js';
import type { DataObject, RecordView } from '../../kernel/domain/record.types.js';
import { parseSyncImport, type SyncItem } from './sync.input.js';
import { checkUserEmails, namesUserEmail } from './sync.users.js';
import { StaleSyncRead, type SyncStore, type SyncTransaction, type SyncUpdate } from './sync.ports.js';
import { farmRecordWriteRefusal } from '../../kernel/domain/farm.guard.js';
import type { RecordsBusTopics } from '../../kernel/domain/record.ports.js';

/** Plans of one import made again at most this many times when a record changes under them. */
const STALE_ATTEMPTS = 3;

export type SyncResult = 'created' | 'updated' | 'unchanged';

export interface SyncImportAnswer {
  created: number;
  updated: number;
  unchanged: number;
  items: { external_id: string; entity_type: string; id: string; result: SyncResult }[];
}

export interface SyncImporterDeps {
  store: SyncStore;
  /** Builds each write's event (and refuses one too large) exactly as every other write. */
  records: Pick<RecordService, 'event'>;
  bus: InProcessBus<RecordsBusTopics>;
}

/** The key of an item or of a link by external id. */
const keyOf = (entityType: string, externalId: string) => `${entityType}\u0000${externalId}`;

/** A link value naming its target by external id. */
function externalLink(v: unknown): { type: string; externalId: string } | undefined {
  if (!isPlainObject(v) || typeof v.type !== 'string' || typeof v.external_id !== 'string' || 'id' in v) return undefined;
  if (Object.keys(v).length !== 2) return undefined;
  return { type: v.type, externalId: v.external_id };
}

/** The problems of one item, located under `items[i]`. */
const located = (i: number, problems: readonly Problem[]): Problem[] => problems.map((p) => ({ ...p, loc: ['items', i, ...p.loc] }));

/** A 403 or 409 of one item: the whole batch answers it, with the item's index. */
function atItem(i: number, err: unknown): never {
  if (err instanceof AppError && err.kind === 'invalid') throw AppError.invalid(located(i, err.problems));
  if (err instanceof AppError) throw new AppError(err.kind, `items[${i}]: ${err.message}`, { code: err.code, extra: { ...err.extra, index: i } });
  throw err;
}

/** What one item will do, once checked. */
type Plan =
  | { kind: 'create'; record: NewRecord }
  | { kind: 'update'; current: StoredRecord; values: RecordValues; changes: DataObject }
  | { kind: 'unchanged'; current: StoredRecord };

export class SyncImporter {
  private readonly schemas: SchemaCache;

  constructor(private readonly deps: SyncImporterDeps) {
    this.schemas = new SchemaCache(async () => undefined);
  }

  /** Imports one batch; Admin only. */
  async import(bodyJson: string, ctx: CallContext): Promise<SyncImportAnswer> {
    const principal = ctx.principal;
    if (!principal) throw new AppError('unauthenticated', 'writes need an acting principal');
    if (principal.role !== 'Admin') throw new AppError('forbidden', 'importing is for Admin only');
    const input = parseSyncImport(bodyJson);
    const base: Problem[] = [];
    const seen = new Map<string, number>();
    input.items.forEach((item, i) => {
      try {
        checkEntityType(item.entityType);
      } catch (err) {
        if (err instanceof AppError) base.push(...located(i, err.problems));
      }
      const key = keyOf(item.entityType, item.externalId);
      const first = seen.get(key);
      if (first !== undefined) {
        base.push({ loc: ['items', i, 'external_id'], msg: `the same ${item.entityType} '${item.externalId}' is items[${first}] already`, type: 'duplicate' });
      } else seen.set(key, i);
    });
    if (base.length) throw AppError.invalid(base);
    // Fields the caller may not write: 403 before the body is validated, as on a create or patch.
    input.items.forEach((item, i) => {
      try {
        checkFieldWrite(principal, item.entityType, item.data);
      } catch (err) {
        atItem(i, err);
      }
    });

    const outcome = await this.attempt(() => this.deps.store.syncTransaction((tx) => this.run(tx, input.source, input.items, input.dryRun, principal)));
    for (const event of outcome.events) this.deps.bus.emit('committed', event.payload);
    return outcome.answer;
  }

  /**
   * Runs the import's transaction again when a record it read changed before it wrote it (another
   * writer's PATCH between the read and the write): reads take no row lock, so an unchanged re-import
   * writes nothing at all. After STALE_ATTEMPTS such races in a row the batch answers 409.
   */
  private async attempt<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof StaleSyncRead)) throw err;
        if (attempt >= STALE_ATTEMPTS) {
          throw AppError.conflict('concurrent_change', `records of this import kept changing while it ran (${err.ids.length} this time); send the batch again`);
        }
      }
    }
  }

  private async run(
    tx: SyncTransaction,
    source: string,
    items: SyncItem[],
    dryRun: boolean,
    principal: Principal,
  ): Promise<{ answer: SyncImportAnswer; events: OutboxEvent[] }> {
    await tx.lockSource(source);
    const version = await tx.schemaVersion();
    const schema = await this.schemas.at(version, () => tx.loadSchema());

    // Every key the batch names: its items, their projects and their links by external id.
    const wanted = new Map<string, { entityType: string; externalId: string; own: boolean }>();
    const want = (entityType: string, externalId: string, own: boolean, key = keyOf(entityType, externalId)) => {
      if (!wanted.has(key)) wanted.set(key, { entityType, externalId, own });
    };
    // Each item's key, made once (a key is hashed by every map it is looked up in).
    const itemKeys = items.map((item) => keyOf(item.entityType, item.externalId));
    items.forEach((item, i) => want(item.entityType, item.externalId, true, itemKeys[i]));
    for (const item of items) {
      if (item.projectExternalId !== undefined) want('Project', item.projectExternalId, false);
      for (const value of Object.values(item.data)) {
        for (const v of Array.isArray(value) ? value : [value]) {
          const link = externalLink(v);
          if (link) want(link.type, link.externalId, false);
        }
      }
    }
    const found = await tx.mapped(source, [...wanted.values()]);
    const mapped = new Map<string, string>();
    for (const m of found.mappings) mapped.set(keyOf(m.entityType, m.externalId), m.id);
    const existing = new Map<string, StoredRecord>();
    for (const row of found.records) existing.set(row.id, row);

    // The batch's own records: mapped ones keep their id, new ones get one now.
    const inBatch = new Map<string, { id: string; index: number; isNew: boolean }>();
    items.forEach((item, index) => {
      const key = itemKeys[index]!;
      const id = mapped.get(key);
      inBatch.set(key, { id: id ?? newId(), index, isNew: id === undefined });
    });
    const newIds = new Map<string, string>();
    for (const [key, b] of inBatch) if (b.isNew) newIds.set(b.id, items[b.index]!.entityType);
    const resolve = (type: string, externalId: string): string | undefined => {
      const key = keyOf(type, externalId);
      return inBatch.get(key)?.id ?? mapped.get(key);
    };

    // Users' login addresses: the rule of POST /entities/User, against every User's address as stored.
    const logins = items.some(namesUserEmail)
      ? checkUserEmails(
          items,
          items.map((_, i) => {
            const own = inBatch.get(itemKeys[i]!)!;
            return { id: own.id, current: own.isNew ? undefined : existing.get(own.id) };
          }),
          await tx.lockUserEmails(),
        )
      : { emails: new Map<number, string>(), problems: [] };

    const problems: Problem[] = [...logins.problems];
    const links: LinkRef[] = [];
    const plans: Plan[] = [];
    const playlistChecks: { i: number; projectId: string | null; data: DataObject }[] = [];
    for (const [i, item] of items.entries()) {
      // FarmJob records are the farm's: /entities refuses to create one (403), an import refuses the item.
      if (item.entityType === 'FarmJob') {
        problems.push({ loc: ['items', i, 'entity_type'], msg: farmRecordWriteRefusal('create', false, undefined)!, type: 'value_error' });
        continue;
      }
      const itemProblems: Problem[] = [];
      const data = canonicalLinks(this.resolveLinks(schema, item, resolve, source, itemProblems));
      const email = logins.emails.get(i);
      if (email !== undefined) data.email = email;
      const own = inBatch.get(itemKeys[i]!)!;
      const current = own.isNew ? undefined : existing.get(own.id);
      let projectId: string | null | undefined = item.projectId;
      if (item.projectExternalId !== undefined) {
        projectId = resolve('Project', item.projectExternalId);
        if (projectId === undefined) {
          itemProblems.push({
            loc: ['project_external_id'],
            msg: `no Project with external id '${item.projectExternalId}' in this batch or imported from '${source}'`,
            type: 'link_not_found',
          });
        }
      }
      if (projectId !== undefined && projectId !== null && !(current && current.projectId === projectId)) {
        links.push({ type: 'Project', id: projectId, loc: ['items', i, item.projectExternalId !== undefined ? 'project_external_id' : 'project_id'] });
      }
      try {
        const plan = current
          ? this.planUpdate(schema, principal, item, current, projectId, data, itemProblems, links, i)
          : own.isNew
            ? this.planCreate(schema, principal, item, own.id, projectId ?? null, data, itemProblems, links, i)
            : undefined;
        if (!plan) {
          itemProblems.push({ loc: [], msg: `the ${item.entityType} mapped to '${item.externalId}' no longer exists`, type: 'not_found' });
        } else {
          plans.push(plan);
          if (item.entityType === 'Playlist' && plan.kind !== 'unchanged') {
            const values = plan.kind === 'create' ? plan.record : plan.values;
            playlistChecks.push({ i, projectId: values.projectId, data: values.data });
          }
        }
      } catch (err) {
        atItem(i, err);
      }
      problems.push(...located(i, itemProblems));
    }

    // Links: targets created by this batch are checked here (their type), the rest in one statement,
    // each target once (a batch's thousand Tasks name one Project and a few Shots and Users many times).
    const stored: LinkRef[] = [];
    const targets = new Map<string, LinkRef>();
    const targetKey = (link: LinkRef) => keyOf(link.type, link.id);
    for (const link of links) {
      const newType = newIds.get(link.id);
      if (newType === undefined) {
        stored.push(link);
        const key = targetKey(link);
        if (!targets.has(key)) targets.set(key, link);
      } else if (newType !== link.type) problems.push({ loc: link.loc, msg: `no live ${link.type} with id ${link.id}`, type: 'link_not_found' });
    }
    const dead = new Set((await tx.deadLinks([...targets.values()])).map(targetKey));
    for (const link of stored) {
      if (dead.has(targetKey(link))) problems.push({ loc: link.loc, msg: `no live ${link.type} with id ${link.id}`, type: 'link_not_found' });
    }
    for (const check of playlistChecks) problems.push(...(await this.foreignVersions(tx, check, plans)));
    if (problems.length) throw AppError.invalid(problems.sort((a, b) => Number(a.loc[1]) - Number(b.loc[1])));

    // The answer, then (unless a dry run) the writes: one statement per kind.
    const answer: SyncImportAnswer = { created: 0, updated: 0, unchanged: 0, items: [] };
    const creates: NewRecord[] = [];
    const createEvents: OutboxEvent[] = [];
    const updates: SyncUpdate[] = [];
    const updateEvents: OutboxEvent[] = [];
    const createdExternalIds: string[] = [];
    for (const [i, plan] of plans.entries()) {
      const item = items[i]!;
      const id = plan.kind === 'create' ? plan.record.id : plan.current.id;
      const result: SyncResult = plan.kind === 'create' ? 'created' : plan.kind === 'update' ? 'updated' : 'unchanged';
      answer[result] += 1;
      answer.items.push({ external_id: item.externalId, entity_type: item.entityType, id, result });
      if (dryRun) continue;
      if (plan.kind === 'create') {
        const draft: RecordView = { ...plan.record, createdAt: '', updatedAt: '' };
        creates.push(plan.record);
        createEvents.push(this.event(i, draft, 'create', principal, createChanges(draft)));
        createdExternalIds.push(item.externalId);
      } else if (plan.kind === 'update') {
        const draft: RecordView = { ...toView(plan.current), ...plan.values };
        updates.push({ id, readAt: plan.current.updatedAt, values: plan.values });
        updateEvents.push(this.event(i, draft, 'update', principal, plan.changes));
      }
    }
    if (dryRun) return { answer, events: [] };
    const events: OutboxEvent[] = [];
    const stamp = (list: OutboxEvent[], updatedAt: string[]) =>
      list.forEach((e, k) => events.push({ ...e, payload: { ...e.payload, occurred_at: updatedAt[k]! } }));
    if (creates.length) stamp(createEvents, await tx.insertMany(source, creates, createEvents, createdExternalIds));
    if (updates.length) stamp(updateEvents, await tx.updateMany(source, updates, updateEvents));
    return { answer, events };
  }

  /**
   * The item's data with each link given by external id replaced by `{type, id}` (link and multi_link
   * fields; any top-level value before the first schema). A name that resolves nowhere is a problem.
   */
  private resolveLinks(
    schema: CompiledSchema,
    item: SyncItem,
    resolve: (type: string, externalId: string) => string | undefined,
    source: string,
    problems: Problem[],
  ): DataObject {
    const fields = schema.version > 0 ? schema.entityTypes.get(item.entityType)?.fields : undefined;
    const data: DataObject = {};
    for (const [key, value] of Object.entries(item.data)) {
      const type = fields?.get(key)?.type;
      if (schema.version > 0 && type !== 'link' && type !== 'multi_link') {
        data[key] = value;
        continue;
      }
      const one = (v: unknown, loc: (string | number)[]): unknown => {
        const link = externalLink(v);
        if (!link) return v;
        const id = resolve(link.type, link.externalId);
        if (id === undefined) {
          problems.push({
            loc,
            msg: `no ${link.type} with external id '${link.externalId}' in this batch or imported from '${source}'`,
            type: 'link_not_found',
          });
          return undefined;
        }
        return { type: link.type, id };
      };
      data[key] = Array.isArray(value) ? value.map((v, j) => one(v, ['data', key, j])).filter((v) => v !== undefined) : one(value, ['data', key]);
      if (data[key] === undefined) delete data[key];
    }
    return data;
  }

  private planCreate(
    schema: CompiledSchema,
    principal: Principal,
    item: SyncItem,
    id: string,
    projectId: string | null,
    given: DataObject,
    problems: Problem[],
    links: LinkRef[],
    i: number,
  ): Plan {
    let data = dropNulls(given);
    if (schema.version === 0) {
      if (projectId === null && requiresProject(item.entityType)) {
        problems.push({ loc: ['project_id'], msg: `Field required: a ${item.entityType} belongs to a project`, type: 'missing' });
      }
    } else {
      const checked = checkCreate(schema, { entityType: item.entityType, projectId, status: item.status, data });
      problems.push(...checked.problems);
      links.push(...checked.links.map((l) => ({ ...l, loc: ['items', i, ...l.loc] })));
      data = checked.data;
    }
    if (problems.length === 0 && item.entityType === 'TimeLog') checkTimeLogCreate(principal, data);
    data = withAuthor(principal, item.entityType, data, schema);
    return {
      kind: 'create',
      record: { id, entityType: item.entityType, createdBy: actorOf(principal), projectId, status: item.status ?? null, active: true, thumbnailId: null, data },
    };
  }

  private planUpdate(
    schema: CompiledSchema,
    principal: Principal,
    item: SyncItem,
    current: StoredRecord,
    projectId: string | null | undefined,
    patch: DataObject,
    problems: Problem[],
    links: LinkRef[],
    i: number,
  ): Plan | undefined {
    if (current.retired || current.entityType !== item.entityType) {
      problems.push({ loc: [], msg: `the ${item.entityType} mapped to '${item.externalId}' (${current.id}) is retired; revive it first`, type: 'retired' });
      return { kind: 'unchanged', current };
    }
    const merged = mergeData(current.data, patch);
    if (current.entityType === 'TimeLog') checkTimeLogChange(principal, current.data, merged.data);
    if (current.entityType === 'Note') checkNoteChange(principal, 'update', current.data, merged.data);
    const values: RecordValues = {
      projectId: projectId === undefined ? current.projectId : projectId,
      status: item.status === undefined ? current.status : item.status,
      active: current.active,
      thumbnailId: current.thumbnailId,
      data: merged.data,
    };
    const changes = updateChanges(current, { ...current, ...values }, merged.changed);
    if (Object.keys(changes).length === 0) return { kind: 'unchanged', current };
    const statusChanged = values.status !== current.status;
    if (schema.version > 0) {
      const checked = checkUpdate(schema, {
        entityType: current.entityType,
        projectId: values.projectId,
        statusChanged,
        status: values.status,
        patch: merged.changed,
        merged: merged.data,
      });
      problems.push(...checked.problems);
      links.push(...checked.links.map((l) => ({ ...l, loc: ['items', i, ...l.loc] })));
      if (problems.length === 0 && statusChanged) checkTransition(schema, current.entityType, current.status, values.status, principal.role);
    } else if (values.projectId === null && requiresProject(current.entityType)) {
      problems.push({ loc: ['project_id'], msg: `Field required: a ${current.entityType} belongs to a project`, type: 'missing' });
    }
    return { kind: 'update', current, values, changes };
  }

  /** A Playlist holds Versions of its own project: stored ones in one statement, this batch's from their plan. */
  private async foreignVersions(tx: SyncTransaction, check: { i: number; projectId: string | null; data: DataObject }, plans: Plan[]): Promise<Problem[]> {
    const versions = playlistVersionLinks(check.data);
    if (versions.length === 0 || check.projectId === null) return [];
    const projectOf = new Map<string, string | null>();
    for (const p of plans) if (p.kind === 'create') projectOf.set(p.record.id, p.record.projectId);
    const inBatch = versions.filter((l) => projectOf.has(l.id));
    const foreign = inBatch.filter((l) => projectOf.get(l.id) !== check.projectId);
    foreign.push(
      ...(await tx.linksOutsideProject(
        versions.filter((l) => !projectOf.has(l.id)),
        check.projectId,
      )),
    );
    return located(check.i, foreign.map(foreignVersion));
  }

  private event(i: number, draft: RecordView, action: 'create' | 'update', principal: Principal, changes: DataObject): OutboxEvent {
    try {
      return this.deps.records.event(draft, action, principal, changes);
    } catch (err) {
      return atItem(i, err);
    }
  }
}
