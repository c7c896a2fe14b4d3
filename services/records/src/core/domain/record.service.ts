/**
 * Create, read, update, retire and revive records. Every write commits together with its
 * outbox row in one transaction (docs/architecture.md, step 2); after the commit the relay
 * is nudged so the event leaves at once.
 *
 * A caller who may not read every project (membershipOf, kernel/domain/project.readers.ts) is the
 * `reader` of each statement that finds a record, a project or a link target for them: to them a
 * project they may not read, and every record in it, does not exist (docs/api-notes.md,
 * "Restricted projects"): a read or write naming one is 404, a create into one is 404 as a read
 * of that Project would be, and a link to one is a dead link.
 */
import {
  AppError,
  canonicalLinks,
  canonicalUuid,
  encodeStreamEvent,
  type InProcessBus,
  isUuid,
  mayChangeSharedPlaylist,
  newId,
  recordWriteRefusal,
  SHARED_PLAYLIST_REFUSED,
  type CallContext,
  type EventAction,
  type Principal,
  type Problem,
  type StreamEvent,
} from '@reelbase/lib-platform';
import { createChanges, dropNulls, mergeData, parseData, updateChanges } from '../../kernel/domain/record.changes.js';
import { atRequest, batchLockIds, batchRequestProblems, parseBatchRequests, toBatchRequest } from './batch.input.js';
import { batchAnswer, batchJson } from './batch.answer.js';
import { actorOf, buildEventPayload } from '../../kernel/domain/record.event.js';
import { checkEntityType, projectMissing, projectNotFound, requiresProject, uuidProblems } from '../../kernel/domain/record.rules.js';
import {
  toView,
  type IdempotencyClaim,
  type OutboxEvent,
  type RecordsBusTopics,
  type RecordValues,
  type StoredRecord,
} from '../../kernel/domain/record.ports.js';
import { checkTimeLogChange, checkTimeLogCreate } from '../../kernel/domain/timelog.rules.js';
import { checkFieldWrite, checkNoteChange, foreignVersion, playlistVersionLinks, versionsChanged, withAuthor } from '../../kernel/domain/review.rules.js';
import { SchemaCache, type CompiledSchema } from '../../kernel/domain/schema.snapshot.js';
import { checkCreate, checkTransition, checkUpdate, type LinkRef } from '../../kernel/domain/schema.validator.js';
import type { CreateInput, DataObject, RecordView, UpdateInput } from '../../kernel/domain/record.types.js';
import { type RecordStore, type RecordTransaction } from './core.ports.js';
import { checkLive, checkProject, collect, foreignVersions, linkNotFound, MAX_SCHEMA_RETRIES, notFound, withCanonicalIds } from './record.checks.js';
import { membershipOf } from '../../kernel/domain/project.readers.js';
import { createWithTemplate } from './record.template.js';
import { FARM_FINAL_STATUSES, farmRecordWriteRefusal } from '../../kernel/domain/farm.guard.js';

export interface RecordServiceDeps {
  /** Storage: transactions, the outbox and database failures are its business. */
  store: RecordStore;
  /**
   * The in-process bus (lib-platform's bus.ts): every committed write is emitted on topic `committed`
   * with its event; the fault switch and the relay are subscribers.
   */
  bus: InProcessBus<RecordsBusTopics>;
  /** Largest serialised event a write may produce (413 above it). */
  maxEventBytes: number;
}

interface WriteOutcome {
  record: RecordView;
  event?: OutboxEvent;
}

export class RecordService {
  /** The schema this process validates against; each write confirms its version. */
  private readonly schemas: SchemaCache;

  constructor(private readonly deps: RecordServiceDeps) {
    this.schemas = new SchemaCache(() => deps.store.loadSchema());
  }

