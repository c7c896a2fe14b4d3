/**
 * Site sync (docs/sitesync.md): sites, the state of each representation on each site, and the
 * agents that claim states and report on them. Every status change writes a `SiteSync` event
 * into the records outbox in the transaction of the change; progress reports write none. The
 * reader rule (docs/api-notes.md, "Restricted projects") is a condition of the store's statements:
 * a caller who may not read a project claims, lists and counts none of its states, finds none of
 * them (404), and its representations are no live Representations to a request (422).
 */
import { AppError, encodeStreamEvent, isUuid, newId, type CallContext, type InProcessBus, type Principal, type StreamEvent } from '@reelbase/lib-platform';
import { membershipOf } from '../../kernel/domain/project.readers.js';
import type { OutboxEvent } from '../../kernel/domain/record.ports.js';
import {
  assertPatchTransition,
  assertReader,
  assertSiteAdmin,
  assertWriter,
  checkClaim,
  checkFilter,
  checkPatch,
  checkReport,
  checkRequest,
  checkSite,
  decodeCursor,
  encodeCursor,
  isLeaseToken,
  leaseDigest,
  newLease,
  pageLimit,
  REQUEST_KEEPS,
  siteEvent,
  stateEvent,
  type ReportInput,
} from './sitesync.rules.js';
import {
  CLAIM_LIMIT,
  LEASE_SECONDS,
  MAX_ATTEMPTS,
  PRIORITY,
  type Site,
  type SiteInput,
  type SiteKind,
  type SiteState,
  type StateKey,
  type StateStatus,
  type StatusCounts,
} from './sitesync.types.js';
import type { MovedState, SiteSyncStore, SiteSyncTransaction } from './sitesync.ports.js';
import type { RecordsBusTopics } from '../../kernel/domain/record.ports.js';

/** The error a state keeps when its lease ran out. */
export const LAPSE_ERROR = 'the lease ran out before the agent reported';

export interface SiteSyncDeps {
  store: SiteSyncStore;
  /** Records' in-process bus: each committed event is emitted on `committed` (it wakes the outbox relay). */
  bus: InProcessBus<RecordsBusTopics>;
  /** Lost or failed attempts after which a state stays failed (5). */
  maxAttempts?: number;
}

export interface ClaimedState {
  state: SiteState;
  lease: string;
}

export interface StatePage {
  items: SiteState[];
  nextCursor: string | null;
}

const outboxEvent = (payload: StreamEvent): OutboxEvent => ({ payload, json: encodeStreamEvent(payload) });

const noState = () => AppError.notFound('this representation has no sync state on this site');
const leaseLost = () =>
  AppError.conflict('lease_lost', 'this lease is not the current lease of the state: another claim holds it, it ran out, or the state was changed');

export class SiteSync {
  private readonly maxAttempts: number;

  constructor(private readonly deps: SiteSyncDeps) {
    this.maxAttempts = deps.maxAttempts ?? MAX_ATTEMPTS;
  }

  // --- sites -----------------------------------------------------------------------------------

  async putSite(input: SiteInput, ctx: CallContext): Promise<{ site: Site; created: boolean }> {
    const principal = assertSiteAdmin(ctx.principal);
    checkSite(input);
    const { site, created, events } = await this.deps.store.siteSyncTransaction(async (tx) => {
      const out = await tx.upsertSite({ id: newId(), code: input.code, name: input.name, kind: input.kind as SiteKind, root: input.root ?? null });
      const events = out.changed ? [outboxEvent(siteEvent(newId(), out.site, out.created ? 'create' : 'update', principal, out.site.updatedAt))] : [];
      await tx.appendEvents(events);
      return { ...out, events };
    });
    this.emit(events);
    return { site, created };
  }

  listSites(ctx: CallContext): Promise<Site[]> {
    assertReader(ctx.principal);
    return this.deps.store.listSites();
  }

  /** Deletes a site no state names (409 `code_in_use` with the number of states otherwise). */
  async deleteSite(code: string, ctx: CallContext): Promise<Site> {
    const principal = assertSiteAdmin(ctx.principal);
    const { site, events } = await this.deps.store.siteSyncTransaction(async (tx) => {
      const site = await tx.lockSite(code, 'update');
      if (!site) throw AppError.notFound(`no sync site ${code}`);
      const usage = await tx.countStatesOf(code);
      if (usage > 0) {
        throw AppError.conflict('code_in_use', `${usage} sync states name site ${code}; remove them first (PATCH status removed keeps them)`, { usage });
      }
      await tx.deleteSite(code);
      const events = [outboxEvent(siteEvent(newId(), site, 'delete', principal, new Date().toISOString()))];
      await tx.appendEvents(events);
      return { site, events };
    });
    this.emit(events);
    return site;
  }

