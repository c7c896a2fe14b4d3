import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Conflict, ConnectionError, NotFound, PermissionDenied, ValidationError } from '../errors.js';
import { configPath, readConfig, resolveTarget, writeConfig } from './config.store.js';
import { CREDENTIAL_VARIABLES, withoutCredentials } from './credentials.js';
import { Tail, commandFor, frameBounds } from './farm.agent.js';
import { launchEnvironment, parseLaunchUri, type LaunchPayload } from './launch.js';
import { assignments, buildFilters, buildOrder, main, type Io } from './main.js';
import { EXIT, exitCodeOf, table } from './output.js';
import { ProgressBar, formatBytes } from './progress.bar.js';

function io(env: NodeJS.ProcessEnv = {}): Io & { stdout: string; errText: string } {
  const o = {
    stdout: '',
    errText: '',
    out: (t: string) => void (o.stdout += t),
    err: (t: string) => void (o.errText += t),
    stderr: { write: (t: string) => void (o.errText += t) },
    env,
    readStdin: () => '',
  };
  return o;
}

interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
  body: any;
}

const listening: Server[] = [];
afterEach(async () => {
  for (const s of listening.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A local server answering `answer(request)` as JSON (404 when it returns undefined), keeping every request it saw. */
async function fakeServer(answer: (r: Seen) => unknown = () => undefined): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const r = { method: req.method!, path: req.url!, authorization: req.headers.authorization, body: text ? JSON.parse(text) : undefined };
      seen.push(r);
      const out = answer(r);
      res.writeHead(out === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out ?? { detail: 'not here', code: 'not_found' }));
    });
  });
  listening.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The launch payload of Maya 2025 for Shot SH010 of project PRJ, with this environment (and a task, when given). */
const mayaLaunch = (environment: Record<string, string>, task?: { id: string; name: string; step: string }) =>
  ({
    app: 'maya',
    variant: '2025',
    label: 'Maya 2025',
    args: [],
    tools: [],
    environment,
    context: { project: { id: 'p', code: 'PRJ', name: 'Project' }, entity: { type: 'Shot', id: 's', code: 'SH010' }, ...(task ? { task } : {}) },
  }) as LaunchPayload;

const scratchConfig = () => ({ XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'rb-cli-')) });