  /**
   * Creates a record; `input.id` is honoured only for service principals. With a schema
   * (version > 0) the write is validated against it (schema.validator.ts) and the single
   * statement that writes it also checks that the stored schema version is still the one
   * validated against and that every link target is live: when the version moved, the new
   * schema is loaded and the write validated again (docs/architecture.md, "Records obey the schema").
   */
  async create(raw: CreateInput, ctx: CallContext): Promise<RecordView> {
    const principal = this.writer(ctx);
    const reader = membershipOf(principal);
    const { input, given, base, dataParsed } = this.prepareCreate(raw, principal);
    const projectId = input.projectId ?? null;
    if (input.taskTemplate !== undefined) {
      return createWithTemplate(
        { store: this.deps.store, schemas: this.schemas, event: (...a) => this.event(...a), bus: this.deps.bus },
        input,
        given,
        base,
        principal,
      );
    }

    const id = input.id ?? newId();
    const createdBy = actorOf(principal);
    let schema = await this.schemas.held();
    for (let attempt = 0; ; attempt += 1) {
      const { problems, refusal, ...checked } = await this.checkCreateInput(schema, this.deps.store, input, given, base, dataParsed, reader);
      let { data } = checked;
      const { links } = checked;
      if (problems.length || refusal) {
        // A refusal must not come from a schema older than the stored one.
        const stored = await this.deps.store.schemaVersion();
        if (stored !== schema.version && attempt < MAX_SCHEMA_RETRIES) {
          schema = await this.schemas.at(stored);
          continue;
        }
        if (refusal) throw refusal;
        // Every problem at once: the link targets too, though the write will not be attempted.
        problems.push(...(await this.deps.store.deadLinks(links, reader)).map(linkNotFound));
        throw AppError.invalid(problems);
      }
      if (input.entityType === 'TimeLog') checkTimeLogCreate(principal, data);
      data = withAuthor(principal, input.entityType, data, schema);

      const values: RecordValues = {
        projectId,
        status: input.status ?? null,
        active: input.active ?? true,
        thumbnailId: input.thumbnailId ?? null,
        data,
      };
      // One statement writes the record and its outbox row; the event is built up front and
      // gets its occurred_at (= updated_at) from the statement's clock.
      const draft: RecordView = { id, entityType: input.entityType, createdBy, createdAt: '', updatedAt: '', ...values };
      const event = this.event(draft, 'create', principal, createChanges(draft));
      const result = await this.deps.store.insertWithEvent(
        { id, entityType: input.entityType, createdBy, ...values },
        event,
        { schemaVersion: schema.version, links, reader },
        input.idempotency,
      );
      if (result.row) {
        this.deps.bus.emit('committed', { ...event.payload, occurred_at: result.row.updatedAt });
        return toView(result.row);
      }
      if (result.schemaVersion !== schema.version) {
        if (attempt >= MAX_SCHEMA_RETRIES) throw AppError.unavailable('the schema kept changing during this write; try again');
        schema = await this.schemas.at(result.schemaVersion);
        continue;
      }
      // A project the writer may not read answers as a read of it would: not found.
      if (result.projectHidden) throw notFound('Project', projectId!);
      const refused: Problem[] = [];
      if (!result.projectLive) refused.push(projectNotFound(projectId!));
      refused.push(...result.deadLinks.map(linkNotFound));
      if (refused.length) throw AppError.invalid(refused);
      // Nothing explains it: a link or the project changed in between; try again.
      if (attempt >= MAX_SCHEMA_RETRIES) throw AppError.unavailable('the records this write links kept changing; try again');
    }
  }

  /**
   * The checks of a create that need no schema: the type, who may choose an id, the data's
   * JSON, the fields the caller may not write (403) and the ids' spelling (problems in `base`).
   */
  private prepareCreate(raw: CreateInput, principal: Principal): { input: CreateInput; given: DataObject; base: Problem[]; dataParsed: boolean } {
    const input = withCanonicalIds(raw);
    checkEntityType(input.entityType);
    if (input.id !== undefined && principal.authKind !== 'service') {
      throw new AppError('forbidden', 'only services may choose a record id');
    }
    const base: Problem[] = [];
    const parsed = collect(base, () => canonicalLinks(parseData(input.dataJson)));
    // Fields the caller may not write: 403 before the body is validated.
    checkFieldWrite(principal, input.entityType, parsed);
    if (input.entityType === 'FarmJob') throw new AppError('forbidden', farmRecordWriteRefusal('create', false, parsed)!);
    const given = dropNulls(parsed);
    const dataParsed = base.length === 0;
    base.push(...uuidProblems({ id: input.id, project_id: input.projectId, thumbnail_id: input.thumbnailId }));
    return { input, given, base, dataParsed };
  }

