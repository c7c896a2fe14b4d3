/**
 * Shared pieces of the notifier integration tests: an in-memory event log served over the
 * events gRPC API (and announced on `live.events`, as the events service does), the notifier
 * in-process on its own database, gRPC clients acting as a given user, and a local HTTP
 * receiver that can be down, up or hanging and de-duplicates by `X-Event-Id`.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MikroORM } from '@mikro-orm/postgresql';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventsv1, notifierv1 } from '@reelbase/proto';
import {
  AppError,
  createGrpcClient,
  createLogger,
  encodeContractEvent,
  GrpcServer,
  isoMicros,
  Metrics,
  natsNames,
  type CallContext,
  type ContractEvent,
  type Role,
} from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import { parseNotifierConfig, type NotifierConfig } from '../src/config.js';
import { startNotifier, type RunningNotifier } from '../src/service.js';

export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** The event log as the events service serves it, held in memory. */
export class FakeEventLog {
  readonly events: ContractEvent[] = [];
  private server!: GrpcServer;
  port = 0;
  /** When set, ListEvents fails with `unavailable` (events down). */
  down = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
  ) {}

  async start(): Promise<void> {
    this.server = new GrpcServer({
      logger: createLogger('events', 'silent'),
      metrics: new Metrics('fake_events'),
      internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    });
    this.server.add<eventsv1.EventsServiceServer>('reelbase.events.v1.EventsService', eventsv1.EventsServiceService, {
      listEvents: async (req) => {
        if (this.down) throw AppError.unavailable('events is down');
        const lastId = this.events.length;
        const pick = (e: ContractEvent): eventsv1.Event => ({
          id: e.id,
          entityType: e.entity_type,
          entityId: e.entity_id,
          ...(e.project_id ? { projectId: e.project_id } : {}),
          action: e.action,
          ...(e.actor ? { actor: e.actor } : {}),
          changesJson: JSON.stringify(e.changes),
          createdAt: e.created_at,
        });
        if (req.after !== undefined) return { items: this.events.slice(req.after, req.after + req.limit).map(pick), lastId, truncated: false };
        return { items: this.events.slice(-req.limit).reverse().map(pick), lastId, truncated: false };
      },
    });
    this.port = await this.server.listen(0, '127.0.0.1');
  }

  /** Appends an event with the next id and announces it like the events service. */
  append(e: Omit<Partial<ContractEvent>, 'id'> & Pick<ContractEvent, 'entity_type'>): ContractEvent {
    const event: ContractEvent = {
      id: this.events.length + 1,
      entity_id: randomUUID(),
      project_id: null,
      action: 'create',
      actor: null,
      changes: {},
      created_at: isoMicros(new Date()),
      ...e,
    };
    this.events.push(event);
    this.nc.publish(natsNames(this.prefix).liveEvent(event.entity_type), encodeContractEvent(event));
    return event;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

/** A test world: NATS, a fake log, a database, and the notifier started on them. */
export interface World {
  db: TestDatabase;
  prefix: string;
  nc: NatsConnection;
  log: FakeEventLog;
  env: Record<string, string>;
  notifier: RunningNotifier | null;
  client: ReturnType<typeof notifierClient>;
  start(extra?: Record<string, string>): Promise<RunningNotifier>;
  close(): Promise<void>;
}

/** The notifier settings of a world (time compressed). */
export function worldEnv(db: TestDatabase, prefix: string, eventsPort: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
    SECRETS_KEY: TEST_SECRETS_KEY,
    DATABASE_URL: db.url,
    NATS_URL,
    NATS_PREFIX: prefix,
    GRPC_PORT: '0',
    HTTP_PORT: '0',
    EVENTS_ADDR: `127.0.0.1:${eventsPort}`,
    NOTIFIER_POLL_MS: '50',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_BACKOFF_BASE_MS: '20',
    WEBHOOK_BACKOFF_MAX_MS: '200',
    WEBHOOK_RETRY_WINDOW_MS: '60000',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

export async function world(extra: Record<string, string> = {}): Promise<World> {
  const db = await createTestDatabase();
  const prefix = uniquePrefix('nt');
  const nc = await connect({ servers: NATS_URL, timeout: 3000 });
  const log = new FakeEventLog(nc, prefix);
  await log.start();
  const env = worldEnv(db, prefix, log.port, extra);
  const w: World = {
    db,
    prefix,
    nc,
    log,
    env,
    notifier: null,
    client: null as unknown as ReturnType<typeof notifierClient>,
    async start(more = {}) {
      const config: NotifierConfig = parseNotifierConfig({ ...env, ...more });
      w.notifier = await startNotifier(config, createLogger('notifier', 'silent'));
      w.client = notifierClient(w.notifier.grpcPort);
      return w.notifier;
    },
    async close() {
      w.client?.close();
      await w.notifier?.stop();
      await log.close();
      await nc.close();
      await deleteStreams(prefix).catch(() => {});
      await db.drop();
    },
  };
  return w;
}

/** The call context of a user with `role` (what the gateway sends). */
export function as(userId: string, role: Role = 'Artist'): CallContext {
  return { requestId: randomUUID(), principal: { userId, role, authKind: 'token' } };
}

export function notifierClient(port: number) {
  const c = createGrpcClient(notifierv1.NotifierServiceClient, notifierv1.NotifierServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'notifier',
    address: `127.0.0.1:${port}`,
  });
  return Object.assign(c.call, { close: () => c.close() });
}

/** One request the receiver got. */
export interface Received {
  eventId: string;
  signature: string | undefined;
  body: string;
  headers: http.IncomingHttpHeaders;
  path: string;
  at: number;
}

/**
 * A local webhook target. Per path: `up` answers 200, `down` answers 503, `refuse` closes
 * the connection at once, `hang` never answers. Every request is kept; `unique` keeps the
 * first per path and X-Event-Id, as a de-duplicating receiver would.
 */
export type ReceiverMode = 'up' | 'down' | 'refuse' | 'hang';

export class Receiver {
  /** Mode per path; paths not listed are `up`. */
  readonly modes = new Map<string, ReceiverMode>();
  /** Milliseconds an `up` answer takes. */
  delayMs = 0;
  readonly all: Received[] = [];
  readonly unique = new Map<string, Received>();
  private readonly server: http.Server;
  private readonly hanging = new Set<http.ServerResponse>();
  port = 0;

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const mode = this.modes.get(req.url ?? '/') ?? 'up';
        if (mode === 'refuse') {
          req.socket.destroy();
          return;
        }
        const r: Received = {
          eventId: String(req.headers['x-event-id']),
          signature: req.headers['x-signature'] as string | undefined,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: req.headers,
          path: req.url ?? '/',
          at: Date.now(),
        };
        if (mode === 'hang') {
          this.hanging.add(res);
          return;
        }
        this.all.push(r);
        if (mode === 'down') {
          res.writeHead(503).end('try later');
          return;
        }
        const answer = () => {
          const key = `${r.path} ${r.eventId}`;
          if (!this.unique.has(key)) this.unique.set(key, { ...r, at: Date.now() });
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        };
        if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return `http://127.0.0.1:${this.port}`;
  }

  /** The unique deliveries to `path`, in the order they first arrived. */
  uniqueAt(path: string): Received[] {
    return [...this.unique.values()].filter((r) => r.path === path).sort((a, b) => a.at - b.at);
  }

  close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(fn: () => Promise<T> | T, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const link = (type: string, id: string) => ({ type, id });

/** Runs one SQL statement on the world's database (for checks and set-ups the API does not offer). */
export async function sql<R = Record<string, unknown>>(w: Pick<World, 'db'>, text: string, params: unknown[] = []): Promise<R[]> {
  const orm = await MikroORM.init({ clientUrl: w.db.url, entities: [], discovery: { warnWhenNoEntities: false }, allowGlobalContext: true, debug: false });
  try {
    return await orm.em.getConnection().execute<R[]>(text, params);
  } finally {
    await orm.close();
  }
}

/** Waits until the notifier of `w` has applied every event appended to its log so far. */
export async function settledIn(w: World): Promise<void> {
  const last = w.log.events.length;
  await waitFor(async () => {
    const r = await w.notifier!.follower.step();
    return r.events === 0 && last === w.log.events.length;
  });
}
