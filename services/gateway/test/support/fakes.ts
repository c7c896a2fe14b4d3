/**
 * Fake adapters for unit tests: gRPC peers with the PromiseClient shape (in-memory records,
 * a token table for auth, an in-memory event log), a log capture, and a gateway started on
 * port 0 with them.
 */
import { Readable, Writable } from 'node:stream';
import { AppError, createLogger, ifMatchHolds, isoMicros, newId, Readiness, type CallContext, type Logger } from '@reelbase/lib-platform';
import { createHash, randomBytes } from 'node:crypto';
import type { MediaPeer } from '../../src/clients/media.client.js';
import { addonsv1, schemav1, type authv1, type eventsv1, type mediav1, type notifierv1, type recordsv1 } from '@reelbase/proto';
import type { Peers } from '../../src/clients/peers.js';
import { parseGatewayConfig } from '../../src/config.js';
import { createGatewayBus, type GatewayBus } from '../../src/live/gateway.bus.js';
import { startGateway, type RunningGateway } from '../../src/service.js';
import { TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';

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
const now = () => isoMicros(new Date(), ++tick % 1000);

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
  /** SchedulerService method → the JSON text it answers (unlisted methods echo `{"rpc","request"}`); every call is tracked. */
  schedulerAnswers?: Map<string, string>;
}

export interface FakeNotifierState {
  notifications: { userId: string; n: notifierv1.Notification }[];
  webhooks: Map<string, { w: notifierv1.Webhook; secret?: string }>;
  deliveries: notifierv1.Delivery[];
}

export const emptyNotifierState = (): FakeNotifierState => ({ notifications: [], webhooks: new Map(), deliveries: [] });