  /** A create checked against `schema`: its problems (or a refusal), its data as stored and the links it makes. */
  private async checkCreateInput(
    schema: CompiledSchema,
    store: Pick<RecordTransaction, 'linksOutsideProject'>,
    input: CreateInput,
    given: DataObject,
    base: readonly Problem[],
    dataParsed: boolean,
    reader: string | null,
  ): Promise<{ problems: Problem[]; refusal?: AppError; data: DataObject; links: LinkRef[] }> {
    const projectId = input.projectId ?? null;
    const problems = [...base];
    let data = given;
    let links: LinkRef[] = [];
    let refusal: AppError | undefined;
    if (schema.version === 0) {
      if (projectId === null && requiresProject(input.entityType)) problems.push(projectMissing(input.entityType));
    } else {
      try {
        const checked = checkCreate(schema, { entityType: input.entityType, projectId, status: input.status, data: given });
        // Field problems of data that did not parse would only repeat that problem.
        problems.push(...(dataParsed ? checked.problems : checked.problems.filter((p) => p.loc[0] !== 'data')));
        ({ data, links } = checked);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        refusal = err;
      }
    }
    if (input.entityType === 'Playlist' && !refusal) problems.push(...(await foreignVersions(store, projectId, data, reader)));
    return { problems, refusal, data, links };
  }

  /**
   * A create inside `tx` (a batch's): the same checks as {@link create}, against the schema
   * version read (and held) by this transaction; the event is returned for the caller to append.
   */
  private async createIn(tx: RecordTransaction, raw: CreateInput, principal: Principal): Promise<WriteOutcome & { event: OutboxEvent }> {
    const reader = membershipOf(principal);
    const { input, given, base, dataParsed } = this.prepareCreate(raw, principal);
    const projectId = input.projectId ?? null;
    const schema = await this.schemas.at(await tx.schemaVersion(), () => tx.loadSchema());
    const { problems, refusal, ...checked } = await this.checkCreateInput(schema, tx, input, given, base, dataParsed, reader);
    if (refusal) throw refusal;
    problems.push(...(await tx.deadLinks(checked.links, reader)).map(linkNotFound));
    if (problems.length) throw AppError.invalid(problems);
    // The insert itself checks that the project is live; whether the writer may read it, only for one who may not read every project.
    if (reader !== null && projectId !== null) await checkProject(tx, projectId, reader);
    let data = checked.data;
    if (input.entityType === 'TimeLog') checkTimeLogCreate(principal, data);
    data = withAuthor(principal, input.entityType, data, schema);
    const id = input.id ?? newId();
    const createdBy = actorOf(principal);
    const values: RecordValues = { projectId, status: input.status ?? null, active: input.active ?? true, thumbnailId: input.thumbnailId ?? null, data };
    const draft: RecordView = { id, entityType: input.entityType, createdBy, createdAt: '', updatedAt: '', ...values };
    const event = this.event(draft, 'create', principal, createChanges(draft));
    const row = await tx.insertRecord({ id, entityType: input.entityType, createdBy, ...values });
    if (!row) throw AppError.invalid([projectNotFound(projectId!)]);
    return { record: toView(row), event: { ...event, payload: { ...event.payload, occurred_at: row.updatedAt } } };
  }

