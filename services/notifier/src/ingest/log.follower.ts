/**
 * Follows the event log (docs/notifier.md, "Following the log"): reads the events after its
 * position from the events service, oldest first, and applies each page in one transaction —
 * the remembered state, the notifications, one delivery per matching active webhook, and the
 * new position. A crash before the commit leaves the position where it was, so the page is
 * applied again; a crash after it never applies it twice. The position row is locked for the
 * transaction, so replicas apply pages one at a time and never skip or repeat one.
 */
import { newId, type ContractEvent, type Logger } from '@reelbase/lib-platform';
import { chatText, matches, webhookBody } from '../domain/delivery.policy.js';
import { noteAfter, noteLinkIds, noteWriter, notificationsFor, replyToId, taskAfter, type NoteState, type TaskState } from '../domain/rules.js';
import type { NotifierMetrics } from '../metrics.js';
import type { DeliveryRow, EventBodyRow, IngestStore, IngestTx, NotificationRow, UserState } from '../domain/ports.js';

/** The event log as the follower reads it. */
export interface EventSource {
  /** Up to `limit` events after `after`, oldest first, and the log's last id. */
  after(after: number, limit: number): Promise<{ items: ContractEvent[]; lastId: number }>;
  /** The log's last id. */
  lastId(): Promise<number>;
}

export interface LogFollowerOptions {
  repo: IngestStore;
  source: EventSource;
  logger: Logger;
  metrics: NotifierMetrics;
  batchMax: number;
  pollMs: number;
  /**
   * How long an announcement waits before the log is read, so that the events appended meanwhile
   * are applied as one page (one transaction) instead of one each. 0 reads at once.
   */
  coalesceMs?: number;
  /**
   * Listens for the next announcement (one only: {@link LogFollower.nudge} is called when it comes).
   * Called before a read whenever the last announcement listened for has come, and resolved only
   * once the bus will deliver the next one, so an event appended after the read is announced;
   * while a page is read and applied, the events appended meanwhile send the follower nothing.
   * Without it, every announcement reaches {@link LogFollower.nudge}.
   */
  listen?: () => Promise<void>;
  /**
   * Called after a page that wrote deliveries committed, with the webhooks they are for (wakes the
   * delivery engine).
   */
  onDeliveries: (webhookIds: string[]) => void;
}

/** What one applied page wrote. */
export interface PageResult {
  events: number;
  notifications: number;
  deliveries: number;
  /** The webhooks the page queued deliveries for. */
  webhookIds: string[];
}

const USER_ROLES = new Set(['Admin', 'Supervisor', 'Coordinator', 'Artist', 'Viewer']);

export class LogFollower {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private nudged = false;
  private coalesceTimer: NodeJS.Timeout | null = null;
  /** Whether an announcement is listened for (see {@link LogFollowerOptions.listen}). */
  private listening = false;

  constructor(private readonly opts: LogFollowerOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Reads the log now (a `live.events` announcement arrived). */
  nudge(): void {
    this.nudged = true;
    this.listening = false;
    const delay = this.opts.coalesceMs ?? 0;
    if (delay <= 0) {
      this.wake?.();
      return;
    }
    this.coalesceTimer ??= setTimeout(() => {
      this.coalesceTimer = null;
      this.wake?.();
    }, delay);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.coalesceTimer) clearTimeout(this.coalesceTimer);
    this.coalesceTimer = null;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      let applied = 0;
      try {
        if (!this.listening && this.opts.listen) {
          await this.opts.listen();
          this.listening = true;
        }
        this.nudged = false;
        applied = (await this.step()).events;
        failures = 0;
      } catch (err) {
        failures++;
        this.opts.metrics.followErrors.inc();
        if (failures === 1 || failures % 30 === 0) this.opts.logger.warn({ err, failures }, 'reading the event log failed; retrying');
      }
      // A full page may have more behind it: read on at once. A shorter one reached the end of the
      // log; what is appended later is announced (or found by the poll).
      if (applied >= this.opts.batchMax || !this.running) continue;
      if (this.nudged && !this.coalesceTimer) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.opts.pollMs);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** Applies the next page of the log (at most `batchMax` events); 0 events when up to date. */
  async step(): Promise<PageResult> {
    const { repo, source, batchMax } = this.opts;
    const result = await repo.transaction(async (trx) => {
      let state = await trx.lockFollowState();
      if (!state) {
        // First start: what the log already holds teaches the state but notifies nobody.
        await trx.initFollowState(await source.lastId());
        state = await trx.lockFollowState();
        if (!state) throw new Error('follow state missing after init');
      }
      const page = await source.after(state.lastEventId, batchMax);
      this.opts.metrics.followLag.set(Math.max(0, page.lastId - state.lastEventId - page.items.length));
      if (page.items.length === 0) return { events: 0, notifications: 0, deliveries: 0, webhookIds: [] };
      const res = await this.apply(trx, page.items, state.liveFrom);
      await trx.setLastEventId(page.items.at(-1)!.id);
      return res;
    });
    if (result.events > 0) {
      this.opts.metrics.eventsApplied.inc(result.events);
      this.opts.metrics.notifications.inc(result.notifications);
    }
    if (result.deliveries > 0) this.opts.onDeliveries(result.webhookIds);
    return result;
  }