  // --- requests, pages, summary ----------------------------------------------------------------

  /** Queues each live Representation not already queued, in progress or synced on the site. */
  async request(
    input: { representationIds: readonly string[]; site: string; priority?: number },
    ctx: CallContext,
  ): Promise<{ queued: number; unchanged: number }> {
    const principal = assertWriter(ctx.principal);
    const priority = input.priority ?? PRIORITY.default;
    const ids = checkRequest({ representationIds: input.representationIds, site: input.site, priority });
    const { written, events } = await this.deps.store.siteSyncTransaction(async (tx) => {
      const site = await tx.lockSite(input.site, 'share');
      const reps = await tx.liveRepresentations(ids, membershipOf(principal));
      const live = new Set(reps.map((r) => r.id));
      const problems = [];
      if (!site) problems.push({ loc: ['site'], msg: `no sync site ${input.site}`, type: 'not_found' });
      input.representationIds.forEach((id, i) => {
        if (!live.has(id.toLowerCase())) problems.push({ loc: ['representation_ids', i], msg: 'no live Representation with this id', type: 'not_found' });
      });
      if (problems.length) throw AppError.invalid(problems);
      const written = await tx.requestStates(reps, input.site, priority, REQUEST_KEEPS);
      const events = written.map((w) => outboxEvent(stateEvent(newId(), w.state, w.created ? 'create' : 'update', principal)));
      await tx.appendEvents(events);
      return { written, events };
    });
    this.emit(events);
    return { queued: written.length, unchanged: ids.length - written.length };
  }