  /**
   * POST /batch (docs/api-notes.md, "Batches"): creates, updates and retires in request order in
   * ONE transaction, each through the same checks as the single write (who may, the schema,
   * existence, If-Match, conflicts). The first request that fails decides the answer (its 422
   * located under `requests[i]`, or its error with `index: i`) and nothing is written. The
   * events of the batch are one outbox row, published as one message, so they are consecutive
   * in the log. Answers `{"results": [...]}` as JSON text; with `key` (a claimed Idempotency-Key)
   * that answer is stored for the key in the same transaction.
   */
  async batch(requestsJson: string, ctx: CallContext, key?: IdempotencyClaim): Promise<string> {
    const principal = this.writer(ctx);
    const requests = parseBatchRequests(requestsJson);
    const locked = batchLockIds(requests);
    const outcome = await this.deps.store.transaction(async (tx) => {
      // Every record the batch updates or retires, locked in id order before any request runs: two
      // batches naming the same records in other orders wait for each other instead of deadlocking.
      await tx.lockRecords(locked);
      const results: (RecordView | true)[] = [];
      const events: OutboxEvent[] = [];
      for (const [i, raw] of requests.entries()) {
        try {
          const shape = batchRequestProblems(raw, i);
          if (shape.length) throw AppError.invalid(shape.map((p) => ({ ...p, loc: p.loc.slice(2) })));
          const r = toBatchRequest(raw as Record<string, unknown>);
          const op = r.requestType;
          const refusal = recordWriteRefusal(principal, r.entityType, op, r.data);
          if (refusal) throw new AppError('forbidden', refusal);
          // A User's email is its login, which auth keeps with the record: one at a time, through /entities/User.
          if (r.entityType === 'User') {
            throw AppError.invalid([{ loc: ['entity_type'], msg: 'User records are written one at a time (/entities/User)', type: 'value_error' }]);
          }
          let out: WriteOutcome;
          if (op === 'create') {
            out = await this.createIn(
              tx,
              { entityType: r.entityType, id: r.entityId, projectId: r.projectId, status: r.status, dataJson: JSON.stringify(r.data ?? {}) },
              principal,
            );
          } else if (op === 'update') {
            const { input, patch } = this.prepareUpdate(
              {
                entityType: r.entityType,
                id: r.entityId!,
                projectId: r.projectId,
                status: r.status,
                dataJson: r.data === undefined ? undefined : JSON.stringify(r.data),
              },
              principal,
            );
            out = await this.updateIn(tx, input, patch, principal);
          } else {
            checkEntityType(r.entityType);
            if (!isUuid(r.entityId)) throw notFound(r.entityType, String(r.entityId));
            out = await this.retireIn(tx, r.entityType, canonicalUuid(r.entityId)!, undefined, principal);
          }
          results.push(op === 'delete' ? true : out.record);
          if (out.event) events.push(out.event);
        } catch (err) {
          atRequest(i, err);
        }
      }
      if (events.length) {
        const bytes = events.reduce((n, e) => n + Buffer.byteLength(e.json) + 1, 16);
        if (bytes > this.deps.maxEventBytes) {
          throw new AppError('too_large', `this batch's events would be ${bytes} bytes together; the limit is ${this.deps.maxEventBytes}: split the batch`);
        }
        await tx.appendBatch(newId(), events);
      }
      const json = batchJson(results);
      if (key) await tx.storeAnswer(key, batchAnswer(json));
      return { json, events };
    });
    for (const event of outcome.events) this.deps.bus.emit('committed', event.payload);
    return outcome.json;
  }

  /** A live record of `entityType`; retired or missing ones, and those the caller may not read, are not found. */
  async get(entityType: string, id: string, ctx: CallContext): Promise<RecordView> {
    if (!isUuid(id)) throw notFound(entityType, id);
    const row = await this.deps.store.find(id, membershipOf(ctx.principal));
    if (!row || row.retired || row.entityType !== entityType) throw notFound(entityType, id);
    return toView(row);
  }

  /**
   * Applies a PATCH. Nullable columns: `undefined` keeps, `null` clears. A PATCH that changes
   * nothing writes nothing and emits no event.
   */
  async update(raw: UpdateInput, ctx: CallContext): Promise<RecordView> {
    const principal = this.writer(ctx);
    const { input, patch } = this.prepareUpdate(raw, principal);
    return this.write((tx) => this.updateIn(tx, input, patch, principal));
  }

