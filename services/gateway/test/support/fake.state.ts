/**
 * The state the fake peers share: the users and their tokens, the in-memory tables each fake
 * reads and writes, the call log every fake call is tracked in, and the lookups more than one
 * fake relies on.
 */
import { AppError, isoMicros, newId, type CallContext } from '@reelbase/lib-platform';
import type { authv1, eventsv1, mediav1, notifierv1, recordsv1 } from '@reelbase/proto';

export const USERS = {
  admin: { id: '0190a0b0-0000-7000-8000-000000000001', role: 'Admin' },
  supervisor: { id: '0190a0b0-0000-7000-8000-000000000002', role: 'Supervisor' },
  artist: { id: '0190a0b0-0000-7000-8000-000000000003', role: 'Artist' },
  viewer: { id: '0190a0b0-0000-7000-8000-000000000004', role: 'Viewer' },
  coordinator: { id: '0190a0b0-0000-7000-8000-000000000005', role: 'Coordinator' },
} as const;

export const API_KEY_ID = '0190a0b0-0000-7000-8000-0000000000aa';

/** token → principal; `svc_artist` is an API key of the artist. */
export function tokenTable(): Map<string, authv1.Principal> {
  const t = new Map<string, authv1.Principal>();
  for (const [name, u] of Object.entries(USERS)) {
    t.set(`${name}-token`, { userId: u.id, role: u.role, authKind: 'token', email: `${name}@example.com`, cacheSeconds: 60 });
  }
  t.set('svc_artist', { userId: USERS.artist.id, role: 'Artist', authKind: 'api_key', apiKeyId: API_KEY_ID, email: 'artist@example.com', cacheSeconds: 60 });
  return t;
}

let tick = 0;
/** Microsecond timestamps that never repeat, so ETags always change on a write. */
export const now = () => isoMicros(new Date(), ++tick % 1000);

export interface FakeState {
  tokens: Map<string, authv1.Principal>;
  records: Map<string, recordsv1.Record>;
  events: eventsv1.Event[];
  /** Names of peers that answer `unavailable`. */
  down: Set<string>;
  calls: { method: string; req: unknown; ctx: CallContext }[];
  /** Milliseconds every events call takes (a slow event log). */
  eventsLatencyMs?: number;
  /** Most events per ListEvents page, as the byte budget of large events would cut it (truncated). */
  eventsPageBudget?: number;
  /** Milliseconds an authenticate call takes AFTER reading the token table (a slow auth). */
  authLatencyMs?: number;
  /** method name → error the next call of that method throws (a peer's own refusal). */
  failNext: Map<string, unknown>;
  /** Whether the first user exists (auth's GetBootstrap answer). */
  bootstrapped?: boolean;
  /** token → its `exp` (Unix seconds); tokens not listed never expire. */
  tokenExpiry?: Map<string, number>;
  /** Share links by token, with the password they were created with. */
  shares?: Map<string, { link: recordsv1.ShareLink; password?: string }>;
  /** schema RPC name → the JSON text it answers; unlisted RPCs echo `{"rpc", "request"}`. */
  schemaAnswers?: Map<string, string>;
  /** media-transcode's store: key → object; uploads add `rv/<hex>/original<.ext>`. */
  media?: Map<string, { contentType: string; data: Buffer }>;
  /** version id → its latest reviewable. */
  reviewables?: Map<string, mediav1.GetReviewableResponse>;
  /** Milliseconds records takes to answer OpenShare when a password is sent (a verification). */
  shareVerifyMs?: number;
  /** media-transcode's finished outputs per version id (FinishedOutputs). */
  finished?: Map<string, mediav1.FinishedOutput>;
  /** Bytes each upload received, in order (what the fake media service read). */
  uploads?: { header: mediav1.UploadHeader; bytes: number }[];
  /** The notifier's tables: notifications with their owner, webhooks (with their secret), deliveries. */
  notifier: FakeNotifierState;
  /** Milliseconds the fake media service waits before reading an upload's bytes (a slow store). */
  uploadStallMs?: number;
  /** SiteSyncService method → its answer (unlisted methods answer `{}`); every call is tracked. */
  sitesyncAnswers?: Map<string, unknown>;
  /** FarmService method → its answer (unlisted methods answer `{}`); every call is tracked. */
  farmAnswers?: Map<string, unknown>;
  /** SchedulerService method → the JSON text it answers (unlisted methods echo `{"rpc","request"}`); every call is tracked. */
  schedulerAnswers?: Map<string, string>;
}

export interface FakeNotifierState {
  notifications: { userId: string; n: notifierv1.Notification }[];
  webhooks: Map<string, { w: notifierv1.Webhook; secret?: string }>;
  deliveries: notifierv1.Delivery[];
}

export const emptyNotifierState = (): FakeNotifierState => ({ notifications: [], webhooks: new Map(), deliveries: [] });

/** Records a call in `state.calls`, then fails it as `state` says: a peer that is down, a refusal queued for the method. */
export type Track = (peer: string, method: string, req: unknown, ctx: CallContext) => void;

export function tracker(state: FakeState): Track {
  return (peer, method, req, ctx) => {
    state.calls.push({ method, req, ctx });
    if (state.down.has(peer)) throw AppError.unavailable(`${peer} is unavailable (UNAVAILABLE)`);
    if (state.failNext.has(method)) {
      const err = state.failNext.get(method);
      state.failNext.delete(method);
      throw err;
    }
  };
}

/** The live record of `type` with `id`, or not_found. */
export function liveRecord(state: FakeState, type: string, id: string): recordsv1.Record {
  const r = state.records.get(id);
  if (!r || r.entityType !== type || !r.active) throw AppError.notFound(`${type} ${id} not found`);
  return r;
}

/** A user is known when it is one of USERS or a stored User. */
export function knownUser(state: FakeState, id: string): void {
  if (!Object.values(USERS).some((u) => u.id === id)) liveRecord(state, 'User', id);
}

/** A log event row as the events service stores it. */
export function logEvent(id: number, entityType = 'Shot', entityId: string = newId()): eventsv1.Event {
  return { id, entityType, entityId, action: 'update', actor: USERS.admin.id, changesJson: JSON.stringify({ n: id }), createdAt: now() };
}

/** A link to a User, as a Project's `members` holds it. */
export const userLink = (id: string) => ({ type: 'User', id });

/** Stores Project `id` with `data` (e.g. `restricted`, `members`), as records holds it. */
export function storeProject(state: FakeState, id: string, data: Record<string, unknown>): void {
  const t = now();
  state.records.set(id, { id, entityType: 'Project', active: true, createdAt: t, updatedAt: t, dataJson: JSON.stringify(data) });
}
