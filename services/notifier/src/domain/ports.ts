/**
 * What the notifier needs from outside, as ports, all kept in PostgreSQL (store/): what the API
 * reads and changes (a user's notifications, webhooks and their deliveries), what the log
 * follower remembers and writes per page, what the delivery engine claims and records, and the
 * retention of the delivery log.
 */
import type { NoteState, TaskState } from './rules.js';

export interface NotificationView {
  id: string;
  kind: string;
  recordType: string;
  recordId: string;
  eventId: number | null;
  actor: string | null;
  createdAt: string;
  readAt: string | null;
}

export interface WebhookView {
  id: string;
  url: string;
  kind: string;
  hasSecret: boolean;
  entityTypes: string[];
  actions: string[];
  active: boolean;
  disabledAt: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryRow {
  id: string;
  webhookId: string;
  eventId: number;
  entityType: string;
  entityId: string;
  action: string;
}

/** A delivery as listed: the row the follower queued, and what its attempts recorded. */
export interface DeliveryView extends DeliveryRow {
  status: string;
  attempts: number;
  statusCode: number | null;
  latencyMs: number | null;
  response: string | null;
  error: string | null;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** A webhook as it is created (the secret in clear; the store seals it). */
export interface NewWebhook {
  id: string;
  url: string;
  kind: string;
  secret: string | null;
  entityTypes: string[];
  actions: string[];
  active: boolean;
  createdBy: string | null;
}

/** The fields of a webhook change that are set (`secret: null` removes it). */
export interface WebhookChange {
  url?: string;
  kind?: string;
  secret?: string | null;
  entityTypes?: string[];
  actions?: string[];
  active?: boolean;
}

/** A retry asked for by hand: no such webhook, no such delivery of it, or the delivery put back in line. */
export type RetryOutcome = { kind: 'no_webhook' } | { kind: 'no_delivery' } | { kind: 'retried'; delivery: DeliveryView };

/** Notifications, webhooks and deliveries as the API reads and changes them. */
export interface NotifierApiStore {
  /**
   * `limit + 1` notifications of `userId` below `before` (newest first). Each of these takes
   * `hidden`, the projects the user may not read (docs/api-notes.md, "Restricted projects"): a
   * notification about one of them, or whose project is not known yet while `hidden` is not
   * empty, is left alone as if it did not exist.
   */
  notifications(userId: string, unreadOnly: boolean, limit: number, before: string | null, hidden: readonly string[]): Promise<NotificationView[]>;
  /** Marks one of `userId`'s notifications read (kept as first read); undefined when it is not theirs (or hidden). */
  markRead(userId: string, id: string, hidden: readonly string[]): Promise<NotificationView | undefined>;
  /** Marks every unread notification of `userId` read (those hidden stay as they are); how many. */
  markAllRead(userId: string, hidden: readonly string[]): Promise<number>;
  createWebhook(w: NewWebhook): Promise<WebhookView>;
  webhooks(): Promise<WebhookView[]>;
  webhook(id: string): Promise<WebhookView | undefined>;
  /**
   * Applies a change. Switching a webhook on clears the notifier's disabling and its failure
   * streak, so it is judged afresh. Undefined when there is no such webhook.
   */
  updateWebhook(id: string, c: WebhookChange): Promise<WebhookView | undefined>;
  /** Deletes the webhook and its deliveries; false when there was none. */
  deleteWebhook(id: string): Promise<boolean>;
  /** `limit + 1` deliveries of a webhook below `before` (newest first); null when there is no such webhook. */
  deliveries(webhookId: string, status: string | null, limit: number, before: string | null): Promise<DeliveryView[] | null>;
  /**
   * In one transaction: puts a delivery back in line for an attempt now, with a fresh retry
   * window; a delivery already delivered is sent again (a receiver asked for it). A webhook the
   * notifier switched off is switched on again (an Admin retrying by hand says the target is
   * back); one an Admin switched off stays off, and the delivery waits for it.
   */
  retry(webhookId: string, deliveryId: string): Promise<RetryOutcome>;
}

export interface FollowState {
  lastEventId: number;
  liveFrom: number;
}

/** A remembered user. */
export interface UserState {
  userId: string;
  name: string | null;
  role: string | null;
  retired: boolean;
}

/** A webhook as the follower matches events against it. */
export interface ActiveWebhook {
  id: string;
  kind: string;
  entityTypes: string[];
  actions: string[];
}

export interface NotificationRow {
  id: string;
  userId: string;
  kind: string;
  recordType: string;
  recordId: string;
  eventId: number | null;
  actor: string | null;
  /** The project of the record (the event's `project_id`); null for a studio-wide record or a webhook. */
  projectId: string | null;
}

export interface EventBodyRow {
  id: number;
  body: string;
  chatText: string | null;
  eventAt: string;
}

/** A claimed delivery with what its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  claim: string;
  /** The webhook's id; empty for an action delivery. */
  webhookId: string;
  /** Set on the delivery of a webhook action (no webhook, no event: `eventId` is 0). */
  actionId?: string;
  eventId: number;
  url: string;
  kind: string;
  secret: string | null;
  body: string;
  chatText: string | null;
  attempts: number;
  /** Milliseconds since the event committed. */
  sinceEventMs: number;
}

/** What an attempt gave. */
export interface AttemptResult {
  delivered: boolean;
  statusCode: number | null;
  latencyMs: number;
  response: string | null;
  error: string | null;
}

/** The log follower's statements, all on the transaction of one page. */
export interface IngestTx {
  /** The follow position, locked for this transaction (one follower applies a batch at a time). */
  lockFollowState(): Promise<FollowState | null>;
  /** Creates the follow position at the first start (no-op when another replica did). */
  initFollowState(liveFrom: number): Promise<void>;
  setLastEventId(id: number): Promise<void>;
  /** Tasks whose id is in `ids` or whose entity is in `entityIds`. */
  tasks(ids: string[], entityIds: string[]): Promise<TaskState[]>;
  upsertTasks(tasks: TaskState[]): Promise<void>;
  /** What is remembered of the notes in `ids` (a note never seen is absent). */
  notes(ids: string[]): Promise<Map<string, NoteState>>;
  upsertNotes(notes: Map<string, NoteState>): Promise<void>;
  users(ids: string[]): Promise<UserState[]>;
  upsertUsers(users: UserState[]): Promise<void>;
  /** The ids of the live Admins. */
  admins(): Promise<string[]>;
  labels(ids: string[]): Promise<Map<string, string>>;
  upsertLabels(labels: Map<string, string>): Promise<void>;
  activeWebhooks(): Promise<ActiveWebhook[]>;
  /** Writes the notifications (a repeated one is skipped); how many were written. */
  insertNotifications(rows: NotificationRow[]): Promise<number>;
  /** Writes the event bodies and the deliveries (repeated ones skipped); how many deliveries were written. */
  insertDeliveries(bodies: EventBodyRow[], rows: DeliveryRow[]): Promise<number>;
}

/** What the log follower remembers and writes. */
export interface IngestStore {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: IngestTx) => Promise<T>): Promise<T>;
}

