/**
 * The WebSocket endpoint `/events/ws` (docs/api-notes.md, Events): a subscriber of the gateway bus. Every
 * handshake completes; a bad token is then closed with 1008 before any message. Each socket
 * gets an {@link EventCursor} so it sees every event once, in order, from `since` or from the
 * log's end at connect time. Revocations re-check the socket's token within seconds, and every
 * socket's token is re-checked with auth every `principalRecheckMs` anyway (one call per distinct
 * token), so a lost revocation message cannot keep a revoked credential on the feed.
 *
 * Each socket sends only the events of projects its principal may read (docs/api-notes.md,
 * "Restricted projects"): its hidden set comes from the project access map, and is made again
 * whenever the map changes (a Project event changes it before the event is offered to any socket)
 * and whenever the socket's principal is re-checked, so a revoked member stops receiving the
 * project's events at once, without reconnecting. Events left out still move the cursor. While the
 * map is unknown, a socket that does not read every project is closed with 1013.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { contractEventFromProto, IntervalLoop, isAppError, redactUrl, type CallContext, type Logger, type PromiseClient } from '@reelbase/lib-platform';
import type { eventsv1 } from '@reelbase/proto';
import { WebSocket, WebSocketServer } from 'ws';
import type { AuthCache, AuthEntry } from '../domain/auth.cache.js';
import type { ProjectAccess } from '../domain/project.access.js';
import { AGENT_KEY_REFUSAL } from '../domain/role.rule.js';
import type { AuthedPrincipal } from '../http/locals.js';
import { requestIdFrom } from '../http/request.context.js';
import type { GatewayBus, LiveItem, Revocation } from '../live/gateway.bus.js';
import type { LiveInterest } from '../live/nats.feed.js';
import { WsQuery } from '../schemas/event.schema.js';
import { EventCursor, type EventLog } from './event.cursor.js';

export interface HubOptions {
  auth: AuthCache;
  events: PromiseClient<eventsv1.EventsServiceClient>;
  bus: GatewayBus;
  logger: Logger;
  pingMs: number;
  /** How often every socket's credential is re-checked with auth, past the cache (default 60000). */
  principalRecheckMs?: number;
  /** Bytes queued in a socket beyond which the client counts as too slow. */
  maxBufferedBytes?: number;
  /** The live feed, told when sockets need every row (live/nats.feed.ts); absent with a bus of tests. */
  live?: LiveInterest;
  /** Who may read which restricted project: each socket's hidden projects. */
  access: ProjectAccess;
}

interface Conn {
  ws: WebSocket;
  token: string;
  principal: AuthedPrincipal;
  /** The projects whose events this socket never sends (the principal may not read them). */
  hidden: ReadonlySet<string>;
  cursor: EventCursor;
  alive: boolean;
  rechecking: boolean;
  /** A re-check was asked for while one was running: run another when it ends. */
  recheckAgain: boolean;
  /** Closes the socket when its login token expires. */
  expiry?: NodeJS.Timeout;
}

/** A caller allowed in, with where its cursor starts. */
interface Admitted {
  ctx: CallContext;
  token: string;
  principal: AuthedPrincipal;
  hidden: ReadonlySet<string>;
  start: number;
  /** The login token's expiry (ms since the epoch); undefined for an API key. */
  tokenExpiresAt?: number;
}

/** The outcome of checking an upgrade request. */
type Admission = Admitted | { refuse: [code: number, reason: string] };