/** Fake peers over `state`. */
export function fakePeers(state: FakeState): Peers {
  const track = (peer: string, method: string, req: unknown, ctx: CallContext) => {
    state.calls.push({ method, req, ctx });
    if (state.down.has(peer)) throw AppError.unavailable(`${peer} is unavailable (UNAVAILABLE)`);
    if (state.failNext.has(method)) {
      const err = state.failNext.get(method);
      state.failNext.delete(method);
      throw err;
    }
  };
  const get = (type: string, id: string) => {
    const r = state.records.get(id);
    if (!r || r.entityType !== type || !r.active) throw AppError.notFound(`${type} ${id} not found`);
    return r;
  };
  const knownUser = (id: string) => {
    if (!Object.values(USERS).some((u) => u.id === id)) get('User', id);
  };
  const auth = {
    authenticate: async (req: authv1.AuthenticateRequest, ctx: CallContext) => {
      track('auth', 'authenticate', req, ctx);
      const p = state.tokens.get(req.token);
      if (state.authLatencyMs) await new Promise((r) => setTimeout(r, state.authLatencyMs));
      if (!p) throw new AppError('unauthenticated', 'invalid token');
      const exp = state.tokenExpiry?.get(req.token);
      if (exp !== undefined && exp * 1000 <= Date.now()) throw new AppError('unauthenticated', 'token expired');
      return { principal: p, expiresAtUnix: exp ?? 0 };
    },
    login: async (req: authv1.LoginRequest, ctx: CallContext) => {
      track('auth', 'login', req, ctx);
      if (req.password !== 'correct horse') throw new AppError('unauthenticated', 'wrong email or password');
      return { accessToken: 'admin-token', expiresIn: 43200 };
    },
    register: async (req: authv1.RegisterRequest, ctx: CallContext) => {
      track('auth', 'register', req, ctx);
      if (ctx.principal && ctx.principal.role !== 'Admin') throw new AppError('forbidden', 'only an Admin may register users');
      const user = { id: newId(), entity_type: 'User', data: { name: req.name, email: req.email, role: req.role ?? 'Admin' } };
      return { userJson: JSON.stringify(user), accessToken: ctx.principal ? undefined : 'admin-token', expiresIn: ctx.principal ? undefined : 43200 };
    },
    issueApiKey: async (req: authv1.IssueApiKeyRequest, ctx: CallContext) => {
      track('auth', 'issueApiKey', req, ctx);
      return {
        key: { id: API_KEY_ID, userId: ctx.principal!.userId, name: req.name, prefix: 'svc_abcd', createdAt: now(), expiresAt: req.expiresAt },
        token: 'svc_new',
      };
    },
    listApiKeys: async (req: authv1.ListApiKeysRequest, ctx: CallContext) => {
      track('auth', 'listApiKeys', req, ctx);
      return { items: [{ id: API_KEY_ID, userId: req.userId ?? ctx.principal!.userId, name: 'farm', prefix: 'svc_abcd', createdAt: now() }] };
    },
    revokeApiKey: async (req: authv1.RevokeApiKeyRequest, ctx: CallContext) => {
      track('auth', 'revokeApiKey', req, ctx);
      if (req.id !== API_KEY_ID) throw AppError.notFound('no such key');
      return {};
    },
    rotateSigningKey: async (req: authv1.RotateSigningKeyRequest, ctx: CallContext) => {
      track('auth', 'rotateSigningKey', req, ctx);
      return { kid: 'k', retired: req.retirePrevious ? 2 : 1 };
    },
    revokeUserSessions: async (req: authv1.RevokeUserSessionsRequest, ctx: CallContext) => {
      track('auth', 'revokeUserSessions', req, ctx);
      knownUser(req.userId);
      return { apiKeysRevoked: 1, tokensRevokedBefore: now() };
    },
    // User writes that carry a login address: auth writes the record (here: the fake records below).
    createUser: async (req: authv1.CreateUserRequest, ctx: CallContext) => {
      track('auth', 'createUser', req, ctx);
      return records.createRecord(req.record!, ctx);
    },
    updateUser: async (req: authv1.UpdateUserRequest, ctx: CallContext) => {
      track('auth', 'updateUser', req, ctx);
      return records.updateRecord(req.record!, ctx);
    },
    changePassword: async (req: authv1.ChangePasswordRequest, ctx: CallContext) => {
      track('auth', 'changePassword', req, ctx);
      if (req.oldPassword !== 'correct horse') throw new AppError('forbidden', 'the old password is wrong');
      return {};
    },
    setPassword: async (req: authv1.SetPasswordRequest, ctx: CallContext) => {
      track('auth', 'setPassword', req, ctx);
      if (!state.records.has(req.userId) && !Object.values(USERS).some((u) => u.id === req.userId)) throw AppError.notFound(`User ${req.userId} not found`);
      return {};
    },
    getBootstrap: async (req: authv1.GetBootstrapRequest, ctx: CallContext) => {
      track('auth', 'getBootstrap', req, ctx);
      return { done: state.bootstrapped ?? false };
    },
  };
  const shares = () => (state.shares ??= new Map());
  const usableShare = (token: string, password: string | undefined, sessionLinkId?: string) => {
    const share = shares().get(token);
    if (!share || share.link.revokedAt) throw AppError.notFound('this share link does not exist, was revoked or has expired');
    if (share.password !== undefined && sessionLinkId !== share.link.id && share.password !== password) {
      throw new AppError('unauthenticated', 'this share link needs its password', { code: 'password_required' });
    }
    return share;
  };
  const records = {
    createRecord: async (req: recordsv1.CreateRecordRequest, ctx: CallContext) => {
      track('records', 'createRecord', req, ctx);
      const data = JSON.parse(req.dataJson) as Record<string, unknown>;
      if ('bad_field' in data) throw AppError.invalid([{ loc: ['body', 'data', 'bad_field'], msg: 'unknown field', type: 'value_error' }]);
      const t = now();
      const record: recordsv1.Record = {
        id: req.id ?? newId(),
        entityType: req.entityType,
        projectId: req.projectId,
        status: req.status,
        active: req.active ?? true,
        thumbnailId: req.thumbnailId,
        createdBy: ctx.principal?.userId,
        createdAt: t,
        updatedAt: t,
        dataJson: req.dataJson,
      };
      state.records.set(record.id, record);
      return { record };
    },
    getRecord: async (req: recordsv1.GetRecordRequest, ctx: CallContext) => {
      track('records', 'getRecord', req, ctx);
      return { record: get(req.entityType, req.id) };
    },
    updateRecord: async (req: recordsv1.UpdateRecordRequest, ctx: CallContext) => {
      track('records', 'updateRecord', req, ctx);
      const r = get(req.entityType, req.id);
      if (!ifMatchHolds(req.ifMatch, r.updatedAt)) throw AppError.conflict('stale_write', 'the record changed since it was read');
      const data = { ...(JSON.parse(r.dataJson) as Record<string, unknown>), ...(req.dataJson ? (JSON.parse(req.dataJson) as Record<string, unknown>) : {}) };
      const next = { ...r, dataJson: JSON.stringify(data), updatedAt: now() };
      if (req.status) next.status = req.status.value;
      state.records.set(r.id, next);
      return { record: next };
    },
    retireRecord: async (req: recordsv1.RetireRecordRequest, ctx: CallContext) => {
      track('records', 'retireRecord', req, ctx);
      const r = get(req.entityType, req.id);
      if (!ifMatchHolds(req.ifMatch, r.updatedAt)) throw AppError.conflict('stale_write', 'the record changed since it was read');
      const next = { ...r, active: false };
      state.records.set(r.id, next);
      return { record: next };
    },
    reviveRecord: async (req: recordsv1.ReviveRecordRequest, ctx: CallContext) => {
      track('records', 'reviveRecord', req, ctx);
      const r = state.records.get(req.id);
      if (!r) throw AppError.notFound('not found');
      const next = { ...r, active: true };
      state.records.set(r.id, next);
      return { record: next };
    },
    // The work views over the in-memory records (live = `active` here); a user is known when
    // it is one of USERS or a stored User.
    listNotes: async (req: recordsv1.ListNotesRequest, ctx: CallContext) => {
      track('records', 'listNotes', req, ctx);
      get(req.entityType, req.recordId);
      const names = (r: recordsv1.Record) =>
        ((JSON.parse(r.dataJson) as { links?: { type: string; id: string }[] }).links ?? []).some((l) => l.type === req.entityType && l.id === req.recordId);
      return { notes: [...state.records.values()].filter((r) => r.entityType === 'Note' && r.active && names(r)) };
    },
    listUserTasks: async (req: recordsv1.ListUserTasksRequest, ctx: CallContext) => {
      track('records', 'listUserTasks', req, ctx);
      knownUser(req.userId);
      const assigned = (r: recordsv1.Record) => ((JSON.parse(r.dataJson) as { assignees?: { id: string }[] }).assignees ?? []).some((a) => a.id === req.userId);
      return { tasks: [...state.records.values()].filter((r) => r.entityType === 'Task' && r.active && assigned(r)) };
    },
    // Queries: every live record of the type in one page; a filter naming the field `nope` is refused
    // the way records locates problems (inside `filters`, without the `body` head).
    queryRecords: async (req: recordsv1.QueryRecordsRequest, ctx: CallContext) => {
      track('records', 'queryRecords', req, ctx);
      if (req.filtersJson?.includes('"nope"')) throw AppError.invalid([{ loc: ['filters', 0, 0], msg: 'Shot has no field nope', type: 'unknown_field' }]);
      // A filter naming `slow` runs past records' QUERY_TIMEOUT_MS.
      if (req.filtersJson?.includes('"slow"'))
        throw new AppError('unavailable', 'the query ran longer than 4000 ms and was cancelled: narrow its filter or page with a smaller limit', {
          code: 'query_timeout',
        });
      const items = [...state.records.values()].filter((r) => r.entityType === req.entityType && r.active);
      return { items, nextCursor: req.cursor ? undefined : 'next-page', total: req.includeTotal ? items.length : undefined };
    },
    getTimesheet: async (req: recordsv1.GetTimesheetRequest, ctx: CallContext) => {
      track('records', 'getTimesheet', req, ctx);
      knownUser(req.userId);
      const timeLogs = [...state.records.values()].filter((r) => {
        const d = JSON.parse(r.dataJson) as { user?: { id: string }; date?: string };
        return r.entityType === 'TimeLog' && r.active && d.user?.id === req.userId && d.date !== undefined && d.date >= req.from && d.date <= req.to;
      });
      const totalMinutes = timeLogs.reduce((n, r) => n + Number((JSON.parse(r.dataJson) as { minutes?: number }).minutes ?? 0), 0);
      return { timeLogs, totalMinutes };
    },
    // Share links over the in-memory records: token `share-<n>`; a link's password is kept as given.
    createShareLink: async (req: recordsv1.CreateShareLinkRequest, ctx: CallContext) => {
      track('records', 'createShareLink', req, ctx);
      get('Playlist', req.playlistId);
      const token = `share-${shares().size + 1}`;
      const link: recordsv1.ShareLink = {
        id: newId(),
        playlistId: req.playlistId,
        tokenPrefix: token.slice(0, 6),
        expiresAt: req.expiresAt,
        canComment: req.canComment,
        hasPassword: req.password !== undefined,
        createdBy: ctx.principal?.userId,
        createdAt: now(),
      };
      shares().set(token, { link, password: req.password });
      return { link, token };
    },
    listShareLinks: async (req: recordsv1.ListShareLinksRequest, ctx: CallContext) => {
      track('records', 'listShareLinks', req, ctx);
      get('Playlist', req.playlistId);
      return { links: [...shares().values()].filter((s) => s.link.playlistId === req.playlistId).map((s) => s.link) };
    },
    revokeShareLink: async (req: recordsv1.RevokeShareLinkRequest, ctx: CallContext) => {
      track('records', 'revokeShareLink', req, ctx);
      const share = shares().get(req.token) ?? [...shares().values()].find((s) => s.link.id === req.token);
      if (!share) throw AppError.notFound('no share link with this token or id');
      share.link.revokedAt ??= now();
      return { link: share.link };
    },
    openShare: async (req: recordsv1.OpenShareRequest, ctx: CallContext) => {
      track('records', 'openShare', req, ctx);
      if (state.shareVerifyMs && req.password !== undefined) await new Promise((r) => setTimeout(r, state.shareVerifyMs));
      const share = usableShare(req.token, req.password, req.sessionLinkId);
      const playlist = get('Playlist', share.link.playlistId);
      const data = JSON.parse(playlist.dataJson) as { name?: string; versions?: { id: string }[] };
      const versions = (data.versions ?? []).flatMap((v) => {
        const r = state.records.get(v.id);
        if (!r?.active) return [];
        return [{ id: r.id, code: String((JSON.parse(r.dataJson) as { code?: string }).code ?? ''), status: r.status, notes: [] }];
      });
      return {
        linkId: share.link.id,
        hasPassword: share.link.hasPassword,
        playlistId: playlist.id,
        playlistName: data.name ?? '',
        versions,
        canComment: share.link.canComment,
        expiresAt: share.link.expiresAt,
      };
    },
    checkShareLink: async (req: recordsv1.CheckShareLinkRequest, ctx: CallContext) => {
      track('records', 'checkShareLink', req, ctx);
      const share = [...shares().values()].find((s) => s.link.id === req.linkId);
      if (!share || share.link.revokedAt) throw AppError.notFound('this share link does not exist, was revoked or has expired');
      return { playlistId: share.link.playlistId };
    },
    createGuestNote: async (req: recordsv1.CreateGuestNoteRequest, ctx: CallContext) => {
      track('records', 'createGuestNote', req, ctx);
      const share = usableShare(req.token, req.password, req.sessionLinkId);
      if (!share.link.canComment) throw new AppError('forbidden', 'this share link does not allow comments');
      const data = { content: req.comment, links: [{ type: 'Version', id: req.versionId }], guest_name: req.guestName, verdict: req.verdict };
      const note: recordsv1.Record = { id: newId(), entityType: 'Note', active: true, createdAt: now(), updatedAt: now(), dataJson: JSON.stringify(data) };
      state.records.set(note.id, note);
      return { note };
    },
  };
  const events = {
    listEvents: async (req: eventsv1.ListEventsRequest, ctx: CallContext) => {
      track('events', 'listEvents', req, ctx);
      if (state.eventsLatencyMs) await new Promise((r) => setTimeout(r, state.eventsLatencyMs));
      const lastId = state.events.at(-1)?.id ?? 0;
      let items = state.events.filter((e) => (!req.entityType || e.entityType === req.entityType) && (!req.projectId || e.projectId === req.projectId));
      items = req.after !== undefined ? items.filter((e) => e.id > req.after!) : items.filter((e) => req.before === undefined || e.id < req.before).reverse();
      const cap = Math.min(req.limit, state.eventsPageBudget ?? req.limit);
      const truncated = items.length > cap && cap < req.limit;
      return { items: items.slice(0, cap), lastId, truncated };
    },
  };
  // Every schema RPC answers JSON: a canned answer, or an echo of what it was asked.
  const schema: Record<string, (req: unknown, ctx: CallContext) => Promise<schemav1.JsonResult>> = {};
  for (const method of Object.keys(schemav1.SchemaServiceService)) {
    schema[method] = async (req, ctx) => {
      track('schema', method, req, ctx);
      return { json: state.schemaAnswers?.get(method) ?? JSON.stringify({ rpc: method, request: req }) };
    };
  }
  // Every addons RPC echoes what it was asked (the rules live in the schema service).
  const addons: Record<string, (req: unknown, ctx: CallContext) => Promise<addonsv1.AddonJson>> = {};
  for (const method of Object.keys(addonsv1.AddonsServiceService)) {
    addons[method] = async (req, ctx) => {
      track('addons', method, req, ctx);
      return { json: JSON.stringify({ rpc: method, request: req }) };
    };
  }
  // The notifier's rules as the gateway relies on them: own notifications only (another user's is
  // not_found), webhooks for Admins only, a loopback URL refused at ["url"], unknown ids not_found.
  const me = (ctx: CallContext) => ctx.principal?.userId ?? '';
  const mine = (ctx: CallContext, id: string) => {
    const row = state.notifier.notifications.find((x) => x.n.id === id && x.userId === me(ctx));
    if (!row) throw AppError.notFound(`notification ${id} not found`);
    return row;
  };
  const adminOnly = (ctx: CallContext) => {
    if (ctx.principal?.role !== 'Admin') throw new AppError('forbidden', 'only an Admin may manage webhooks');
  };
  const hook = (id: string) => {
    const h = state.notifier.webhooks.get(id);
    if (!h) throw AppError.notFound(`webhook ${id} not found`);
    return h;
  };
  const refuseLoopback = (url: string | undefined) => {
    if (url && new URL(url).hostname === '127.0.0.1')
      throw AppError.invalid([{ loc: ['url'], msg: 'the host resolves to a loopback address', type: 'value_error' }]);
  };
  const notifier = {
    listNotifications: async (req: notifierv1.ListNotificationsRequest, ctx: CallContext) => {
      track('notifier', 'listNotifications', req, ctx);
      const items = state.notifier.notifications
        .filter((x) => x.userId === me(ctx) && (!req.unreadOnly || !x.n.readAt))
        .map((x) => x.n)
        .reverse();
      const start = req.cursor ? Number(req.cursor) : 0;
      const page = items.slice(start, start + req.limit);
      return { items: page, nextCursor: start + req.limit < items.length ? String(start + req.limit) : undefined };
    },
    markNotificationRead: async (req: notifierv1.MarkNotificationReadRequest, ctx: CallContext) => {
      track('notifier', 'markNotificationRead', req, ctx);
      const row = mine(ctx, req.id);
      row.n = { ...row.n, readAt: row.n.readAt ?? now() };
      return { notification: row.n };
    },
    markAllNotificationsRead: async (req: notifierv1.MarkAllNotificationsReadRequest, ctx: CallContext) => {
      track('notifier', 'markAllNotificationsRead', req, ctx);
      let count = 0;
      for (const row of state.notifier.notifications) {
        if (row.userId !== me(ctx) || row.n.readAt) continue;
        row.n = { ...row.n, readAt: now() };
        count++;
      }
      return { count };
    },
    createWebhook: async (req: notifierv1.CreateWebhookRequest, ctx: CallContext) => {
      track('notifier', 'createWebhook', req, ctx);
      adminOnly(ctx);
      refuseLoopback(req.url);
      const t = now();
      const w: notifierv1.Webhook = {
        id: newId(),
        url: req.url,
        kind: req.kind,
        hasSecret: req.secret !== undefined,
        entityTypes: req.entityTypes,
        actions: req.actions,
        active: req.active ?? true,
        createdBy: me(ctx),
        createdAt: t,
        updatedAt: t,
      };
      state.notifier.webhooks.set(w.id, { w, secret: req.secret });
      return { webhook: w };
    },
    listWebhooks: async (req: notifierv1.ListWebhooksRequest, ctx: CallContext) => {
      track('notifier', 'listWebhooks', req, ctx);
      adminOnly(ctx);
      return { items: [...state.notifier.webhooks.values()].map((h) => h.w) };
    },
    getWebhook: async (req: notifierv1.GetWebhookRequest, ctx: CallContext) => {
      track('notifier', 'getWebhook', req, ctx);
      adminOnly(ctx);
      return { webhook: hook(req.id).w };
    },
    updateWebhook: async (req: notifierv1.UpdateWebhookRequest, ctx: CallContext) => {
      track('notifier', 'updateWebhook', req, ctx);
      adminOnly(ctx);
      const h = hook(req.id);
      refuseLoopback(req.url);
      const secret = req.clearSecret ? undefined : (req.secret ?? h.secret);
      const w: notifierv1.Webhook = {
        ...h.w,
        url: req.url ?? h.w.url,
        kind: req.kind ?? h.w.kind,
        hasSecret: secret !== undefined,
        entityTypes: req.entityTypes?.values ?? h.w.entityTypes,
        actions: req.actions?.values ?? h.w.actions,
        active: req.active ?? h.w.active,
        updatedAt: now(),
      };
      state.notifier.webhooks.set(w.id, { w, secret });
      return { webhook: w };
    },
    deleteWebhook: async (req: notifierv1.DeleteWebhookRequest, ctx: CallContext) => {
      track('notifier', 'deleteWebhook', req, ctx);
      adminOnly(ctx);
      hook(req.id);
      state.notifier.webhooks.delete(req.id);
      state.notifier.deliveries = state.notifier.deliveries.filter((d) => d.webhookId !== req.id);
      return {};
    },
    listDeliveries: async (req: notifierv1.ListDeliveriesRequest, ctx: CallContext) => {
      track('notifier', 'listDeliveries', req, ctx);
      adminOnly(ctx);
      hook(req.webhookId);
      const items = state.notifier.deliveries.filter((d) => d.webhookId === req.webhookId && (!req.status || d.status === req.status)).reverse();
      return { items: items.slice(0, req.limit), nextCursor: items.length > req.limit ? 'more' : undefined };
    },
    retryDelivery: async (req: notifierv1.RetryDeliveryRequest, ctx: CallContext) => {
      track('notifier', 'retryDelivery', req, ctx);
      adminOnly(ctx);
      hook(req.webhookId);
      const i = state.notifier.deliveries.findIndex((d) => d.id === req.deliveryId && d.webhookId === req.webhookId);
      if (i < 0) throw AppError.notFound(`delivery ${req.deliveryId} not found`);
      state.notifier.deliveries[i] = { ...state.notifier.deliveries[i]!, status: 'pending', nextAttemptAt: now() };
      return { delivery: state.notifier.deliveries[i] };
    },
  };
  // The schema service's ActionsService: answers canned JSON (the rules are the service's).
  const actions = {
    listActions: async (req: unknown, ctx: CallContext) => {
      track('actions', 'listActions', req, ctx);
      return { json: JSON.stringify({ items: [{ id: 'launch:maya', kind: 'launch', label: 'Maya', app: 'maya', variant: '2025', order: 0 }] }) };
    },
    executeAction: async (req: { actionId: string }, ctx: CallContext) => {
      track('actions', 'executeAction', req, ctx);
      const out = req.actionId.startsWith('launch:')
        ? { kind: 'launch', token: 'tok/en+1', expires_at: '2026-01-01T00:10:00.000000Z' }
        : { kind: 'webhook', delivery_id: '0190a0b0-0000-7000-8000-0000000000a1' };
      return { json: JSON.stringify(out) };
    },
    takeLaunch: async (req: unknown, ctx: CallContext) => {
      track('actions', 'takeLaunch', req, ctx);
      throw AppError.notFound('no such launch request');
    },
    getCustomActions: async (req: unknown, ctx: CallContext) => {
      track('actions', 'getCustomActions', req, ctx);
      return { json: '{"actions":[]}' };
    },
    putCustomActions: async (req: { bodyJson: string }, ctx: CallContext) => {
      track('actions', 'putCustomActions', req, ctx);
      return { json: req.bodyJson };
    },
  };
  // Site sync (served by records): canned answers, so the routes' mapping and checks can be seen.
  const sitesync = new Proxy(
    {},
    {
      get: (_t, method: string) => async (req: unknown, ctx: CallContext) => {
        track('records', method, req, ctx);
        return state.sitesyncAnswers?.get(method) ?? {};
      },
    },
  );
  // The scheduler (served by schema): canned answers, every call tracked.
  const scheduler = new Proxy(
    {},
    {
      get: (_t, method: string) => async (req: unknown, ctx: CallContext) => {
        track('scheduler', method, req, ctx);
        return { json: state.schedulerAnswers?.get(method) ?? JSON.stringify({ rpc: method, request: req }) };
      },
    },
  );
  return { auth, records, events, schema, addons, media: fakeMedia(state, track), notifier, actions, sitesync, scheduler } as unknown as Peers;
}