  private async apply(trx: IngestTx, events: ContractEvent[], liveFrom: number): Promise<PageResult> {
    const taskIds = new Set<string>();
    const linkIds = new Set<string>();
    const replyIds = new Set<string>();
    const userIds = new Set<string>();
    const recordIds = new Set<string>();
    for (const ev of events) {
      if (ev.entity_type === 'Task') taskIds.add(ev.entity_id);
      for (const id of noteLinkIds(ev)) linkIds.add(id);
      const reply = replyToId(ev);
      if (reply) replyIds.add(reply);
      if (ev.actor) userIds.add(ev.actor);
      if (ev.entity_type === 'User') userIds.add(ev.entity_id);
      recordIds.add(ev.entity_id);
    }
    const webhooks = await trx.activeWebhooks();
    const anyChat = webhooks.some((w) => w.kind === 'chat');
    const tasks = new Map<string, TaskState>();
    for (const t of await trx.tasks([...taskIds, ...linkIds], [...linkIds])) tasks.set(t.taskId, t);
    const notes = await trx.notes([...replyIds]);
    const users = new Map((await trx.users([...userIds])).map((u) => [u.userId, u]));
    const labels = anyChat ? await trx.labels([...recordIds]) : new Map<string, string>();
    const dirtyTasks = new Set<string>();
    const dirtyNotes = new Map<string, NoteState>();
    const dirtyUsers = new Set<string>();
    const dirtyLabels = new Map<string, string>();
    const notifications: NotificationRow[] = [];
    const bodies: EventBodyRow[] = [];
    const deliveries: DeliveryRow[] = [];

    for (const ev of events) {
      let before: TaskState | null = null;
      let after: TaskState | null = null;
      if (ev.entity_type === 'Task') {
        before = tasks.get(ev.entity_id) ?? null;
        after = taskAfter(ev, before);
        tasks.set(ev.entity_id, after);
        dirtyTasks.add(ev.entity_id);
      }
      if (ev.entity_type === 'Note') {
        const note = noteAfter(ev, notes.get(ev.entity_id) ?? null);
        if (note) {
          notes.set(ev.entity_id, note);
          dirtyNotes.set(ev.entity_id, note);
        }
      }
      if (ev.entity_type === 'User') {
        const u: UserState = users.get(ev.entity_id) ?? { userId: ev.entity_id, name: null, role: null, retired: false };
        const c = ev.changes;
        const next: UserState = { ...u, retired: ev.action === 'delete' };
        if (typeof c.name === 'string') next.name = c.name;
        else if (next.name === null && typeof c.email === 'string') next.name = c.email;
        if (Object.hasOwn(c, 'role')) next.role = typeof c.role === 'string' && USER_ROLES.has(c.role) ? c.role : null;
        users.set(ev.entity_id, next);
        dirtyUsers.add(ev.entity_id);
      }
      const label = typeof ev.changes.code === 'string' ? ev.changes.code : typeof ev.changes.name === 'string' ? ev.changes.name : null;
      if (label !== null && label.length <= 200) {
        labels.set(ev.entity_id, label);
        dirtyLabels.set(ev.entity_id, label);
      }
      if (ev.id <= liveFrom) continue;

      const replied = replyToId(ev);
      const drafts = notificationsFor(ev, {
        taskBefore: before,
        taskAfter: after,
        linkedTasks: ev.entity_type === 'Note' && ev.action === 'create' ? [...tasks.values()] : [],
        repliedAuthor: replied ? noteWriter(notes.get(replied)) : null,
      });
      for (const d of drafts) {
        notifications.push({
          id: newId(),
          userId: d.userId,
          kind: d.kind,
          recordType: d.recordType,
          recordId: d.recordId,
          eventId: ev.id,
          actor: ev.actor,
          projectId: ev.project_id,
        });
      }
      const targets = webhooks.filter((w) => matches(w, ev));
      if (targets.length === 0) continue;
      let text: string | null = null;
      if (targets.some((w) => w.kind === 'chat')) {
        const actor = ev.actor ? users.get(ev.actor) : undefined;
        text = chatText(ev, { actor: actor?.name ?? null, record: labels.get(ev.entity_id) ?? null });
      }
      bodies.push({ id: ev.id, body: webhookBody(ev), chatText: text, eventAt: ev.created_at });
      for (const w of targets) {
        deliveries.push({ id: newId(), webhookId: w.id, eventId: ev.id, entityType: ev.entity_type, entityId: ev.entity_id, action: ev.action });
      }
    }

    await trx.upsertTasks([...dirtyTasks].map((id) => tasks.get(id)!));
    await trx.upsertNotes(dirtyNotes);
    await trx.upsertUsers([...dirtyUsers].map((id) => users.get(id)!));
    await trx.upsertLabels(dirtyLabels);
    const written = await trx.insertNotifications(notifications);
    const queued = await trx.insertDeliveries(bodies, deliveries);
    return { events: events.length, notifications: written, deliveries: queued, webhookIds: [...new Set(deliveries.map((d) => d.webhookId))] };
  }
}