  async list(
    query: { projectId?: string; site?: string; status?: string; representationId?: string; limit?: number; cursor?: string },
    ctx: CallContext,
  ): Promise<StatePage> {
    const principal = assertReader(ctx.principal);
    checkFilter(query);
    const limit = pageLimit(query.limit);
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const filter = {
      projectId: query.projectId?.toLowerCase(),
      site: query.site,
      status: query.status as StateStatus | undefined,
      representationId: query.representationId?.toLowerCase(),
    };
    const rows = await this.deps.store.listStates(filter, after, limit + 1, membershipOf(principal));
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  async summary(query: { projectId?: string; site?: string }, ctx: CallContext): Promise<StatusCounts> {
    const principal = assertReader(ctx.principal);
    checkFilter(query);
    return this.deps.store.countStates({ projectId: query.projectId?.toLowerCase(), site: query.site }, membershipOf(principal));
  }

  // --- agents ----------------------------------------------------------------------------------

  /**
   * Up to `limit` due states of the site, highest priority then oldest, each now `in_progress`
   * under a fresh lease; states whose lease ran out count an attempt first (docs/sitesync.md).
   */
  async claim(input: { site: string; agent: string; limit?: number; leaseSeconds?: number }, ctx: CallContext): Promise<ClaimedState[]> {
    const principal = assertWriter(ctx.principal);
    const limit = input.limit || CLAIM_LIMIT.default;
    const leaseSeconds = input.leaseSeconds || LEASE_SECONDS.default;
    checkClaim({ site: input.site, agent: input.agent, limit, leaseSeconds });
    const leases = Array.from({ length: limit }, newLease);
    const { moved, events } = await this.deps.store.siteSyncTransaction(async (tx) => {
      const moved = await tx.claim({
        site: input.site,
        agent: input.agent,
        leaseDigests: leases.map((l) => l.digest),
        leaseSeconds,
        maxAttempts: this.maxAttempts,
        lapseError: LAPSE_ERROR,
        reader: membershipOf(principal),
      });
      if (moved.length === 0 && !(await tx.lockSite(input.site, 'share'))) {
        throw AppError.invalid([{ loc: ['site'], msg: `no sync site ${input.site}`, type: 'not_found' }]);
      }
      const events = this.movedEvents(moved, principal);
      await tx.appendEvents(events);
      return { moved, events };
    });
    this.emit(events);
    // The statement returns its rows in no particular order: the answer is in claim order, which is
    // the order of the lease indexes (priority, then oldest request, then representation id).
    return moved
      .filter((m) => m.leaseIndex !== null)
      .sort((x, y) => x.leaseIndex! - y.leaseIndex!)
      .map((m) => ({ state: m.state, lease: leases[m.leaseIndex!]!.token }));
  }

  /**
   * An agent's report under its lease: `in_progress` (progress, sizes; extends the lease, no
   * event), `synced`, or `failed` (an attempt: queued again, or failed at the last). A lease that
   * is not the current one is 409 `lease_lost`; one that ran out is returned to the queue first.
   */
  async report(input: ReportInput, ctx: CallContext): Promise<SiteState> {
    const principal = assertWriter(ctx.principal);
    const status = checkReport(input);
    const key = this.key(input.representationId, input.site);
    const digest = leaseDigest(input.lease);
    const reader = membershipOf(principal);
    const outcome = await this.deps.store.siteSyncTransaction(async (tx) => {
      const state = isLeaseToken(input.lease)
        ? await tx.report({
            key,
            leaseDigest: digest,
            status,
            progress: input.progress,
            size: input.size,
            totalSize: input.totalSize,
            error: status === 'failed' ? (input.error ?? 'the agent reported a failure') : input.error,
            maxAttempts: this.maxAttempts,
            reader,
          })
        : undefined;
      if (state) {
        const events = status === 'in_progress' ? [] : [outboxEvent(stateEvent(newId(), state, 'update', principal))];
        await tx.appendEvents(events);
        return { state, events };
      }
      if (!(await tx.findState(key, reader))) throw noState();
      // Not the current lease. If the lease that is current ran out, its attempt is counted now.
      const lapsed = await tx.lapse({ key }, this.maxAttempts, LAPSE_ERROR);
      const events = lapsed.map((s) => outboxEvent(stateEvent(newId(), s, 'update', undefined)));
      await tx.appendEvents(events);
      return { state: undefined, events };
    });
    this.emit(outcome.events);
    if (!outcome.state) throw leaseLost();
    return outcome.state;
  }

  /** PATCH: pause, queue again or remove; ends a held lease (docs/sitesync.md, "States"). */
  async update(input: { representationId: string; site: string; status: string; priority?: number }, ctx: CallContext): Promise<SiteState> {
    const principal = assertWriter(ctx.principal);
    const to = checkPatch(input);
    const key = this.key(input.representationId, input.site);
    const { state, events } = await this.deps.store.siteSyncTransaction(async (tx) => {
      const current = await tx.findState(key, membershipOf(principal));
      if (!current) throw noState();
      assertPatchTransition(current.status, to);
      const priority = input.priority ?? current.priority;
      if (current.status === to && current.priority === priority) return { state: current, events: [] };
      const state = await tx.setState(key, to, priority, to === 'queued' && current.status !== 'queued');
      const events = [outboxEvent(stateEvent(newId(), state, 'update', principal))];
      await tx.appendEvents(events);
      return { state, events };
    });
    this.emit(events);
    return state;
  }

  /**
   * Returns up to `limit` run-out leases to the queue (or failed at the last attempt) with their
   * events, whichever replica runs it (the rows are taken with SKIP LOCKED). The number moved.
   */
  async sweep(limit = 500): Promise<number> {
    const events = await this.deps.store.siteSyncTransaction(async (tx) => {
      const lapsed = await tx.lapse({ limit }, this.maxAttempts, LAPSE_ERROR);
      const events = lapsed.map((s) => outboxEvent(stateEvent(newId(), s, 'update', undefined)));
      await tx.appendEvents(events);
      return events;
    });
    this.emit(events);
    return events.length;
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** A state key from a path: 404 for an id that cannot name a state. */
  private key(representationId: string, site: string): StateKey {
    if (!isUuid(representationId)) throw AppError.invalid([{ loc: ['representation_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
    return { representationId: representationId.toLowerCase(), site };
  }

  /** The events of a claim: a lapse (queued or failed) where a lease ran out, then the claim. */
  private movedEvents(moved: readonly MovedState[], principal: Principal): OutboxEvent[] {
    const events: OutboxEvent[] = [];
    for (const m of moved) {
      if (m.lapsed && m.leaseIndex !== null) {
        // Lapsed and claimed again in one statement: the log still shows it queued in between.
        const queued: SiteState = { ...m.state, status: 'queued', agent: m.lapsedAgent, error: LAPSE_ERROR, leaseExpiresAt: null };
        events.push(outboxEvent(stateEvent(newId(), queued, 'update', undefined)));
        events.push(outboxEvent(stateEvent(newId(), m.state, 'update', principal)));
      } else {
        events.push(outboxEvent(stateEvent(newId(), m.state, 'update', m.lapsed ? undefined : principal)));
      }
    }
    return events;
  }

  private emit(events: readonly OutboxEvent[]): void {
    for (const e of events) this.deps.bus.emit('committed', e.payload);
  }
}

export type { SiteSyncTransaction };