/**
 * media-transcode in memory: an upload reads its whole stream (limits as MEDIA_MAX_BYTES in
 * the service are left to the gateway here), stores it and answers a pending Representation;
 * reads answer ranges like the service (range_end clamped, a start past the end refused with
 * `range_not_satisfiable` and the size).
 */
function fakeMedia(state: FakeState, track: (peer: string, method: string, req: unknown, ctx: CallContext) => void): MediaPeer {
  state.media ??= new Map();
  state.reviewables ??= new Map();
  state.uploads ??= [];
  return {
    async upload(header: mediav1.UploadHeader, body: Readable, ctx: CallContext) {
      track('media', 'uploadReviewable', header, ctx);
      if (state.uploadStallMs) await new Promise((r) => setTimeout(r, state.uploadStallMs));
      const parts: Buffer[] = [];
      for await (const chunk of body) parts.push(chunk as Buffer);
      const data = Buffer.concat(parts);
      const prefix = `rv/${randomBytes(16).toString('hex')}`;
      const ext = /\.([a-z0-9]{1,10})$/i.exec(header.fileName)?.[1]?.toLowerCase();
      state.media!.set(`${prefix}/original${ext ? `.${ext}` : ''}`, { contentType: header.contentType, data });
      state.uploads!.push({ header, bytes: data.length });
      const id = newId();
      const at = now();
      const representation: recordsv1.Record = {
        id,
        entityType: 'Representation',
        active: true,
        createdBy: ctx.principal?.userId,
        createdAt: at,
        updatedAt: at,
        dataJson: JSON.stringify({ version: { type: 'Version', id: header.versionId }, transcode_status: 'pending', attempts: 0 }),
      };
      state.reviewables!.set(header.versionId, { status: 'pending', representationId: id, attempts: 0 });
      return { representation, status: 'pending' };
    },
    async finishedOutputs(req: mediav1.FinishedOutputsRequest, ctx: CallContext) {
      track('media', 'finishedOutputs', req, ctx);
      return { outputs: req.versionIds.flatMap((id) => state.finished?.get(id) ?? []) };
    },
    async getReviewable(req: mediav1.GetReviewableRequest, ctx: CallContext) {
      track('media', 'getReviewable', req, ctx);
      const r = state.reviewables!.get(req.versionId);
      if (!r) throw AppError.notFound(`Version ${req.versionId} has no reviewable`);
      return r;
    },
    async read(req: mediav1.ReadMediaRequest, ctx: CallContext) {
      track('media', 'readMedia', req, ctx);
      const o = state.media!.get(req.key);
      if (!o) throw AppError.notFound('no media object with this key');
      const size = o.data.length;
      let start = 0;
      let end = size - 1;
      if (req.hasRange) {
        if (req.rangeStart >= size) {
          throw new AppError('bad_request', 'range not satisfiable', { code: 'range_not_satisfiable', extra: { size } });
        }
        start = req.rangeStart;
        end = Math.min(req.rangeEnd, size - 1);
      }
      const etag = `"${createHash('md5').update(o.data).digest('hex')}"`;
      return { info: { contentType: o.contentType, size, etag, rangeStart: start, rangeEnd: end }, body: Readable.from([o.data.subarray(start, end + 1)]) };
    },
  };
}