  /** The checks of a PATCH that need no stored record: type, id, JSON, ids' spelling, fields the caller may not write. */
  private prepareUpdate(raw: UpdateInput, principal: Principal): { input: UpdateInput; patch: DataObject | undefined } {
    const input = withCanonicalIds(raw);
    checkEntityType(input.entityType);
    if (!isUuid(input.id)) throw notFound(input.entityType, input.id);
    const problems: Problem[] = [];
    const patch = input.dataJson === undefined ? undefined : collect(problems, () => canonicalLinks(parseData(input.dataJson)));
    problems.push(...uuidProblems({ project_id: input.projectId, thumbnail_id: input.thumbnailId }));
    if (input.projectId === null && requiresProject(input.entityType)) problems.push(projectMissing(input.entityType));
    // Fields the caller may not write: 403 before the body is validated.
    if (patch) checkFieldWrite(principal, input.entityType, patch);
    const farmRefusal = input.entityType === 'FarmJob' && farmRecordWriteRefusal('update', input.status !== undefined, patch);
    if (farmRefusal) throw new AppError('forbidden', farmRefusal);
    if (problems.length) throw AppError.invalid(problems);
    return { input, patch };
  }

  /** A PATCH inside `tx`, once prepared: the locked record, If-Match, the schema's checks, the write and its event. */
  private async updateIn(tx: RecordTransaction, input: UpdateInput, patch: DataObject | undefined, principal: Principal): Promise<WriteOutcome> {
    {
      const reader = membershipOf(principal);
      const locked = await tx.lockForWrite(input.id, reader);
      const current = checkLive(locked.record, input.entityType, input.id, input.ifMatch);
      const merged = patch ? mergeData(current.data, patch) : { data: current.data, changed: {} };
      if (current.entityType === 'TimeLog') checkTimeLogChange(principal, current.data, merged.data);
      if (current.entityType === 'Note') checkNoteChange(principal, 'update', current.data, merged.data);
      const playlistVersionsChanged = current.entityType === 'Playlist' && versionsChanged(current.data, merged.data);
      // What a live share link shows changes only by a role that may share (before the body's 422s).
      if (playlistVersionsChanged && !mayChangeSharedPlaylist(principal) && (await tx.hasLiveShareLink(current.id))) {
        throw new AppError('forbidden', SHARED_PLAYLIST_REFUSED);
      }
      const next: RecordValues = {
        projectId: input.projectId === undefined ? current.projectId : input.projectId,
        status: input.status === undefined ? current.status : input.status,
        active: input.active ?? current.active,
        thumbnailId: input.thumbnailId === undefined ? current.thumbnailId : input.thumbnailId,
        data: merged.data,
      };
      const changes = updateChanges(current, { ...current, ...next }, merged.changed);
      if (Object.keys(changes).length === 0) return { record: toView(current) };
      // The version was read by the statement that locked the row: the schema as it is now.
      const schema = await this.schemas.at(locked.schemaVersion, () => tx.loadSchema());
      const statusChanged = next.status !== current.status;
      const problems: Problem[] = [];
      if (schema.version > 0) {
        const checked = checkUpdate(schema, {
          entityType: current.entityType,
          projectId: next.projectId,
          statusChanged,
          status: next.status,
          patch: merged.changed,
          merged: merged.data,
        });
        problems.push(...checked.problems, ...(await tx.deadLinks(checked.links, reader)).map(linkNotFound));
      }
      // A Playlist holds Versions of its own project: checked when either side of that changes.
      if (playlistVersionsChanged || (current.entityType === 'Playlist' && next.projectId !== current.projectId)) {
        problems.push(...(await foreignVersions(tx, next.projectId, merged.data, reader)));
      }
      if (problems.length) throw AppError.invalid(problems);
      if (schema.version > 0 && statusChanged) checkTransition(schema, current.entityType, current.status, next.status, principal.role);
      if (next.projectId !== null && next.projectId !== current.projectId) await checkProject(tx, next.projectId, reader);
      const record = toView(await tx.update(current.id, next));
      return { record, event: this.event(record, 'update', principal, changes) };
    }
  }

