/**
 * Limits end to end: events near the largest size a write may produce (MAX_EVENT_BYTES) are
 * read back over HTTP in pages bounded by bytes (a short page with next_cursor) and replayed
 * over the WebSocket, never refused with a rate limit or an oversized gRPC message; only
 * failed logins count towards the per-email limit, which parallel guesses cannot pass; a login
 * token is accepted in one spelling only and never with a lifetime above JWT_TTL_SECONDS.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, currentSigningKey, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { openEventSocket } from './support/ws.client.js';

/** Order n of the P-256 group: (r, s) and (r, n - s) are both valid ECDSA signatures. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** `token` with the signature's S replaced by n - S (lowS: only when S is in the upper half). */
function flipS(token: string, lowS = false): string {
  const [h, p, sig] = token.split('.') as [string, string, string];
  const bytes = Buffer.from(sig, 'base64url');
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  if (lowS && s <= P256_N >> 1n) return token;
  const other = Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex');
  return `${h}.${p}.${Buffer.concat([bytes.subarray(0, 32), other]).toString('base64url')}`;
}

const LARGE = 870_000;
const WRITES = 20;

describe('event log limits (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;

  beforeAll(async () => {
    // The gateway's own per-address login limit stays out of the way of the per-email one.
    e = await startE2EStack('log-limits', { gateway: { LOGIN_RATE_PER_MINUTE: '1000' } });
    admin = await bootstrapAdmin(e.api);
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it(`${WRITES} writes of ~870 KB: GET /events pages by bytes with next_cursor, and a since= replay gets every one`, async () => {
    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Big', code: 'big' } }), 200);
    // Events reach the log after the write answers: the Project's must be in it before the log's end is taken.
    for (const until = Date.now() + 30_000; !(await eventsAfter(admin.api, 0)).some((ev) => ev.entity_id === project.id);) {
      if (Date.now() > until) throw new Error("the Project's event did not reach the log");
      await new Promise((r) => setTimeout(r, 100));
    }
    const start = await lastEventId(admin.api);
    const ids: string[] = [];
    for (let i = 0; i < WRITES; i++) {
      const description = `${i}:`.padEnd(LARGE, String.fromCharCode(97 + (i % 26)));
      const shot = expectStatus(
        await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: `sh${i}`, description } }),
        200,
        `large write ${i}`,
      );
      ids.push(shot.id);
    }
    const logged = await (async () => {
      for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
        const events = await eventsAfter(admin.api, start);
        if (events.length >= WRITES) return events;
      }
      throw new Error('the large events did not all reach the log');
    })();
    expect(logged.map((ev) => ev.entity_id)).toEqual(ids);
    expect(logged.every((ev) => ev.changes.description.length === LARGE)).toBe(true);

    // The default page (limit 100) is cut by its byte budget: 200 with a short page and a cursor.
    const first = await admin.api.get('/events');
    expect(first.status).toBe(200);
    expect(first.body.items.length).toBeGreaterThan(0);
    expect(first.body.items.length).toBeLessThan(WRITES);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect(first.text.length).toBeLessThan(6 * 1024 * 1024);
    // Following next_cursor walks back through every event, newest first, each once.
    const seen: number[] = first.body.items.map((ev: any) => ev.id);
    let cursor: string | null = first.body.next_cursor;
    for (let pages = 0; cursor && pages < 50; pages++) {
      const page = expectStatus(await admin.api.get(`/events?cursor=${encodeURIComponent(cursor)}`), 200, 'GET /events?cursor=');
      seen.push(...page.items.map((ev: any) => ev.id));
      cursor = page.next_cursor;
    }
    expect(cursor).toBeNull();
    const last = logged.at(-1).id;
    expect(seen).toEqual(Array.from({ length: last }, (_, i) => last - i));

    // The WebSocket replay from before the first large write delivers all of them, in order.
    const socket = openEventSocket(e.stack.url, admin.token, start);
    try {
      await socket.opened;
      const messages = await socket.waitFor(WRITES, 60_000);
      expect(messages.slice(0, WRITES).map((m) => m.entity_id)).toEqual(ids);
      expect(messages.slice(0, WRITES).map((m) => m.id)).toEqual(logged.map((ev) => ev.id));
      expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    } finally {
      await socket.close();
    }
  });

  it('20 parallel logins with the right password all succeed; 30 parallel wrong ones check at most 10', async () => {
    await createUser(admin.api, 'Artist', 'burst@studio.test', 'burst-password-1');
    const login = (password: string) => e.api.post('/auth/login', { email: 'burst@studio.test', password });
    const right = await Promise.all(Array.from({ length: 20 }, () => login('burst-password-1')));
    expect(right.map((r) => r.status)).toEqual(Array(20).fill(200));

    const wrong = await Promise.all(Array.from({ length: 30 }, (_, i) => login(`guess-${i}-wrong`)));
    const statuses = wrong.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    for (const r of wrong.filter((x) => x.status === 429)) {
      expect(r.body.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('a login token is accepted in one spelling only, and never with a lifetime above JWT_TTL_SECONDS', async () => {
    const me = (token: string) => e.api.as(token).get('/me');
    expectStatus(await me(admin.token), 200);
    // The high-S twin of the signature and a re-spelled last character decode to a valid signature.
    expect((await me(flipS(admin.token))).status).toBe(401);
    const sig = admin.token.split('.')[2]!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twins = [...alphabet]
      .map((c) => sig.slice(0, -1) + c)
      .filter((alt) => alt !== sig && Buffer.from(alt, 'base64url').equals(Buffer.from(sig, 'base64url')));
    expect(twins.length).toBeGreaterThan(0);
    for (const alt of twins.slice(0, 4)) {
      expect((await me(admin.token.replace(/[^.]+$/, alt))).status).toBe(401);
    }

    // A token signed with the service's real key: accepted with the configured 12 h, refused with ten years.
    const key = await currentSigningKey(e);
    const privateKey = createPrivateKey({ key: key.privateJwk as any, format: 'jwk' });
    const now = Math.floor(Date.now() / 1000);
    const forge = (lifetime: number) => {
      const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      const input = `${enc({ alg: 'ES256', kid: key.kid, typ: 'JWT' })}.${enc({ sub: admin.user.id, iss: 'reelbase', iat: now, exp: now + lifetime })}`;
      const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
      return flipS(`${input}.${signature}`, true);
    };
    expectStatus(await me(forge(12 * 3600)), 200, 'a token with the configured lifetime');
    const far = await me(forge(10 * 365 * 86_400));
    expect(far.status).toBe(401);
    expect(far.body.code).toBe('unauthenticated');
  });
});
