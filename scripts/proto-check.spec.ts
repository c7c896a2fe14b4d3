// `buf breaking` in the proto check, on a scratch git repository holding a proto module laid out
// like proto/: additive changes pass, a removed field fails, and no history means a clear skip.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ES module without type declarations
import { breakingCheck } from './proto-check.mjs';

const BUF_YAML = 'version: v2\nmodules:\n  - path: defs\nbreaking:\n  use:\n    - FILE\n';
const proto = (fields: string) => `syntax = "proto3";\npackage demo.v1;\nmessage Thing {\n${fields}}\n`;
const dirs: string[] = [];

function repo(): { root: string; write: (path: string, text: string) => void; commit: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'proto-breaking-'));
  dirs.push(root);
  const git = (...args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args], {
      cwd: root,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git('init', '-q');
  return {
    root,
    write: (path, text) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    },
    commit: () => {
      git('add', '-A');
      git('commit', '-q', '-m', 'change');
    },
  };
}

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('proto check: buf breaking against history', () => {
  it('an added field passes; a removed field fails, uncommitted or in the last commit', () => {
    const r = repo();
    r.write('proto/buf.yaml', BUF_YAML);
    r.write('proto/defs/demo/v1/thing.proto', proto('  string id = 1;\n  string name = 2;\n'));
    r.commit();
    r.write('proto/defs/demo/v1/thing.proto', proto('  string id = 1;\n  string name = 2;\n  int64 size = 3;\n'));
    expect(breakingCheck(r.root, {})).toMatchObject({ status: 'ok', message: expect.stringContaining('against HEAD') });
    r.commit();
    expect(breakingCheck(r.root, {})).toMatchObject({ status: 'ok', message: expect.stringContaining('against HEAD~1') });

    r.write('proto/defs/demo/v1/thing.proto', proto('  string id = 1;\n  int64 size = 3;\n'));
    const uncommitted = breakingCheck(r.root, {});
    expect(uncommitted.status).toBe('failed');
    expect(uncommitted.message).toMatch(/against HEAD \(/);
    expect(uncommitted.message).toMatch(/name/);
    r.commit();
    expect(breakingCheck(r.root, {})).toMatchObject({ status: 'failed', message: expect.stringMatching(/against HEAD~1[\s\S]*name/) });
    // A named baseline, e.g. the merge base of a branch.
    expect(breakingCheck(r.root, { PROTO_BREAKING_AGAINST: 'HEAD~2' }).status).toBe('failed');
  });

  it('skips with a reason when there is no earlier commit or no git at all', () => {
    const r = repo();
    r.write('proto/buf.yaml', BUF_YAML);
    r.write('proto/defs/demo/v1/thing.proto', proto('  string id = 1;\n'));
    r.commit();
    expect(breakingCheck(r.root, {})).toEqual({ status: 'skipped', message: expect.stringContaining("HEAD~1 is not in this clone's history") });

    const plain = mkdtempSync(join(tmpdir(), 'proto-nogit-'));
    dirs.push(plain);
    expect(breakingCheck(plain, {})).toEqual({ status: 'skipped', message: 'proto: buf breaking skipped: not a git checkout' });
  });
});
