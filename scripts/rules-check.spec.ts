// The rules check on a machine without promtool: with a PATH holding only a fake apt-get (which
// "installs" a fake promtool beside itself and records how it was called) and a fallback list
// naming files that do not exist, so neither this machine's promtool nor the user running the test
// (root or not) changes what is checked.
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ES module without type declarations
import { findPromtool, rulesCheck } from './rules-check.mjs';
// @ts-expect-error -- a plain ES module without type declarations
import { which } from './which.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const script = (file: string, text: string) => {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
};

/** A scratch machine: `bin` (the only PATH entry), a call log, and a fallback path that does not exist. */
function machine(opts: { apt?: 'works' | 'fails' | 'absent'; promtoolOnPath?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'rules-check-'));
  dirs.push(dir);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const log = join(dir, 'calls.log');
  writeFileSync(log, '');
  const cp = which('cp', process.env.PATH ?? '') as string;
  // promtool: says a version, records every call, passes every check.
  const staged = join(dir, 'promtool.package');
  script(staged, `#!/bin/sh\nprintf 'promtool %s\\n' "$*" >> '${log}'\n[ "$1" = --version ] && echo 'promtool, version 9.9.9 (fake)'\nexit 0\n`);
  if (opts.promtoolOnPath) copyFileSync(staged, join(bin, 'promtool'));
  if ((opts.apt ?? 'works') !== 'absent') {
    const install = opts.apt === 'fails' ? "echo 'E: Unable to locate package prometheus' >&2; exit 100" : `'${cp}' '${staged}' '${join(bin, 'promtool')}'`;
    script(
      join(bin, 'apt-get'),
      `#!/bin/sh\nprintf 'apt-get %s (DEBIAN_FRONTEND=%s)\\n' "$*" "$DEBIAN_FRONTEND" >> '${log}'\nif [ "$1" = install ]; then ${install}; fi\nexit 0\n`,
    );
  }
  const out: string[] = [];
  const errors: string[] = [];
  const run = (extra: { env?: NodeJS.ProcessEnv; isRoot?: boolean } = {}) =>
    rulesCheck({
      env: { PATH: bin, ...extra.env },
      fallbacks: [join(dir, 'usr', 'bin', 'promtool')],
      isRoot: extra.isRoot ?? true,
      say: (l: string) => out.push(l),
      err: (l: string) => errors.push(l),
    }) as number;
  return { dir, bin, calls: () => readFileSync(log, 'utf8').trim().split('\n').filter(Boolean), out, errors, run };
}

describe('rules-check', () => {
  it('installs prometheus with apt-get when promtool is neither on PATH nor at the fallback path, then checks the rules with it', () => {
    const m = machine();
    expect(m.run()).toBe(0);
    const calls = m.calls();
    expect(calls.slice(0, 3)).toEqual([
      'apt-get update (DEBIAN_FRONTEND=noninteractive)',
      'apt-get install -y --no-install-recommends --reinstall prometheus (DEBIAN_FRONTEND=noninteractive)',
      'promtool --version',
    ]);
    // Every rule file and test went through the promtool just installed.
    expect(calls[3]).toBe('promtool check rules charts/reelbase/files/alerts.yaml');
    expect(calls.slice(4).length).toBeGreaterThan(0);
    for (const c of calls.slice(4)) expect(c).toMatch(/^promtool test rules charts\/reelbase\/tests\/.+\.test\.yaml$/);
    expect(m.out).toContain(`  installed ${join(m.bin, 'promtool')}`);
    expect(m.out).toContain('  promtool, version 9.9.9 (fake)');
    expect(m.out.at(-1)).toBe('rules-check: passed');
    expect(m.errors).toEqual([]);
  });

  it('uses a promtool found on PATH and installs nothing', () => {
    const m = machine({ promtoolOnPath: true });
    expect(m.run()).toBe(0);
    expect(m.calls().filter((c) => c.startsWith('apt-get'))).toEqual([]);
    expect(m.calls()[0]).toBe('promtool --version');
  });

  it('refuses a PROMTOOL that names a missing file, in one sentence, and installs nothing', () => {
    const m = machine();
    const missing = join(m.dir, 'nowhere', 'promtool');
    expect(m.run({ env: { PROMTOOL: missing } })).toBe(1);
    expect(m.errors).toEqual([`rules-check: PROMTOOL is ${missing}, which is not an executable file: point it at promtool, or unset it to look on PATH.`]);
    expect(m.calls()).toEqual([]);
    expect(() => findPromtool({ env: { PATH: m.bin, PROMTOOL: m.dir } })).toThrow(/not an executable file/);
  });

  it('says how to install promtool when it may not install it (not root, or no apt-get), or when apt-get fails', () => {
    const notRoot = machine();
    expect(notRoot.run({ isRoot: false })).toBe(1);
    expect(notRoot.errors.join('\n')).toMatch(/promtool was not found on PATH .* installing it needs root\. Install it \(Debian\/Ubuntu: `apt-get install/);
    expect(notRoot.calls()).toEqual([]);

    const noApt = machine({ apt: 'absent' });
    expect(noApt.run()).toBe(1);
    expect(noApt.errors.join('\n')).toMatch(/there is no apt-get to install it with/);

    const failing = machine({ apt: 'fails' });
    expect(failing.run()).toBe(1);
    expect(failing.errors.join('\n')).toMatch(
      /apt-get install -y --no-install-recommends --reinstall prometheus failed \(status 100\):\nE: Unable to locate package prometheus/,
    );
  });

  it('says so when promtool cannot run, instead of a TypeError', () => {
    const m = machine();
    script(join(m.bin, 'promtool'), '#!/nonexistent/interpreter\n');
    expect(m.run()).toBe(1);
    expect(m.errors.join('\n')).toMatch(/promtool --version failed \(could not run: .*ENOENT/);
  });

  it('finds a program by path only when that file exists and is executable', () => {
    const m = machine({ promtoolOnPath: true });
    const plain = join(m.dir, 'plain');
    writeFileSync(plain, 'not a program');
    expect(which(join(m.bin, 'promtool'), '')).toBe(join(m.bin, 'promtool'));
    expect(which(join(m.dir, 'missing'), m.bin)).toBeUndefined();
    expect(which(plain, '')).toBeUndefined();
    expect(which(m.bin, '')).toBeUndefined();
    expect(which('promtool', `${join(m.dir, 'empty')}:${m.bin}`)).toBe(join(m.bin, 'promtool'));
    expect(existsSync(join(m.dir, 'usr'))).toBe(false);
  });
});
