import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Conflict, ConnectionError, NotFound, PermissionDenied, ValidationError } from '../errors.js';
import { configPath, readConfig, resolveTarget, writeConfig } from './config.store.js';
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
    const payload = {
      app: 'maya',
      variant: '2025',
      label: 'Maya 2025',
      args: [],
      tools: [],
      environment: { MAYA_MODULE_PATH: '/tools/mtoa', ARNOLD_VERSION: '7' },
      context: {
        project: { id: 'p', code: 'PRJ', name: 'Project' },
        entity: { type: 'Shot', id: 's', code: 'SH010' },
        task: { id: 't', name: 'anim', step: 'animation' },
      },
    } as LaunchPayload;
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
});