describe('reelbase command line', () => {
  it('keeps profiles readable by the user only, and lets the environment win', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rb-cli-'));
    const env = { XDG_CONFIG_HOME: dir };
    const file = configPath(env);
    expect(file).toBe(join(dir, 'reelbase', 'config.json'));
    writeConfig({ default_profile: 'studio', profiles: { studio: { url: 'http://tracker:8080', api_key: 'svc_a' } } }, file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readConfig(file).profiles.studio!.api_key).toBe('svc_a');
    expect(resolveTarget({}, env, file)).toEqual({ url: 'http://tracker:8080', apiKey: 'svc_a', profile: 'studio' });
    expect(resolveTarget({}, { ...env, REELBASE_API_KEY: 'svc_env' }, file).apiKey).toBe('svc_env');
    // The profile's key never goes to another server.
    expect(resolveTarget({}, { ...env, REELBASE_URL: 'http://elsewhere:1' }, file)).toEqual({
      url: 'http://elsewhere:1',
      apiKey: undefined,
      profile: 'studio',
    });
    expect(resolveTarget({ url: 'http://tracker:8080/' }, env, file).apiKey).toBe('svc_a');
  });

  it('maps failures to documented exit codes', () => {
    expect(exitCodeOf(new NotFound('x', { status: 404 }))).toBe(EXIT.notFound);
    expect(exitCodeOf(new PermissionDenied('x', { status: 403 }))).toBe(EXIT.auth);
    expect(exitCodeOf(new ValidationError('x', { status: 422 }))).toBe(EXIT.rejected);
    expect(exitCodeOf(new Conflict('x', { status: 409 }))).toBe(EXIT.rejected);
    expect(exitCodeOf(new ConnectionError('x', { code: 'ECONNREFUSED' }))).toBe(EXIT.unreachable);
    expect(exitCodeOf(new Error('x'))).toBe(EXIT.error);
  });

  it('answers usage errors with 2 and --help with 0 on every command', async () => {
    const i = io({ XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'rb-cli-')) });
    expect(await main(['node', 'reelbase', 'get'], i)).toBe(EXIT.usage);
    expect(await main(['node', 'reelbase', 'nonsense'], i)).toBe(EXIT.usage);
    for (const cmd of [
      ['login'],
      ['find'],
      ['get'],
      ['create'],
      ['update'],
      ['delete'],
      ['summarize'],
      ['upload'],
      ['wait'],
      ['events'],
      ['import'],
      ['farm', 'agent'],
      ['launch'],
    ]) {
      const h = io();
      expect(await main(['node', 'reelbase', ...cmd, '--help'], h)).toBe(EXIT.ok);
      expect(h.stdout).toContain(`Usage: reelbase ${cmd.join(' ')}`);
    }
    // No server configured: a usage error naming the fix.
    const n = io({ XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'rb-cli-')) });
    expect(await main(['node', 'reelbase', 'get', 'Shot', 'x'], n)).toBe(EXIT.usage);
    expect(n.errText).toContain('reelbase login');
  });

  it('reads conditions, orders and key=value fields', () => {
    expect(buildFilters(undefined, ['code=SH010', 'sequence.Sequence.code in ["SQ1","SQ2"]', 'cut_in greater_than 1001'])).toEqual([
      ['code', 'is', 'SH010'],
      ['sequence.Sequence.code', 'in', ['SQ1', 'SQ2']],
      ['cut_in', 'greater_than', 1001],
    ]);
    expect(buildFilters('[["status","is","ip"]]', [])).toEqual([['status', 'is', 'ip']]);
    expect(buildOrder('code,-created_at')).toEqual([
      { field: 'code', direction: 'asc' },
      { field: 'created_at', direction: 'desc' },
    ]);
    expect(assignments(['code=SH010', 'cut_in=1001', 'description=null'])).toEqual({ code: 'SH010', cut_in: 1001, description: null });
    expect(() => assignments(['novalue'])).toThrow(/key=value/);
  });

  it('prints aligned tables', () => {
    expect(
      table(
        [
          { id: 'a', code: 'SH010' },
          { id: 'bbb', code: null, status: { type: 'Shot', id: 'x' } },
        ],
        ['id', 'code', 'status'],
      ),
    ).toBe('ID   CODE   STATUS\na    SH010\nbbb         Shot:x');
  });

  it('substitutes frames into the farm command and keeps the output tail', () => {
    const claimed = { job: { id: 'j1', data: {} }, chunk: { id: 'c1', index: 2, frames: '1021-1030', lease: 'l', attempt: 1 } };
    expect(commandFor('render -s {first} -e {last} -f {frames} # {job_id}/{chunk_id}/{index}', claimed)).toBe('render -s 1021 -e 1030 -f 1021-1030 # j1/c1/2');
    expect(frameBounds('20,22,24')).toEqual({ first: '20', last: '24' });
    expect(frameBounds('1-9x2')).toEqual({ first: '1', last: '9' });
    expect(() => commandFor('x {frames}', { ...claimed, chunk: { ...claimed.chunk, frames: '1;rm -rf /' } })).toThrow(/unexpected/);
    const t = new Tail(10);
    for (const s of ['hello ', 'world ', 'and more']) t.push(Buffer.from(s));
    expect(t.text()).toBe('d and more');
  });

  it('reads launch URIs and merges the launch environment', () => {
    expect(parseLaunchUri('reelbase-launcher://launch?server=http%3A%2F%2Flocalhost%3A8080&token=abc')).toEqual({
      server: 'http://localhost:8080',
      token: 'abc',
    });
    expect(() => parseLaunchUri('https://evil/?token=x')).toThrow(/reelbase-launcher/);
    const payload = mayaLaunch({ MAYA_MODULE_PATH: '/tools/mtoa', ARNOLD_VERSION: '7' }, { id: 't', name: 'anim', step: 'animation' });
    const env = launchEnvironment(payload, 'http://srv', { MAYA_MODULE_PATH: '/home/me', HOME: '/home/me' }, ':');
    expect(env.MAYA_MODULE_PATH).toBe('/tools/mtoa:/home/me');
    expect(env.ARNOLD_VERSION).toBe('7');
    expect(env.HOME).toBe('/home/me');
    expect(env.REELBASE_TASK_STEP).toBe('animation');
    expect(env.REELBASE_ENTITY_NAME).toBe('SH010');
  });

  it('shows progress with rate and time left: redrawn on a terminal, every 10 % in a log', () => {
    let now = 0;
    const tty: string[] = [];
    const bar = new ProgressBar({ isTTY: true, columns: 100, write: (t) => tty.push(t) }, 'upload', () => now);
    now = 2000;
    bar.update(50 * 1024 * 1024, 100 * 1024 * 1024);
    expect(tty[0]).toMatch(/^\r\[#+-+\] upload  50% 50\.0 MiB\/100\.0 MiB 25\.0 MiB\/s 0:02 left$/);
    const plain: string[] = [];
    const log = new ProgressBar({ write: (t) => plain.push(t) }, 'upload', () => now);
    for (let s = 0; s <= 100; s++) log.update(s, 100);
    expect(plain).toHaveLength(11);
    expect(formatBytes(1536)).toBe('1.5 KiB');
  });
  it('runs farm commands without the credentials the agent holds', async () => {
    const claimed = { job: { id: 'j1', data: { payload: { shot: 'SH010' } } }, chunk: { id: 'c1', index: 0, frames: '1-1', lease: 'L1', attempt: 1 } };
    const farm = await fakeServer((r) => (r.path === '/farm/claim' ? claimed : r.path === '/farm/chunks/c1/complete' ? {} : undefined));
    const secrets = { REELBASE_API_KEY: 'svc_agent_secret_key', REELBASE_TOKEN: 'eyJ.token.secret', REELBASE_PASSWORD: 'agent-password-secret' };
    const i = io({ ...scratchConfig(), PATH: process.env.PATH, REELBASE_URL: farm.url, STUDIO_SHOW: 'kept', ...secrets });
    expect(await main(['node', 'reelbase', 'farm', 'agent', '--pool', 'p', '--exec', 'env', '--max-chunks', '1'], i)).toBe(EXIT.ok);
    // The agent itself used its key; the command it ran never saw it.
    expect(farm.seen.map((r) => [r.path, r.authorization])).toEqual([
      ['/farm/claim', 'Bearer svc_agent_secret_key'],
      ['/farm/chunks/c1/complete', 'Bearer svc_agent_secret_key'],
    ]);
    const logTail: string = farm.seen[1]!.body.output.log_tail;
    expect(logTail).toContain('STUDIO_SHOW=kept');
    expect(logTail).toContain('REELBASE_FARM_CHUNK_ID=c1');
    expect(logTail).toContain(`REELBASE_URL=${farm.url}`);
    for (const [name, value] of Object.entries(secrets)) {
      expect(logTail).not.toContain(name);
      expect(logTail).not.toContain(value);
      expect(i.errText).not.toContain(value);
    }
    expect(CREDENTIAL_VARIABLES).toEqual(['REELBASE_API_KEY', 'REELBASE_TOKEN', 'REELBASE_PASSWORD']);
    expect(withoutCredentials({ HOME: '/h', REELBASE_API_KEY: 'k', REELBASE_PROFILE: 'p', unset: undefined })).toEqual({ HOME: '/h', REELBASE_PROFILE: 'p' });
  });

  it('takes a launch only from the configured server, and refuses every link while none is configured', async () => {
    const payload = mayaLaunch({ STUDIO: 'demo' });
    const trusted = await fakeServer((r) => (r.path.startsWith('/actions/launch/') ? payload : undefined));
    const decoy = await fakeServer(() => payload);
    const link = (server: string) => `reelbase-launcher://launch?server=${encodeURIComponent(server)}&token=tok_0123456789abcdef`;

    // Nothing configured: the link's own server is not taken on its word, whatever key the environment holds.
    const none = io({ ...scratchConfig(), REELBASE_API_KEY: 'svc_env_key' });
    expect(await main(['node', 'reelbase', 'launch', link(decoy.url)], none)).toBe(EXIT.usage);
    expect(none.errText).toContain(`no server is configured, and the launch link's server (${decoy.url}) is not trusted on its own word`);
    expect(none.errText).toContain(`reelbase login --url ${decoy.url}`);
    expect(await main(['node', 'reelbase', 'launch', 'tok_0123456789abcdef'], none)).toBe(EXIT.usage);

    // Configured by the environment, or by a profile: a link naming another server is refused.
    const byEnv = io({ ...scratchConfig(), REELBASE_URL: trusted.url, REELBASE_API_KEY: 'svc_env_key' });
    expect(await main(['node', 'reelbase', 'launch', link(decoy.url)], byEnv)).toBe(EXIT.auth);
    expect(byEnv.errText).toContain(`the launch names ${decoy.url}, but the configured server is ${trusted.url}: refused`);
    const profileEnv = scratchConfig();
    writeConfig({ default_profile: 'studio', profiles: { studio: { url: trusted.url, api_key: 'svc_profile_key' } } }, configPath(profileEnv));
    const byProfile = io(profileEnv);
    expect(await main(['node', 'reelbase', 'launch', link(decoy.url)], byProfile)).toBe(EXIT.auth);
    expect(decoy.seen).toEqual([]);
    expect(trusted.seen).toEqual([]);

    // The configured server's own link (or a bare token) is taken from it, with its key.
    expect(await main(['node', 'reelbase', 'launch', `${link(`${trusted.url}/`)}`, '--json'], byProfile)).toBe(EXIT.ok);
    expect(JSON.parse(byProfile.stdout)).toMatchObject({ app: 'maya', launch_environment: { STUDIO: 'demo', REELBASE_SERVER: trusted.url } });
    expect(await main(['node', 'reelbase', 'launch', 'tok_0123456789abcdef'], byEnv)).toBe(EXIT.ok);
    expect(trusted.seen.map((r) => [r.path, r.authorization])).toEqual([
      ['/actions/launch/tok_0123456789abcdef', 'Bearer svc_profile_key'],
      ['/actions/launch/tok_0123456789abcdef', 'Bearer svc_env_key'],
    ]);
    expect(decoy.seen).toEqual([]);
  });

  it('refuses a password or an API key given as an argument, and takes them from a file, standard input, the environment or a prompt', async () => {
    const auth = await fakeServer((r) => {
      if (r.path === '/auth/login') return r.body.password === 'right pass' ? { access_token: 'login-token', token_type: 'bearer', expires_in: 60 } : undefined;
      if (r.path === '/auth/api-keys') return { id: 'k', name: r.body.name, token: 'svc_made_for_machine', expires_at: null, created_at: 'now' };
      if (r.path === '/me') return { id: 'u1', role: 'Admin', data: { email: 'admin@studio.test' } };
      return undefined;
    });
    const login = (args: string[], extra: { env?: NodeJS.ProcessEnv; prompt?: string } = {}) => {
      const i = io({ ...scratchConfig(), REELBASE_URL: auth.url, ...extra.env });
      const asked: string[] = [];
      if (extra.prompt !== undefined)
        i.promptSecret = async (q) => {
          asked.push(q);
          return extra.prompt;
        };
      return main(['node', 'reelbase', 'login', ...args], i).then((code) => ({ code, i, asked, saved: () => readConfig(configPath(i.env)).profiles.default }));
    };

    for (const [args, safe] of [
      [['--email', 'admin@studio.test', '--password', 'right pass'], '--password-file FILE, --password-stdin, REELBASE_PASSWORD or the prompt'],
      [['--password=right pass'], '--password-file FILE'],
      [['--api-key', 'svc_given_as_argument'], '--api-key-file FILE, REELBASE_API_KEY or the prompt'],
    ] as const) {
      const r = await login([...args]);
      expect(r.code).toBe(EXIT.usage);
      expect(r.i.errText).toContain('on the command line is visible to every user of this machine');
      expect(r.i.errText).toContain(safe);
    }
    expect(auth.seen).toEqual([]);

    const dir = mkdtempSync(join(tmpdir(), 'rb-cli-'));
    writeFileSync(join(dir, 'password'), 'right pass\n', { mode: 0o600 });
    writeFileSync(join(dir, 'key'), 'svc_from_file\n', { mode: 0o600 });
    writeFileSync(join(dir, 'empty'), '');
    const fromFile = await login(['--email', 'admin@studio.test', '--password-file', join(dir, 'password')]);
    expect(fromFile.code).toBe(EXIT.ok);
    expect(auth.seen[0]).toMatchObject({ path: '/auth/login', body: { email: 'admin@studio.test', password: 'right pass' } });
    expect(fromFile.saved()).toMatchObject({ url: auth.url, api_key: 'svc_made_for_machine' });

    const fromEnv = await login(['--email', 'admin@studio.test'], { env: { REELBASE_PASSWORD: 'right pass' }, prompt: 'never asked' });
    expect([fromEnv.code, fromEnv.asked]).toEqual([EXIT.ok, []]);
    const prompted = await login(['--email', 'admin@studio.test'], { prompt: 'right pass' });
    expect([prompted.code, prompted.asked]).toEqual([EXIT.ok, [`password for admin@studio.test at ${auth.url}: `]]);
    const noTerminal = await login(['--email', 'admin@studio.test']);
    expect(noTerminal.code).toBe(EXIT.usage);
    expect(noTerminal.i.errText).toContain('no password: give --password-file FILE, --password-stdin or REELBASE_PASSWORD');
    expect((await login(['--email', 'admin@studio.test', '--password-file', join(dir, 'empty')])).i.errText).toContain('the file is empty');
    expect((await login(['--email', 'admin@studio.test', '--password-file', join(dir, 'missing')])).i.errText).toContain('ENOENT');

    auth.seen.length = 0;
    const keyFile = await login(['--api-key-file', join(dir, 'key')]);
    expect(keyFile.code).toBe(EXIT.ok);
    expect(keyFile.saved()!.api_key).toBe('svc_from_file');
    const keyPrompt = await login([], { prompt: 'svc_typed' });
    expect([keyPrompt.code, keyPrompt.asked, keyPrompt.saved()!.api_key]).toEqual([EXIT.ok, [`API key for ${auth.url}: `], 'svc_typed']);
    expect(auth.seen.map((r) => r.authorization)).toEqual(['Bearer svc_from_file', 'Bearer svc_typed']);
    expect((await login([])).code).toBe(EXIT.usage);

    const help = io();
    expect(await main(['node', 'reelbase', 'login', '--help'], help)).toBe(EXIT.ok);
    expect(help.stdout).toContain('--password-file <file>');
    expect(help.stdout).toContain('--api-key-file <file>');
    expect(help.stdout).not.toMatch(/--password <|--api-key </);
    expect(readFileSync(join(dir, 'password'), 'utf8')).toBe('right pass\n');
  });
});
