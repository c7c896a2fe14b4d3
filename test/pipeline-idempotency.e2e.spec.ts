/**
 * Idempotent retries of pipeline code, end to end (docs/api-notes.md, "Idempotent retries"): a
 * retried create with an Idempotency-Key answers the first answer and writes one event; another
 * body with the key is 409; a malformed key is 422; keys are scoped, bounded per principal, and a
 * repeat of a key still running waits for it or is told at once.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { createUser, eventsAfter, lastEventId, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';
import { MAX_KEYS, shotsWithCode, usePipelineStack } from './support/pipeline.stack.js';

describe('pipeline calls: Idempotency-Key (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let projectId: string;
  usePipelineStack('pipeline-idempotency', (s) => ({ e, admin, projectId } = s));

  /** One value from the stack's database. */
  async function scalar<T>(sql: string, params: unknown[] = []): Promise<T> {
    const db = new pg.Client({ connectionString: e.db.url });
    await db.connect();
    try {
      return Object.values((await db.query(sql, params)).rows[0] as Record<string, T>)[0]!;
    } finally {
      await db.end();
    }
  }

  describe('Idempotency-Key', () => {
    it('a retried create answers the first answer again and writes one record and one event', async () => {
      const key = `create-${randomUUID()}`;
      const body = { project_id: projectId, data: { code: 'idem010', cut_in: 1001 } };
      const before = await lastEventId(admin.api);
      const first = await admin.api.post('/entities/Shot', body, { headers: { 'idempotency-key': key } });
      const created = expectStatus(first, 200, 'first create');
      expect(first.headers.get('idempotent-replayed')).toBeNull();

      // The same body with its keys in another order is the same request.
      const again = await admin.api.post(
        '/entities/Shot',
        { data: { cut_in: 1001, code: 'idem010' }, project_id: projectId },
        { headers: { 'idempotency-key': key } },
      );
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
      expect(again.headers.get('idempotent-replayed')).toBe('true');

      expect(await shotsWithCode(admin.api, projectId, 'idem010')).toHaveLength(1);
      // A marker write after both: once its event is in the log, every event of the two calls is too.
      const marker = expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'idem-marker' } }), 200);
      const logged = await eventually(async () => {
        const all = await eventsAfter(admin.api, before);
        return all.some((ev) => ev.entity_id === marker.id) ? all : undefined;
      });
      expect(logged.filter((ev) => ev.entity_type === 'Shot' && ev.changes?.code === 'idem010').map((ev) => ev.entity_id)).toEqual([created.id]);
    });

    it('the same key with another body is 409 idempotency_conflict and writes nothing', async () => {
      const key = `conflict-${randomUUID()}`;
      expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'idem020' } }, { headers: { 'idempotency-key': key } }), 200);
      const other = await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'idem021' } }, { headers: { 'idempotency-key': key } });
      expectError(other, 409, 'idempotency_conflict');
      expect(await shotsWithCode(admin.api, projectId, 'idem021')).toHaveLength(0);
    });

    it('keys are scoped by principal and by concrete path', async () => {
      const key = `scope-${randomUUID()}`;
      const artist = await createUser(admin.api, 'Artist', `artist-${randomUUID().slice(0, 8)}@studio.test`);
      const body = { project_id: projectId, data: { code: 'idem030' } };
      const a = expectStatus(await admin.api.post('/entities/Shot', body, { headers: { 'idempotency-key': key } }), 200);
      const b = expectStatus(await artist.api.post('/entities/Shot', body, { headers: { 'idempotency-key': key } }), 200);
      expect(b.id).not.toBe(a.id);
      // The same key on another path is another request.
      const c = expectStatus(await admin.api.post('/entities/Sequence', body, { headers: { 'idempotency-key': key } }), 200);
      expect(c.entity_type).toBe('Sequence');
      expect(await shotsWithCode(admin.api, projectId, 'idem030')).toHaveLength(2);
    });

    it('a client mistake is kept and answered again; a malformed key is 422 at the header', async () => {
      const key = `mistake-${randomUUID()}`;
      const body = { project_id: projectId, data: { code: 'idem040', no_such_field: 1 } };
      const first = await admin.api.post('/entities/Shot', body, { headers: { 'idempotency-key': key } });
      expectValidation(first, ['body', 'data', 'no_such_field']);
      const again = await admin.api.post('/entities/Shot', body, { headers: { 'idempotency-key': key } });
      expect(again.status).toBe(422);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');

      const long = await admin.api.post(
        '/entities/Shot',
        { project_id: projectId, data: { code: 'idem041' } },
        { headers: { 'idempotency-key': 'k'.repeat(256) } },
      );
      expectValidation(long, ['header', 'idempotency-key']);
      const latin = await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'idem041' } }, { headers: { 'idempotency-key': 'clé' } });
      expectValidation(latin, ['header', 'idempotency-key']);
      expect(await shotsWithCode(admin.api, projectId, 'idem041')).toHaveLength(0);
    });

    it('a repeat sent while the first is still running waits for it and gets its answer', async () => {
      const key = `race-${randomUUID()}`;
      const requests = Array.from({ length: 6 }, (_, i) =>
        admin.api.post(
          '/batch',
          {
            requests: Array.from({ length: 50 }, (__, j) => ({
              request_type: 'create',
              entity_type: 'Shot',
              project_id: projectId,
              data: { code: `race${j}` },
            })),
          },
          {
            headers: { 'idempotency-key': key, 'x-request-id': `race-${i}` },
          },
        ),
      );
      const answers = await Promise.all(requests);
      for (const a of answers) expect(a.status, a.text).toBe(200);
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
      expect(await shotsWithCode(admin.api, projectId, 'race7')).toHaveLength(1);
    });
    it('read-only answers and answers carrying a lease are never stored: the key is checked and the request runs again', async () => {
      const viewer = await createUser(admin.api, 'Viewer', `viewer-${randomUUID().slice(0, 8)}@studio.test`);
      const filters = [
        ['project_id', 'is', projectId],
        ['code', 'is', 'idem050'],
      ];
      for (let i = 0; i < 20; i++) {
        expectStatus(await viewer.api.post('/entities/Shot/query', { filters }, { headers: { 'idempotency-key': `q-${randomUUID()}` } }), 200, 'query');
      }
      const summary = { filters, summary_fields: [{ field: 'id', type: 'record_count' }] };
      expectStatus(await viewer.api.post('/entities/Shot/summarize', summary, { headers: { 'idempotency-key': 'sum-1' } }), 200, 'summarize');
      expect(await scalar<string>(`select count(*) from records.idempotency_key where principal = $1`, [`user:${viewer.user.id}`])).toBe('0');
      // The same key again runs again: a record made in between is seen.
      const key = { headers: { 'idempotency-key': 'q-repeat' } };
      expect(expectStatus(await viewer.api.post('/entities/Shot/query', { filters }, key), 200).items).toHaveLength(0);
      expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'idem050' } }), 200);
      expect(expectStatus(await viewer.api.post('/entities/Shot/query', { filters }, key), 200).items).toHaveLength(1);
      const counted = expectStatus(await viewer.api.post('/entities/Shot/summarize', summary, { headers: { 'idempotency-key': 'sum-1' } }), 200);
      expect(counted.summaries.id).toBe(1);

      // A farm claim's lease (the CLI's agent sends a key with every call) is never kept in clear.
      const pool = `idem-${randomUUID().slice(0, 8)}`;
      expectStatus(await admin.api.post('/farm/jobs', { project_id: projectId, name: 'idem', kind: 'render', pool, frames: '1-2', chunk_size: 1 }), 200);
      const claimKey = { headers: { 'idempotency-key': `claim-${randomUUID()}` } };
      const first = expectStatus(await admin.api.post('/farm/claim', { pool, worker: 'host-1' }, claimKey), 200, 'claim');
      expect(first.chunk.lease).toMatch(/^lease_/);
      // The same key again claims again: the next chunk, under a lease of its own.
      const second = expectStatus(await admin.api.post('/farm/claim', { pool, worker: 'host-1' }, claimKey), 200, 'claim again');
      expect(second.chunk.id).not.toBe(first.chunk.id);
      const completed = { headers: { 'idempotency-key': `complete-${randomUUID()}` } };
      expectStatus(await admin.api.post(`/farm/chunks/${first.chunk.id}/complete`, { lease: first.chunk.lease }, completed), 200, 'complete');
      // Stored answers there are (the completion's), but no lease token in any of them.
      expect(Number(await scalar<string>(`select count(*) from records.idempotency_key where status is not null`))).toBeGreaterThan(0);
      const leases = `select count(*) from records.idempotency_key where coalesce(body, '') || coalesce(record::text, '') ~ 'lease_[A-Za-z0-9_-]{32}'`;
      expect(await scalar<string>(leases)).toBe('0');
    });

    it('a principal holds a bounded number of live keys: a new one past it is 429, a known one still answers', async () => {
      const artist = await createUser(admin.api, 'Artist', `artist-${randomUUID().slice(0, 8)}@studio.test`);
      const keyed = (i: number) =>
        artist.api.post('/entities/Shot', { project_id: projectId, data: { code: `cap${i}` } }, { headers: { 'idempotency-key': `cap-${i}` } });
      for (let i = 0; i < MAX_KEYS; i++) expectStatus(await keyed(i), 200, `keyed create ${i}`);
      const refused = await keyed(MAX_KEYS);
      expectError(refused, 429, 'rate_limited');
      // Until the oldest of them expires, a day after it was used.
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(23 * 3600);
      expect(await shotsWithCode(admin.api, projectId, `cap${MAX_KEYS}`)).toHaveLength(0);
      const replay = await keyed(0);
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      // Without a key nothing is counted.
      expectStatus(await artist.api.post('/entities/Shot', { project_id: projectId, data: { code: `cap-free` } }), 200);
    });

    it('many repeats of a key still running: a few wait for its answer, the rest are told at once, none runs twice', async () => {
      const key = `crowd-${randomUUID()}`;
      const body = {
        requests: Array.from({ length: 100 }, (_, j) => ({ request_type: 'create', entity_type: 'Shot', project_id: projectId, data: { code: `crowd${j}` } })),
      };
      const answers = await Promise.all(Array.from({ length: 16 }, () => admin.api.post('/batch', body, { headers: { 'idempotency-key': key } })));
      const ok = answers.filter((a) => a.status === 200);
      for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 409, 'idempotency_in_progress');
      expect(ok.length).toBeGreaterThanOrEqual(1);
      expect(new Set(ok.map((a) => a.text)).size).toBe(1);
      expect(await shotsWithCode(admin.api, projectId, 'crowd42')).toHaveLength(1);
    });
  });
});