/** The notifications whose project is not known yet (written before they kept it), by event. */
export interface ProjectBackfillStore {
  /** Up to `limit` distinct event ids above `after` with a notification whose project is unknown, ascending. */
  unknownProjectEvents(after: number, limit: number): Promise<number[]>;
  /** Stores each event's project on its notifications; how many notifications changed. */
  setNotificationProjects(found: ReadonlyArray<{ eventId: number; projectId: string | null }>): Promise<number>;
}

/** What the delivery engine claims and records. */
export interface DeliveryStore {
  /** Claims up to `limit` due heads, the longest-waiting first, leasing each for `leaseMs`. */
  claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /**
   * Records delivered attempts (each only while its claim still holds) and, for each marked
   * `chain`, claims its webhook's next due head; the deliveries recorded and the heads claimed.
   */
  deliveredMany(
    items: { d: ClaimedDelivery; r: AttemptResult; chain: boolean }[],
    leaseMs: number,
  ): Promise<{ recorded: Set<string>; next: ClaimedDelivery[] }>;
  /** Records a failed attempt: its new status, or null when the claim was lost. */
  failed(d: ClaimedDelivery, r: AttemptResult, delayMs: number, windowMs: number): Promise<'pending' | 'dead' | null>;
  /**
   * In one transaction: switches the webhook off when it has been failing for `windowMs`, marks
   * dead its deliveries whose window is over, and writes `notify(admins)` (the live Admins' ids).
   * Null when it was not switched off by this call.
   */
  disableIfFailing(webhookId: string, windowMs: number, notify: (admins: string[]) => NotificationRow[]): Promise<{ admins: number; dead: number } | null>;
  /** Pending deliveries per active webhook, and the number of dead deliveries. */
  backlog(): Promise<{ perWebhook: Map<string, number>; dead: number }>;
  /** Milliseconds until the earliest head of an active webhook is due (null when none waits). */
  nextDueInMs(): Promise<number | null>;
}

/** A webhook action run by a user, to be delivered (docs/notifier.md, "Action deliveries"). */
export interface NewActionDelivery {
  id: string;
  actionId: string;
  url: string;
  /** In clear; sealed by the store. */
  secret: string | null;
  body: string;
}

/**
 * The deliveries of webhook actions: each its own line (no order to keep), claimed, leased and
 * recorded like a webhook's head, with the same retry window, then dead.
 */
export interface ActionDeliveryStore {
  /** Queues the delivery (a repeated id is kept as it was); its id. */
  enqueue(d: NewActionDelivery): Promise<string>;
  /** Claims up to `limit` due deliveries, the longest-waiting first, leasing each for `leaseMs`. */
  claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /** Records delivered attempts (each only while its claim holds); the ids recorded. */
  delivered(items: { d: ClaimedDelivery; r: AttemptResult }[]): Promise<Set<string>>;
  /** Records a failed attempt like {@link DeliveryStore.failed}: retried, or dead once the window is over. */
  failed(d: ClaimedDelivery, r: AttemptResult, delayMs: number, windowMs: number): Promise<'pending' | 'dead' | null>;
  /** Milliseconds until the earliest pending delivery is due (null when none waits). */
  nextDueInMs(): Promise<number | null>;
}

/** The retention of the delivery log. */
export interface RetentionStore {
  /** Deletes up to `batch` delivered deliveries created and delivered before `cutoff`; how many. */
  pruneDelivered(cutoff: Date, batch: number): Promise<number>;
  /** Deletes up to `batch` event bodies no delivery refers to, older than `cutoff`; how many. */
  pruneBodies(cutoff: Date, batch: number): Promise<number>;
}
