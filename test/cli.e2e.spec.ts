/**
 * The `reelbase` command against the whole stack, run as a user runs it (the package's bin, a
 * config folder of its own): login and profiles (passwords and keys from files, standard input or
 * the environment, never arguments), each command's --json output, exit codes, an upload with plain
 * progress lines, events, an import, a farm agent running a real command over a 3-chunk job until
 * the job is done (a failing command failing its chunk with the output's tail, and a command that
 * never sees the agent's credentials), and a launch from an action's URI, from the configured server
 * only.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';

const BIN = join(REPO_ROOT, 'clients', 'typescript', 'bin', 'reelbase.mjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('reelbase command line (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let home: string;
  let projectId: string;
  let env: NodeJS.ProcessEnv;

  /** Runs `reelbase args...` with the test's config folder; `input` goes to standard input. */
  const reelbase = (args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; node?: string } = {}): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(opts.node ?? process.execPath, [BIN, ...args], { env: { ...env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(opts.input ?? '');
    });
  const ok = async (args: string[], opts?: Parameters<typeof reelbase>[1]) => {
    const r = await reelbase(args, opts);
    if (r.code !== 0) throw new Error(`reelbase ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r;
  };
  const json = async (args: string[], opts?: Parameters<typeof reelbase>[1]) => JSON.parse((await ok([...args, '--json'], opts)).stdout);

  beforeAll(async () => {
    e = await startE2EStack('cli');
    admin = await bootstrapAdmin(e.api);
    home = mkdtempSync(join(tmpdir(), 'rb-cli-home-'));
    env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config') };
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'CLI', code: 'cli' } }), 200).id;
  }, 180_000);
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await e?.teardown();
  });

  it('logs in once, keeps the profile readable by the user only, and every command has --help', async () => {
    const login = await json(['login', '--url', e.stack.url, '--email', 'admin@studio.test', '--password-stdin'], { input: 'correct horse battery\n' });
    expect(login).toMatchObject({ profile: 'default', url: e.stack.url, user: 'admin@studio.test', role: 'Admin' });
    const file = join(home, 'config', 'reelbase', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved.profiles.default.api_key).toMatch(/^svc_/);
    // Never printed.
    expect(JSON.stringify(login)).not.toContain(saved.profiles.default.api_key);

    const wrong = await reelbase(['login', '--url', e.stack.url, '--email', 'admin@studio.test', '--password-stdin', '--profile', 'x', '--json'], {
      input: 'nope-nope\n',
    });
    expect(wrong.code).toBe(4);
    expect(JSON.parse(wrong.stderr).error).toMatchObject({ status: 401 });
    // A password or key as an argument is refused before anything is sent; the file, the environment work.
    const argument = await reelbase(['login', '--url', e.stack.url, '--email', 'admin@studio.test', '--password', 'correct horse battery', '--profile', 'y']);
    expect(argument.code).toBe(2);
    expect(argument.stderr).toContain('--password is refused');
    expect((await reelbase(['login', '--url', e.stack.url, '--api-key', 'svc_x', '--profile', 'y'])).code).toBe(2);
    const passwordFile = join(home, 'password');
    writeFileSync(passwordFile, 'correct horse battery\n', { mode: 0o600 });
    const fromFile = await json(['login', '--url', e.stack.url, '--email', 'admin@studio.test', '--password-file', passwordFile, '--profile', 'y']);
    expect(fromFile).toMatchObject({ profile: 'y', user: 'admin@studio.test' });
    const fromEnv = await json(['login', '--url', e.stack.url, '--email', 'admin@studio.test', '--profile', 'z'], {
      env: { REELBASE_PASSWORD: 'correct horse battery' },
    });
    expect(fromEnv).toMatchObject({ profile: 'z', user: 'admin@studio.test' });
    // The environment wins over the profile.
    expect((await reelbase(['get', 'Project', projectId], { env: { REELBASE_API_KEY: 'svc_not_a_key' } })).code).toBe(4);

    for (const cmd of ['login', 'find', 'get', 'create', 'update', 'delete', 'summarize', 'upload', 'wait', 'events', 'import', 'farm agent', 'launch']) {
      const help = await ok([...cmd.split(' '), '--help']);
      expect(help.stdout).toContain(`Usage: reelbase ${cmd}`);
    }
    expect((await reelbase(['find'])).code).toBe(2);
    // The bin runs on the machine's own Node too (20 or newer).
    if (existsSync('/usr/bin/node')) expect((await ok(['--help'], { node: '/usr/bin/node' })).stdout).toContain('Exit codes:');
  });

  it('creates, gets, finds, updates and deletes with --json; tables for people; exit 3 for a missing record', async () => {
    const shot = await json(['create', 'Shot', '--project', projectId, 'code=SH010', 'cut_in=1001']);
    const quiet = (await ok(['create', 'Shot', '--project', projectId, 'code=SH011', '--quiet'])).stdout.trim();
    expect(await json(['get', 'Shot', quiet])).toMatchObject({ data: { code: 'SH011' } });
    expect(shot).toMatchObject({ entity_type: 'Shot', data: { code: 'SH010', cut_in: 1001 } });
    expect(await json(['get', 'Shot', shot.id])).toMatchObject({ id: shot.id });
    const found = await json(['find', 'Shot', '--where', 'code=SH010', '--fields', 'code,cut_in']);
    expect(found.items.map((r: any) => r.id)).toEqual([shot.id]);
    const table = await ok(['find', 'Shot', '--where', 'cut_in greater_or_equal 1000', '--fields', 'code,cut_in']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+CODE\s+CUT_IN\s+STATUS$/);
    expect(table.stdout).toMatch(new RegExp(`${shot.id}\\s+SH010\\s+1001`));
    const updated = await json(['update', 'Shot', shot.id, 'cut_out=1100', '--data', '{"description":"hero"}']);
    expect(updated.data).toMatchObject({ code: 'SH010', cut_in: 1001, cut_out: 1100, description: 'hero' });
    expect(await json(['delete', 'Shot', shot.id])).toMatchObject({ id: shot.id, retired: true });
    const missing = await reelbase(['get', 'Shot', shot.id, '--json']);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stderr).error).toMatchObject({ status: 404, code: 'not_found' });
    const invalid = await reelbase(['create', 'Shot', '--project', projectId, 'bogus=1', '--json']);
    expect(invalid.code).toBe(5);
    expect(JSON.parse(invalid.stderr).error.problems[0].loc).toEqual(['body', 'data', 'bogus']);
  });

  it('summarizes with --json', async () => {
    for (const code of ['anim', 'comp']) expectStatus(await admin.api.post('/schema/steps', { code, name: code }), 200, `step ${code}`);
    for (const [name, step, est] of [
      ['a', 'anim', 60],
      ['b', 'anim', 30],
      ['c', 'comp', 15],
    ] as const) {
      await json(['create', 'Task', '--project', projectId, `name=${name}`, `step=${step}`, `estimate_minutes=${est}`]);
    }
    const res = await json([
      'summarize',
      'Task',
      '-s',
      'estimate_minutes:sum',
      '-s',
      'id:record_count',
      '-g',
      'step:exact',
      '--where',
      `project_id=${projectId}`,
    ]);
    expect(res.summaries).toEqual({ estimate_minutes: 105, id: 3 });
    expect(res.groups.map((g: any) => [g.group_value, g.summaries.estimate_minutes])).toEqual([
      ['anim', 90],
      ['comp', 15],
    ]);
  });

  it('uploads with plain progress lines when not on a terminal, then wait reports the transcode (exit 7 when it failed)', async () => {
    const version = await json(['create', 'Version', '--project', projectId, 'code=v001']);
    const file = join(home, 'not-a-movie.mov');
    writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 7));
    const up = await ok(['upload', version.id, file, '--json']);
    expect(JSON.parse(up.stdout)).toMatchObject({ status: 'pending', representation: { entity_type: 'Representation' } });
    const lines = up.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-1)).toMatch(/^upload 100% 3\.0 MiB\/3\.0 MiB .+\/s \d+:\d\d left$/);
    const waited = await reelbase(['wait', version.id, '--timeout', '120', '--json']);
    expect(waited.code).toBe(7);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: 'failed' });
  }, 180_000);

  it('prints events as JSON lines, and --follow streams new ones until Ctrl-C', async () => {
    const before = await lastEventId(admin.api);
    await json(['create', 'Sequence', '--project', projectId, 'code=SQ1']);
    await json(['create', 'Sequence', '--project', projectId, 'code=SQ2']);
    const lines = await eventually(async () => {
      const r = await ok(['events', '--after', String(before), '--type', 'Sequence', '--json']);
      const evs = r.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      return evs.length >= 2 ? evs : undefined;
    });
    expect(lines.map((ev: any) => ev.changes.code)).toEqual(['SQ1', 'SQ2']);

    const from = await lastEventId(admin.api);
    const child = spawn(process.execPath, [BIN, 'events', '--follow', '--after', String(from), '--type', 'Sequence', '--json'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    await new Promise((r) => setTimeout(r, 1500));
    await json(['create', 'Sequence', '--project', projectId, 'code=SQ3']);
    await eventually(async () => (out.includes('"SQ3"') ? true : undefined), 20_000, 'the followed event');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(
      out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).changes.code),
    ).toEqual(['SQ3']);
  });

  it('imports a file (POST /sync/import): created, then unchanged on a second run', async () => {
    const file = join(home, 'import.json');
    writeFileSync(
      file,
      JSON.stringify([
        { external_id: 'sg-seq-1', entity_type: 'Sequence', project_id: projectId, data: { code: 'IMP_SQ' } },
        {
          external_id: 'sg-shot-1',
          entity_type: 'Shot',
          project_id: projectId,
          data: { code: 'IMP_SH', sequence: { type: 'Sequence', external_id: 'sg-seq-1' } },
        },
      ]),
    );
    const first = await json(['import', file, '--source', 'shotgrid']);
    expect([first.created, first.updated, first.unchanged]).toEqual([2, 0, 0]);
    const second = await json(['import', file, '--source', 'shotgrid']);
    expect([second.created, second.unchanged]).toEqual([0, 2]);
    const shot = await json(['find', 'Shot', '--where', 'sequence.Sequence.code=IMP_SQ']);
    expect(shot.items.map((r: any) => r.data.code)).toEqual(['IMP_SH']);
  });

  it('runs a farm agent over a 3-chunk job until the job is done; a failing command fails its chunk with the output tail', async () => {
    const job = expectStatus(
      await admin.api.post('/farm/jobs', { project_id: projectId, name: 'render', kind: 'render', pool: 'cli', frames: '1001-1003', chunk_size: 1 }),
      200,
    );
    const out = join(home, 'frames.txt');
    const agent = await reelbase(['farm', 'agent', '--pool', 'cli', '--exec', `echo rendering {frames} >> ${out}`, '--exit-when-idle', '--json']);
    expect(agent.code).toBe(0);
    const outcomes = agent.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(outcomes.map((o: any) => [o.frames, o.result, o.exitCode])).toEqual([
      ['1001', 'done', 0],
      ['1002', 'done', 0],
      ['1003', 'done', 0],
    ]);
    expect(readFileSync(out, 'utf8')).toBe('rendering 1001\nrendering 1002\nrendering 1003\n');
    const done = expectStatus(await admin.api.get(`/entities/FarmJob/${job.id}`), 200);
    expect(done).toMatchObject({ status: 'done', data: { chunks_done: 3, progress: 100 } });

    const failing = expectStatus(
      await admin.api.post('/farm/jobs', { project_id: projectId, name: 'broken', kind: 'render', pool: 'cli-fail', frames: '1-1', max_attempts: 1 }),
      200,
    );
    const bad = await reelbase([
      'farm',
      'agent',
      '--pool',
      'cli-fail',
      '--exec',
      'echo starting {frames}; echo "license not found" >&2; exit 3',
      '--exit-when-idle',
      '--json',
    ]);
    expect(bad.code).toBe(0);
    expect(JSON.parse(bad.stdout.trim())).toMatchObject({ result: 'failed', exitCode: 3 });
    const chunks = expectStatus(await admin.api.get(`/farm/jobs/${failing.id}/chunks`), 200).items;
    expect(chunks[0].state).toBe('failed');
    expect(chunks[0].error).toContain('exit status 3');
    expect(chunks[0].error).toContain('starting 1');
    expect(chunks[0].error).toContain('license not found');
    expect(expectStatus(await admin.api.get(`/entities/FarmJob/${failing.id}`), 200).status).toBe('failed');

    // The command runs without the agent's credentials: a job cannot print the agent's key.
    const key = JSON.parse(readFileSync(join(home, 'config', 'reelbase', 'config.json'), 'utf8')).profiles.default.api_key as string;
    const dump = expectStatus(await admin.api.post('/farm/jobs', { project_id: projectId, name: 'env', kind: 'render', pool: 'cli-env', frames: '1-1' }), 200);
    const credentials = { REELBASE_API_KEY: key, REELBASE_PASSWORD: 'correct horse battery', REELBASE_TOKEN: 'a-login-token' };
    const envAgent = await reelbase(['farm', 'agent', '--pool', 'cli-env', '--exec', 'env', '--exit-when-idle', '--json'], {
      env: { ...credentials, STUDIO_SHOW: 'cli' },
    });
    expect(envAgent.code).toBe(0);
    const envChunk = expectStatus(await admin.api.get(`/farm/jobs/${dump.id}/chunks`), 200).items[0];
    const logTail = JSON.stringify(envChunk.output);
    expect(logTail).toContain('STUDIO_SHOW=cli');
    for (const [name, value] of Object.entries(credentials)) {
      expect(logTail).not.toContain(name);
      expect(envAgent.stderr).not.toContain(value);
    }
  });

  it('stops a farm agent on Ctrl-C after its running chunk is reported', async () => {
    const job = expectStatus(await admin.api.post('/farm/jobs', { project_id: projectId, name: 'slow', kind: 'render', pool: 'cli-int' }), 200);
    const child = spawn(process.execPath, [BIN, 'farm', 'agent', '--pool', 'cli-int', '--exec', 'sleep 2; echo slept', '--poll-seconds', '1'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    await eventually(async () => (err.includes('chunk 0') ? true : undefined), 20_000, 'the agent took the chunk');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(err).toContain('slept');
    expect(expectStatus(await admin.api.get(`/entities/FarmJob/${job.id}`), 200).status).toBe('done');
  });

  it('takes a launch URI from an action and prints it, or runs it with its environment', async () => {
    expectStatus(
      await admin.api.call('PUT', '/schema/applications', {
        body: {
          applications: [
            { code: 'envdump', label: 'Env dump', group: 'envdump', version: '1', executables: { linux: '/usr/bin/env' }, environment: { STUDIO_SHOW: 'cli' } },
          ],
        },
      }),
      200,
    );
    const shot = await json(['create', 'Shot', '--project', projectId, 'code=SH_LAUNCH']);
    const execute = async () =>
      expectStatus(
        await admin.api.post('/actions/execute', { action_id: 'launch:envdump', project_id: projectId, entity_type: 'Shot', entity_ids: [shot.id] }),
        200,
      );
    const printed = await json(['launch', (await execute()).uri]);
    expect(printed).toMatchObject({ app: 'envdump', executable: '/usr/bin/env', command: ['/usr/bin/env'], environment: { STUDIO_SHOW: 'cli' } });
    expect(printed.launch_environment).toMatchObject({ REELBASE_ENTITY_ID: shot.id, REELBASE_PROJECT_ID: projectId, STUDIO_SHOW: 'cli' });
    const uri = (await execute()).uri;
    const ran = await ok(['launch', uri, '--run']);
    expect(ran.stdout).toContain('STUDIO_SHOW=cli');
    expect(ran.stdout).toContain(`REELBASE_ENTITY_ID=${shot.id}`);
    // A launch request is taken once.
    expect((await reelbase(['launch', uri])).code).toBe(3);
    // The key never goes to a server the link names but the profile does not.
    const foreign = uri.replace(/server=[^&]+/, `server=${encodeURIComponent('http://127.0.0.2:9')}`);
    expect((await reelbase(['launch', foreign])).code).toBe(4);
    // With no server configured the link's own server is not trusted either, key or no key.
    const bare = await reelbase(['launch', (await execute()).uri], { env: { XDG_CONFIG_HOME: join(home, 'empty'), REELBASE_API_KEY: 'svc_env' } });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('no server is configured');
  });

  it('npx reelbase works from the clone', () => {
    const r = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'reelbase'), ['--help'], { env, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: reelbase');
  });
});