/** A log event row as the events service stores it. */
export function logEvent(id: number, entityType = 'Shot', entityId: string = newId()): eventsv1.Event {
  return { id, entityType, entityId, action: 'update', actor: USERS.admin.id, changesJson: JSON.stringify({ n: id }), createdAt: now() };
}

/** Captures pino output as parsed lines. */
export function captureLogs(): { logger: Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger('gateway', 'debug', stream);
  return {
    logger,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export interface TestGateway extends RunningGateway {
  url: string;
  state: FakeState;
  bus: GatewayBus;
  logs: ReturnType<typeof captureLogs>;
  readinessChecks: Map<string, () => Promise<unknown>>;
}

/** Starts a gateway on port 0 with fake peers, a fake live feed and fake readiness checks. */
export async function startTestGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const state: FakeState = {
    tokens: tokenTable(),
    records: new Map(),
    events: [],
    down: new Set(),
    calls: [],
    failNext: new Map(),
    notifier: emptyNotifierState(),
  };
  const logs = captureLogs();
  const bus = createGatewayBus(logs.logger);
  const readinessChecks = new Map<string, () => Promise<unknown>>();
  const readiness = new Readiness(300);
  for (const name of ['auth', 'records', 'events', 'nats']) {
    const check = async () => {
      if (state.down.has(name)) throw new Error(`${name} is down`);
    };
    readinessChecks.set(name, check);
    readiness.add(name, check);
  }
  const config = parseGatewayConfig({ INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET, GATEWAY_PORT: '0', HTTP_PORT: '0', LOG_LEVEL: 'debug', ...env });
  const gw = await startGateway(config, logs.logger, { peers: fakePeers(state), bus, readiness });
  return { ...gw, url: `http://127.0.0.1:${gw.httpPort}`, state, bus, logs, readinessChecks };
}
