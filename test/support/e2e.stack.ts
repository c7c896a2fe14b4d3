/**
 * The whole stack for one end-to-end test file: a fresh database, a unique NATS prefix,
 * every service on free ports, service logs under .test-data/e2e/<file>-<time>/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { SecretCipher } from '@reelbase/lib-platform';
import {
  createTestDatabase,
  DEFAULT_NATS_URL,
  deleteStreams,
  REPO_ROOT,
  startStack,
  uniquePrefix,
  type Stack,
  type StackOptions,
  type TestDatabase,
} from '@reelbase/lib-testkit';
import { Api, expectStatus } from './api.client.js';

/** The services an end-to-end run needs; a missing build fails the run instead of skipping. */
export const REQUIRED_SERVICES = ['auth', 'records', 'events', 'schema', 'gateway', 'notifier'];

export interface E2EStack {
  stack: Stack;
  db: TestDatabase;
  prefix: string;
  logDir: string;
  /** Anonymous client of the gateway. */
  api: Api;
  teardown(): Promise<void>;
}

/** Low-cost, test-only settings: fast hashing, no rate limiting in the way of bursts. */
export const TEST_SERVICE_ENV: Record<string, Record<string, string>> = {
  auth: { PASSWORD_SCRYPT_COST: '1024' },
  records: { OUTBOX_POLL_MS: '200', SHARE_PASSWORD_SCRYPT_COST: '1024' },
  // Every test runs from one address: per-address limits (logins, refused tokens, WebSocket
  // connects) are raised like the per-principal one; their own tests lower them.
  gateway: {
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '100000',
    LOGIN_RATE_PER_MINUTE: '100000',
    AUTH_FAILURE_BURST: '100000',
    WS_CONNECT_BURST: '100000',
  },
};

/** `options`: further stack options (an object store of the test's own, replicas, ...). */
export async function startE2EStack(
  name: string,
  serviceEnv: Record<string, Record<string, string>> = {},
  options: Partial<StackOptions> = {},
): Promise<E2EStack> {
  const logDir = join(REPO_ROOT, '.test-data', 'e2e', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(logDir, { recursive: true });
  const db = await createTestDatabase(undefined, 'rb_e2e');
  const prefix = uniquePrefix('e2e');
  const merged: Record<string, Record<string, string>> = {};
  for (const svc of new Set([...Object.keys(TEST_SERVICE_ENV), ...Object.keys(serviceEnv)])) {
    merged[svc] = { ...TEST_SERVICE_ENV[svc], ...serviceEnv[svc] };
  }
  let stack: Stack;
  try {
    stack = await startStack({
      freePorts: true,
      databaseUrl: db.url,
      natsUrl: process.env.TEST_NATS_URL ?? DEFAULT_NATS_URL,
      natsPrefix: prefix,
      dataDir: join(logDir, 'data'),
      logDir,
      logLevel: 'info',
      serviceEnv: merged,
      log: (line) => process.stdout.write(`[stack] ${line}\n`),
      ...options,
    });
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
  const missing = REQUIRED_SERVICES.filter((s) => !stack.services.includes(s));
  if (missing.length) {
    await stack.stop();
    await db.drop().catch(() => undefined);
    throw new Error(`end-to-end tests need every service built; missing: ${missing.join(', ')} (run \`tsc -b tsconfig.json\`)`);
  }
  return {
    stack,
    db,
    prefix,
    logDir,
    api: new Api(stack.url),
    async teardown() {
      await stack.stop();
      await db.drop().catch(() => undefined);
      await deleteStreams(prefix, stack.natsUrl).catch(() => undefined);
    },
  };
}

export interface Session {
  api: Api;
  token: string;
  user: any;
}

/** Registers the first user (becomes Admin) and returns a client acting with its token. */
export async function bootstrapAdmin(anon: Api, email = 'admin@studio.test', password = 'correct horse battery'): Promise<Session> {
  const body = expectStatus(await anon.post('/auth/register', { email, password, name: 'Ada Admin' }), 200, 'first register');
  return { api: anon.as(body.access_token), token: body.access_token, user: body.user };
}

/** Has the Admin register a user with `role`, then logs that user in. */
export async function createUser(admin: Api, role: string, email: string, password = 'password-1234'): Promise<Session> {
  const reg = expectStatus(await admin.post('/auth/register', { email, password, name: `${role} User`, role }), 200, `register ${role}`);
  const login = expectStatus(await admin.as(null).post('/auth/login', { email, password }), 200, `login ${role}`);
  return { api: admin.as(login.access_token), token: login.access_token, user: reg.user };
}

/** Every event after `after`, oldest first, paging with `after=` until the end (short pages included). */
export async function eventsAfter(api: Api, after = 0, query = ''): Promise<any[]> {
  const out: any[] = [];
  let cursor = after;
  for (;;) {
    const body = expectStatus(await api.get(`/events?after=${cursor}&limit=1000${query}`), 200, 'GET /events?after=');
    const page = body.items as any[];
    out.push(...page);
    // A page of large events stops early at its byte budget and says so with next_cursor.
    if (page.length < 1000 && !body.next_cursor) return out;
    cursor = page[page.length - 1].id;
  }
}

/** The newest event id (0 when the log is empty). */
export async function lastEventId(api: Api): Promise<number> {
  const items = expectStatus(await api.get('/events?limit=1'), 200, 'GET /events?limit=1').items as any[];
  return items[0]?.id ?? 0;
}

/**
 * The private key auth signs login tokens with now, read from its table and decrypted with the stack's
 * SECRETS_KEY (docs/operations.md, "The secrets key"): for tests that sign tokens of their own.
 */
export async function currentSigningKey(e: E2EStack): Promise<{ kid: string; privateJwk: Record<string, unknown> }> {
  const db = new pg.Client({ connectionString: e.db.url });
  await db.connect();
  try {
    const row = (
      await db.query<{ kid: string; sealed: string }>(
        'select kid, private_key_sealed as sealed from auth.signing_key where retired_at is null order by created_at desc limit 1',
      )
    ).rows[0]!;
    return {
      kid: row.kid,
      privateJwk: JSON.parse(new SecretCipher(e.stack.secretsKey).open(row.sealed, `auth.signing_key:${row.kid}`)) as Record<string, unknown>,
    };
  } finally {
    await db.end();
  }
}
