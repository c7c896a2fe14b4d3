import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDatabase } from '../src/database.js';
import { probePostgres, resolveDependencies, s3FromEnv } from '../src/deps.js';
import { natsAnswers } from '../src/nats.js';
import { portIsFree } from '../src/ports.js';
import { startEmbeddedPostgres } from '../src/postgres.embedded.js';
import { startNatsServer } from '../src/nats.server.js';

const NOTHING_PG = 'postgres://postgres@127.0.0.1:1';
const NOTHING_NATS = 'nats://127.0.0.1:1';

async function query(url: string, sql: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await c.connect();
  try {
    return await c.query(sql, params);
  } finally {
    await c.end();
  }
}

describe('resolveDependencies', () => {
  let dir: string;
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rb-deps-'));
    // The embedded server runs as the `postgres` user when we are root: it must reach the folder.
    chmodSync(dir, 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('uses explicit URLs as given and starts only the S3 stand-in', async () => {
    const deps = await resolveDependencies({ dataDir: dir, databaseUrl: 'postgres://x:secret@db:5432/r', natsUrl: 'nats://n:4222', log });
    try {
      expect(deps.databaseUrl).toBe('postgres://x:secret@db:5432/r');
      expect(deps.natsUrl).toBe('nats://n:4222');
      expect(deps.started).toEqual({ postgres: false, nats: false, s3: true });
      expect(lines).toContain('postgres: using DATABASE_URL postgres://x:***@db:5432/r');
      const res = await fetch(`${deps.s3.endpoint}/${deps.s3.bucket}?uploads`);
      expect(res.status).toBe(200);
    } finally {
      await deps.stop();
    }
  });

  it('finds the local PostgreSQL and creates the database when missing', async () => {
    const name = `rb_deps_${Date.now().toString(36)}`;
    const s3 = s3FromEnv({ S3_ENDPOINT: 'http://s3:9000', S3_ACCESS_KEY: 'k', S3_SECRET_KEY: 's' })!;
    const deps = await resolveDependencies({ dataDir: dir, database: name, natsUrl: 'nats://n:4222', s3, log });
    try {
      expect(deps.databaseUrl).toBe(`postgres://postgres@127.0.0.1:5432/${name}`);
      expect(deps.started).toEqual({ postgres: false, nats: false, s3: false });
      expect((await query(deps.databaseUrl, 'select current_database() as d')).rows[0].d).toBe(name);
      expect(lines.some((l) => l.includes(`database ${name} created`))).toBe(true);
    } finally {
      await deps.stop();
      await query(withDatabase(deps.databaseUrl, 'postgres'), `drop database if exists "${name}"`);
    }
  });

  it('starts nats-server with JetStream when nothing answers, and stops it', async () => {
    const deps = await resolveDependencies({ dataDir: dir, databaseUrl: 'postgres://x@db/r', localNatsUrl: NOTHING_NATS, log });
    const port = Number(new URL(deps.natsUrl).port);
    try {
      expect(deps.started.nats).toBe(true);
      expect(deps.natsUrl).not.toBe(NOTHING_NATS);
      expect(await natsAnswers(deps.natsUrl)).toBe(true);
      expect(existsSync(join(dir, 'nats', 'jetstream'))).toBe(true);
    } finally {
      await deps.stop();
    }
    expect(await portIsFree(port, '127.0.0.1')).toBe(true);
  });

  it('starts an embedded PostgreSQL under DATA_DIR/pg when nothing answers, and stops it', async () => {
    const deps = await resolveDependencies({ dataDir: dir, localPostgresUrl: NOTHING_PG, natsUrl: 'nats://n:4222', log });
    const port = Number(new URL(deps.databaseUrl).port);
    try {
      expect(deps.started.postgres).toBe(true);
      expect(new URL(deps.databaseUrl).pathname).toBe('/reelbase');
      expect(existsSync(join(dir, 'pg', 'PG_VERSION'))).toBe(true);
      const r = await query(deps.databaseUrl, 'select current_database() as d, version() as v');
      expect(r.rows[0].d).toBe('reelbase');
      expect(r.rows[0].v).toMatch(/^PostgreSQL 18/);
    } finally {
      await deps.stop();
    }
    expect(await portIsFree(port, '127.0.0.1')).toBe(true);
  }, 120_000);

  it('says so when the local server refuses the login, starts the embedded one, and stops it after it died on its own', async () => {
    lines.length = 0;
    const refusing = 'postgres://rb_no_such_role@127.0.0.1:5432';
    const deps = await resolveDependencies({ dataDir: dir, localPostgresUrl: refusing, natsUrl: 'nats://n:4222', log });
    try {
      expect(deps.started.postgres).toBe(true);
      const said = lines.find((l) => l.includes('refused the connection'));
      expect(said).toMatch(
        /^postgres: the server at postgres:\/\/rb_no_such_role@127\.0\.0\.1:5432 refused the connection: .*rb_no_such_role.* \(SQLSTATE 28\w{3}\); set DATABASE_URL/,
      );
      expect(lines.some((l) => l.startsWith('postgres: no server'))).toBe(false);
      // A terminal's Ctrl-C used to reach the server first; stopping must not wait for an exit that already happened.
      const postmaster = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(postmaster, 'SIGINT');
      for (let i = 0; i < 100 && existsSync(join(dir, 'pg', 'postmaster.pid')); i++) await new Promise((r) => setTimeout(r, 100));
    } finally {
      const t0 = Date.now();
      await deps.stop();
      expect(Date.now() - t0).toBeLessThan(3000);
    }
  }, 120_000);

  it('stops an embedded PostgreSQL and a nats-server an earlier, killed stack left running, and starts afresh', async () => {
    const said: string[] = [];
    const first = await startEmbeddedPostgres(dir, () => undefined);
    const firstNats = await startNatsServer(dir, () => undefined);
    const pgPid = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const natsPid = firstNats.child.pid!;
    // Neither is stopped: as if the stack had been killed with SIGKILL.
    const again = await startEmbeddedPostgres(dir, (l) => said.push(l));
    const againNats = await startNatsServer(dir, (l) => said.push(l));
    try {
      expect(said).toContain(`postgres: stopped a server an earlier run left running in ${join(dir, 'pg')} (pid ${pgPid})`);
      expect(said).toContain(`nats: stopped a nats-server an earlier run left running on ${join(dir, 'nats')} (pid ${natsPid})`);
      expect(() => process.kill(pgPid, 0)).toThrow();
      expect(() => process.kill(natsPid, 0)).toThrow();
      expect((await query(again.adminUrl, 'select 1 as one')).rows[0].one).toBe(1);
      expect(await natsAnswers(againNats.url)).toBe(true);
      expect(first.port).not.toBe(again.port);
    } finally {
      await againNats.stop();
      await again.stop();
      await first.stop();
      await firstNats.stop();
    }
  }, 120_000);

  it('tells a server that is absent from one that refuses', async () => {
    expect((await probePostgres(`${NOTHING_PG}/postgres`)).state).toBe('absent');
    expect(await probePostgres('postgres://rb_no_such_role@127.0.0.1:5432/postgres')).toMatchObject({ state: 'refused' });
  });
});