const HIGH_WATER = 1 << 20;
const WRITABLE_TIMEOUT_MS = 30_000;
/** setTimeout's longest delay; a later expiry re-arms the timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class EventsHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  private readonly conns = new Set<Conn>();
  /** Every socket, registered or still authenticating (closed on stop). */
  private readonly sockets = new Set<WebSocket>();
  /** Pings every socket and drops the ones that did not answer the last ping. */
  private readonly heartbeats: IntervalLoop;
  /** Asks auth again about every socket's token (each re-check runs beside the tick). */
  private readonly rechecks: IntervalLoop;
  private readonly unsubscribe: Array<() => void>;
  private readonly maxBuffered: number;
  private closing = false;
  /** Upgrades being authenticated, not yet in {@link sockets}. */
  private pending = 0;

  constructor(private readonly opts: HubOptions) {
    this.maxBuffered = opts.maxBufferedBytes ?? 16 << 20;
    this.unsubscribe = [
      opts.bus.subscribe('event', (item) => this.onEvent(item)),
      opts.bus.subscribe('revocation', (r) => this.onRevocation(r)),
      opts.access.subscribe(() => this.onAccessChange()),
    ];
    const failed = (err: unknown) => opts.logger.warn({ err }, 'websocket housekeeping failed');
    this.heartbeats = new IntervalLoop(opts.pingMs, () => this.heartbeat(), failed);
    this.heartbeats.start();
    this.rechecks = new IntervalLoop(opts.principalRecheckMs ?? 60_000, () => this.recheckAll(), failed);
    this.rechecks.start();
  }

  /** Registered sockets. */
  get size(): number {
    return this.conns.size;
  }

  /** Sockets open or being opened (what WS_MAX_CONNECTIONS bounds). */
  get open(): number {
    return this.sockets.size + this.pending;
  }

  /** With no socket open or being opened, the feed may stop taking every row. */
  private settled(): void {
    if (this.open === 0) this.opts.live?.idle();
  }

  /**
   * Takes over an HTTP upgrade for `/events/ws`. The token is checked and the start of the
   * cursor read BEFORE the handshake completes, so a client that writes as soon as its socket
   * opens is guaranteed to see that write's event. A refused token still gets a completed
   * handshake, then 1008 before any message (docs/api-notes.md, Events).
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.pending++;
    void this.admit(req).then(
      (admission) => this.complete(req, socket, head, admission),
      (err: unknown) => {
        this.opts.logger.error({ err }, 'websocket accept failed');
        this.complete(req, socket, head, { refuse: [1011, 'internal error'] });
      },
    );
  }

  private complete(req: IncomingMessage, socket: Duplex, head: Buffer, admission: Admission): void {
    this.pending--;
    if (socket.destroyed) return this.settled();
    // A handshake that finishes while the hub closes is turned away, or close() would miss it.
    if (this.closing) admission = { refuse: [1001, 'server shutting down'] };
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on('close', () => {
        this.sockets.delete(ws);
        this.settled();
      });
      ws.on('error', (err) => this.opts.logger.debug({ err }, 'websocket error'));
      if ('refuse' in admission) return ws.close(...admission.refuse);
      this.register(ws, admission);
    });
  }

  /** Authenticates the caller and fixes where its cursor starts. */
  private async admit(req: IncomingMessage): Promise<Admission> {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    const url = new URL(req.url ?? '/', 'http://gateway');
    this.opts.logger.info({ request_id: requestId, route: '/events/ws', url: redactUrl(req.url ?? '') }, 'websocket opened');
    const parsed = WsQuery.safeParse(Object.fromEntries(url.searchParams));
    if (!parsed.success) {
      const missing = !url.searchParams.get('token');
      return { refuse: [1008, missing ? 'missing token' : 'invalid since'] };
    }
    const ctx: CallContext = { requestId };
    let principal: AuthedPrincipal;
    let tokenExpiresAt: number | undefined;
    try {
      const entry = await this.opts.auth.authenticate(parsed.data.token, ctx);
      principal = entry.principal;
      tokenExpiresAt = entry.tokenExpiresAt;
    } catch (err) {
      if (isAppError(err) && err.kind === 'unauthenticated') return { refuse: [1008, 'invalid token'] };
      return { refuse: [1013, 'authentication unavailable'] };
    }
    // An agent key reads no events: refused like a credential the feed does not take (docs/api-notes.md, "Authentication").
    if (principal.scope === 'agent') return { refuse: [1008, AGENT_KEY_REFUSAL] };
    ctx.principal = principal;
    let hidden: ReadonlySet<string>;
    try {
      hidden = this.opts.access.hiddenFor(principal);
    } catch {
      return { refuse: [1013, 'project access unavailable'] };
    }
    // Every row reaches the bus from here on, before the cursor's start is fixed and its first
    // catch-up reads the log.
    await this.opts.live?.follow();
    let start = parsed.data.since;
    if (start === undefined) {
      // Read before subscribing: rows appended meanwhile are replayed by the first catch-up.
      try {
        start = (await this.opts.events.listEvents({ limit: 1, hiddenProjectIds: [] }, ctx)).lastId;
      } catch {
        return { refuse: [1013, 'event log unavailable'] };
      }
    }
    return { ctx, token: parsed.data.token, principal, hidden, start, tokenExpiresAt };
  }

  private register(ws: WebSocket, a: Admitted): void {
    const conn: Conn = {
      ws,
      token: a.token,
      principal: a.principal,
      hidden: a.hidden,
      alive: true,
      rechecking: false,
      recheckAgain: false,
      cursor: undefined as unknown as EventCursor,
    };
    conn.cursor = new EventCursor({
      start: a.start,
      log: this.logFor(a.ctx),
      send: (item) => this.send(conn, item),
      fail: (code, reason) => ws.close(code, reason),
      writable: () => this.writable(ws),
    });
    this.conns.add(conn);
    // The map may have changed while the socket was being admitted.
    this.rehide(conn);
    if (a.tokenExpiresAt !== undefined) this.closeAt(conn, a.tokenExpiresAt);
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.on('close', () => {
      this.conns.delete(conn);
      clearTimeout(conn.expiry);
      conn.cursor.close();
    });
    void conn.cursor.start();
  }

  /** Closes `conn` with 1008 when its login token expires (the token is no longer valid then). */
  private closeAt(conn: Conn, at: number): void {
    const delay = at - Date.now();
    if (delay <= 0) {
      conn.cursor.close();
      conn.ws.close(1008, 'token expired');
      return;
    }
    conn.expiry = setTimeout(() => this.closeAt(conn, at), Math.min(delay, MAX_TIMER_MS));
    conn.expiry.unref();
  }

  private logFor(ctx: CallContext): EventLog {
    return {
      after: async (afterId, limit) => {
        // The whole log: the cursor counts on gapless ids, and send() leaves out what the socket may not read.
        const res = await this.opts.events.listEvents({ limit, after: afterId, hiddenProjectIds: [] }, ctx);
        const items = res.items.map((e) => {
          const row = contractEventFromProto(e);
          return { row, text: JSON.stringify(row) };
        });
        return { items, truncated: res.truncated };
      },
    };
  }

  private send(conn: Conn, item: LiveItem): void {
    const ws = conn.ws;
    if (ws.readyState !== WebSocket.OPEN) return;
    const project = item.row.project_id;
    if (project !== null && conn.hidden.size > 0 && conn.hidden.has(project.toLowerCase())) return;
    if (ws.bufferedAmount > this.maxBuffered) {
      conn.cursor.close();
      ws.close(1013, 'client too slow');
      return;
    }
    ws.send(item.text);
  }

  /** Resolves once the socket's send buffer drained below the high-water mark. */
  private async writable(ws: WebSocket): Promise<void> {
    const until = Date.now() + WRITABLE_TIMEOUT_MS;
    while (ws.readyState === WebSocket.OPEN && ws.bufferedAmount > HIGH_WATER) {
      if (Date.now() > until) throw new Error('send buffer did not drain');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private onEvent(item: LiveItem): void {
    for (const conn of this.conns) conn.cursor.offer(item);
    if (item.row.entity_type === 'User') this.recheck((c) => c.principal.userId === item.row.entity_id);
  }

  /** The project access map changed: every socket's hidden projects are made again. */
  private onAccessChange(): void {
    for (const conn of this.conns) this.rehide(conn);
  }

  /** Makes `conn`'s hidden set again; closes it with 1013 when it cannot be told. */
  private rehide(conn: Conn): void {
    try {
      conn.hidden = this.opts.access.hiddenFor(conn.principal);
    } catch {
      conn.cursor.close();
      conn.ws.close(1013, 'project access unavailable');
    }
  }

  private onRevocation(r: Revocation): void {
    this.recheck(
      (c) =>
        (!!r.api_key_id && c.principal.apiKeyId === r.api_key_id) ||
        (!!r.user_id && c.principal.userId === r.user_id) ||
        (!!r.all_tokens && c.principal.authKind === 'token'),
    );
  }

  /** Re-authenticates matching sockets past the cache; closes those no longer valid with 1008. */
  private recheck(match: (c: Conn) => boolean): void {
    for (const conn of this.conns) {
      if (!match(conn)) continue;
      if (conn.rechecking) {
        // The running check may have read the token before this revocation committed.
        conn.recheckAgain = true;
        continue;
      }
      void this.runRecheck(conn);
    }
  }

  /** The periodic re-check: every socket, one call to auth per distinct token. */
  private recheckAll(): void {
    const batch = new Map<string, Promise<AuthEntry>>();
    for (const conn of this.conns) if (!conn.rechecking) void this.runRecheck(conn, batch);
  }

  private async runRecheck(conn: Conn, batch?: Map<string, Promise<AuthEntry>>): Promise<void> {
    conn.rechecking = true;
    try {
      do {
        conn.recheckAgain = false;
        await this.recheckOne(conn, 0, batch);
        batch = undefined;
      } while (conn.recheckAgain && conn.ws.readyState === WebSocket.OPEN);
    } finally {
      conn.rechecking = false;
    }
  }

  private async recheckOne(conn: Conn, attempt = 0, batch?: Map<string, Promise<AuthEntry>>): Promise<void> {
    try {
      let asked = batch?.get(conn.token);
      if (!asked) {
        asked = this.opts.auth.authenticate(conn.token, { requestId: requestIdFrom(undefined) }, true);
        batch?.set(conn.token, asked);
      }
      const entry = await asked;
      conn.principal = entry.principal;
      // A changed role (an Admin no more) changes what the socket may read.
      this.rehide(conn);
    } catch (err) {
      if (isAppError(err) && err.kind === 'unauthenticated') {
        conn.cursor.close();
        conn.ws.close(1008, 'token revoked');
        return;
      }
      if (conn.ws.readyState !== WebSocket.OPEN) return;
      // Auth is down: keep the socket a while and try again rather than drop a valid client,
      // but never keep a socket whose token could not be re-checked.
      if (attempt < 10) {
        await new Promise((r) => setTimeout(r, 1000));
        return this.recheckOne(conn, attempt + 1);
      }
      conn.cursor.close();
      conn.ws.close(1013, 'authentication unavailable');
    }
  }

  private heartbeat(): void {
    for (const conn of this.conns) {
      if (!conn.alive) {
        conn.cursor.close();
        conn.ws.terminate();
        continue;
      }
      conn.alive = false;
      conn.ws.ping();
    }
  }

  /** Closes every socket with `code` (1001 on shutdown) and stops listening to the bus. */
  async close(code = 1001, reason = 'server shutting down'): Promise<void> {
    this.closing = true;
    const timers = Promise.all([this.heartbeats.stop(), this.rechecks.stop()]);
    for (const off of this.unsubscribe) off();
    const closing = [...this.sockets].map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          const t = setTimeout(() => {
            ws.terminate();
            resolve();
          }, 1000);
          ws.once('close', () => {
            clearTimeout(t);
            resolve();
          });
          ws.close(code, reason);
        }),
    );
    for (const conn of this.conns) conn.cursor.close();
    await Promise.all([timers, ...closing]);
    // Whatever is still open (a client that never answered the close) must not hold the
    // HTTP server's close open.
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
  }
}