  /** Soft-deletes a live record; the event is a `delete` with empty changes. */
  async retire(entityType: string, id: string, ifMatch: string | undefined, ctx: CallContext): Promise<RecordView> {
    const principal = this.writer(ctx);
    checkEntityType(entityType);
    if (!isUuid(id)) throw notFound(entityType, id);
    return this.write((tx) => this.retireIn(tx, entityType, id, ifMatch, principal));
  }

  /** A retirement inside `tx`: the locked live record, If-Match, who may, the write and its event. */
  private async retireIn(tx: RecordTransaction, entityType: string, id: string, ifMatch: string | undefined, principal: Principal): Promise<WriteOutcome> {
    {
      const current = checkLive(await tx.findForUpdate(id, membershipOf(principal)), entityType, id, ifMatch);
      if (current.entityType === 'TimeLog') checkTimeLogChange(principal, current.data);
      if (current.entityType === 'Note') checkNoteChange(principal, 'retire', current.data);
      if (current.entityType === 'FarmJob' && !FARM_FINAL_STATUSES.includes(current.status ?? '')) {
        throw AppError.conflict(
          'job_active',
          `a ${current.status} FarmJob is retired once it is done, failed or cancelled (POST /farm/jobs/${id}/cancel first)`,
        );
      }
      const record = toView(await tx.setRetired(current.id, true));
      return { record, event: this.event(record, 'delete', principal, {}) };
    }
  }

  /**
   * Brings a retired record back. Logged as a `create` carrying the full record plus
   * `revived: true`, so a client that saw the delete sees the record return.
   */
  async revive(entityType: string, id: string, ctx: CallContext): Promise<RecordView> {
    const principal = this.writer(ctx);
    checkEntityType(entityType);
    if (!isUuid(id)) throw notFound(entityType, id);
    return this.write(async (tx) => {
      const current = await tx.findForUpdate(id, membershipOf(principal));
      if (!current || !current.retired || current.entityType !== entityType) throw notFound(entityType, id);
      if (current.entityType === 'TimeLog') checkTimeLogChange(principal, current.data);
      // Reviving undoes a retirement: the same people may.
      if (current.entityType === 'Note') checkNoteChange(principal, 'retire', current.data);
      const record = toView(await tx.setRetired(current.id, false));
      return { record, event: this.event(record, 'create', principal, { ...createChanges(record), revived: true }) };
    });
  }

  /** The principal of a write; writes always name who is acting. */
  private writer(ctx: CallContext): Principal {
    if (!ctx.principal) throw new AppError('unauthenticated', 'writes need an acting principal');
    return ctx.principal;
  }

  /**
   * The event of a write, serialised once. An event too large for the stream would block the
   * relay, so the write is refused (413) before it commits. Sync imports build theirs here too.
   */
  event(record: RecordView, action: EventAction, principal: Principal, changes: DataObject): OutboxEvent {
    const payload = buildEventPayload({ eventId: newId(), record, action, principal, changes, occurredAt: record.updatedAt });
    const json = encodeStreamEvent(payload);
    // Bytes >= UTF-16 length; only measure exactly when the cheap bound says it may be close.
    if (json.length * 3 > this.deps.maxEventBytes && Buffer.byteLength(json) > this.deps.maxEventBytes) {
      throw new AppError('too_large', `this write's event would be ${Buffer.byteLength(json)} bytes; the limit is ${this.deps.maxEventBytes}`);
    }
    return { payload, json };
  }

  /** Runs `fn` and its outbox append in one transaction, then tells the relay. */
  private async write(fn: (tx: RecordTransaction) => Promise<WriteOutcome>): Promise<RecordView> {
    const outcome = await this.deps.store.transaction(async (tx) => {
      const out = await fn(tx);
      if (out.event) await tx.appendEvent(out.event);
      return out;
    });
    if (outcome.event) this.deps.bus.emit('committed', outcome.event.payload);
    return outcome.record;
  }
}
