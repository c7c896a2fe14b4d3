/**
 * The hostile probe's checks of what a caller can make the service keep or hold
 * (docs/api-notes.md, "Idempotent retries", "Rate limits", "Summaries"): read-only POSTs, claims
 * and password changes with fresh Idempotency-Keys store nothing (no lease ever in the key table);
 * a principal cannot hold more live keys than the limit, even racing for the last places; a user
 * cannot mint API keys without bound; a summary of more than 10,000 groups is refused, and a
 * flood of summaries leaves single reads served. Rule breaches are counted as problems.
 */
import pg from 'pg';
import { parseAnswer, probeCalls, type Answer, type ProbeContext, type Secrets } from './hostile.calls.js';

/** Live Idempotency-Keys per principal in the hostile stack (the default, 10,000, would take too long to reach). */
export const HOSTILE_MAX_KEYS = 300;

export async function probeKeys(ctx: ProbeContext): Promise<Secrets> {
  const { problem } = ctx;
  const { call, expect, user: register } = probeCalls(ctx);
  const parse = parseAnswer;
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  const count = async (sql: string, params: unknown[] = []) => Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);
  const admin = ctx.adminToken;
  const pid = ctx.projectId;
  const user = (role: string, email: string) => register(admin, role, email);
  try {
    ctx.log('keys: read-only POSTs, claims and password changes with fresh Idempotency-Keys store nothing');
    const viewer = await user('Viewer', 'keys-viewer@hostile.test');
    for (let i = 0; i < 200; i++) {
      await call(
        'query with a fresh key',
        'POST',
        '/entities/Shot/query',
        viewer.token,
        { filters: [['project_id', 'is', pid]], limit: 1000 },
        { 'idempotency-key': `q${i}` },
      );
    }
    for (let i = 0; i < 20; i++) {
      const body = { filters: [['project_id', 'is', pid]], summary_fields: [{ field: 'id', type: 'record_count' }] };
      await call('summary with a fresh key', 'POST', '/entities/Shot/summarize', viewer.token, body, { 'idempotency-key': `s${i}` });
    }
    await call(
      'actions list with a key',
      'POST',
      '/actions/list',
      viewer.token,
      { project_id: pid, entity_type: 'Project', entity_ids: [pid] },
      { 'idempotency-key': 'a1' },
    );
    const newPassword = 'password-456-changed';
    expect(
      await call(
        'password change with a key',
        'POST',
        '/auth/password',
        viewer.token,
        { old_password: 'password-123', new_password: newPassword },
        { 'idempotency-key': 'pw' },
      ),
      [200, 204],
      'a password change',
    );
    const viewerKeys = await count(`select count(*) as n from records.idempotency_key where principal = $1`, [`user:${viewer.id}`]);
    if (viewerKeys) problem(`read-only POSTs and a password change stored ${viewerKeys} idempotency answers`);

    const pool = 'hostile-keys';
    expect(
      await call('farm job', 'POST', '/farm/jobs', admin, { project_id: pid, name: 'keys', kind: 'render', pool, frames: '1-5', chunk_size: 1 }),
      [200],
      'a farm job',
    );
    for (let i = 0; i < 5; i++) {
      const claimed = parse(await call('farm claim with a key', 'POST', '/farm/claim', admin, { pool, worker: 'h' }, { 'idempotency-key': 'claim' }));
      const chunk = claimed?.chunk;
      if (chunk?.lease)
        await call('farm complete with a key', 'POST', `/farm/chunks/${chunk.id}/complete`, admin, { lease: chunk.lease }, { 'idempotency-key': `done-${i}` });
    }
    const leases = await count(
      `select count(*) as n from records.idempotency_key where coalesce(body, '') || coalesce(record::text, '') ~ 'lease_[A-Za-z0-9_-]{32}'`,
    );
    if (leases) problem(`${leases} idempotency answers hold a farm lease`);

    ctx.log(`keys: ${HOSTILE_MAX_KEYS + 60} new keys, 20 at a time, against a limit of ${HOSTILE_MAX_KEYS}`);
    const racer = await user('Artist', 'keys-artist@hostile.test');
    let limited = 0;
    for (let round = 0; round < (HOSTILE_MAX_KEYS + 60) / 20; round++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call(
            'keyed create',
            'POST',
            '/entities/Shot',
            racer.token,
            { project_id: pid, data: { code: `K${round}_${i}` } },
            { 'idempotency-key': `k${round}-${i}` },
          ),
        ),
      );
      for (const a of answers) if (a.status === 429) limited++;
      for (const a of answers) if (a.status !== 200 && a.status !== 429) problem(`a keyed create answered ${a.status} (${a.body.slice(0, 120)})`);
    }
    const held = await count(`select count(*) as n from records.idempotency_key where principal = $1 and expires_at > now()`, [`user:${racer.id}`]);
    if (held > HOSTILE_MAX_KEYS) problem(`a principal holds ${held} live idempotency keys, above the limit of ${HOSTILE_MAX_KEYS}`);
    if (limited < 60) problem(`only ${limited} of ${HOSTILE_MAX_KEYS + 60} new keys were refused at the limit`);

    ctx.log('keys: API keys per user');
    const minter = await user('Artist', 'keys-minter@hostile.test');
    let minted = 0;
    let lastToken = '';
    for (let i = 0; i < 102; i++) {
      const a = await call('mint an API key', 'POST', '/auth/api-keys', minter.token, { name: `k${i}` });
      if (a.status === 200) {
        minted++;
        lastToken = String(parse(a)?.token ?? '');
      } else if (a.status !== 409 || parse(a)?.code !== 'limit_reached') problem(`API key ${i}: answered ${a.status} (${a.body.slice(0, 120)})`);
    }
    if (minted !== 100) problem(`a user minted ${minted} live API keys (limit 100)`);

    ctx.log('keys: a summary of more than 10,000 groups; a flood of summaries beside single reads');
    for (let b = 0; b < 21; b++) {
      const requests = Array.from({ length: 500 }, (_, i) => ({
        request_type: 'create',
        entity_type: 'Shot',
        project_id: pid,
        data: { code: `G${b}_${i}`, cut_in: i % 5 },
      }));
      expect(await call('batch of 500', 'POST', '/batch', admin, { requests }), [200], 'a batch of 500 creates');
    }
    const groupsBody = (field: string) => ({
      filters: [['project_id', 'is', pid]],
      summary_fields: [{ field: 'id', type: 'record_count' }],
      grouping: [{ field, type: 'exact' }],
    });
    const tooMany = expect(await call('summary by code', 'POST', '/entities/Shot/summarize', admin, groupsBody('code')), [422], 'a summary of 10,500 groups');
    if (tooMany && tooMany.detail?.[0]?.type !== 'too_many_groups') problem(`a summary of 10,500 groups answered ${JSON.stringify(tooMany).slice(0, 200)}`);
    const one = parse(await call('a shot to read', 'POST', '/entities/Shot', admin, { project_id: pid, data: { code: 'READ-ME' } }));
    const reads: Answer[] = [];
    let flooding = true;
    const reader = (async () => {
      while (flooding) reads.push(await call('single read during summaries', 'GET', `/entities/Shot/${one?.id}`, viewer.token));
    })();
    const flood = await Promise.all(Array.from({ length: 40 }, () => call('summary flood', 'POST', '/entities/Shot/summarize', admin, groupsBody('cut_in'))));
    flooding = false;
    await reader;
    for (const a of flood) if (a.status !== 200 && a.status !== 503) problem(`a summary in a flood answered ${a.status}`);
    const failedReads = reads.filter((a) => a.status !== 200).length;
    if (failedReads) problem(`${failedReads} of ${reads.length} single reads failed during a flood of summaries`);
    ctx.log(
      `keys: ${limited} new keys refused at the limit, ${held} held; ${flood.filter((a) => a.status === 503).length} of 40 summaries told busy; ${reads.length} reads beside them`,
    );
    return { minted_api_key: lastToken, changed_password: newPassword };
  } finally {
    await db.end();
  }
}
