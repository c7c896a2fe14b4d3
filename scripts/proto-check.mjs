// `buf lint` on proto/; `buf breaking` of proto/defs against git history (see breakingCheck); then
// regenerates the TypeScript into a scratch folder and fails when it differs from the committed
// proto/src/gen (someone edited a .proto or the output).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PROTO = join(ROOT, 'proto');
const buf = join(ROOT, 'node_modules', '.bin', 'buf');

/**
 * `buf breaking` (the FILE rules of proto/buf.yaml) of `<root>/proto` against an earlier commit:
 * `PROTO_BREAKING_AGAINST` when set (a branch, tag or commit, e.g. the merge base of a branch);
 * otherwise HEAD when proto/ has uncommitted changes (what is about to be committed), else HEAD~1
 * (what the last commit changed). Adding fields, messages or RPCs passes; removing or renumbering
 * them, or changing a type, fails. Skipped, saying why, outside a git checkout, when the commit is
 * not in the clone's history (a shallow clone, the first commit) or had no proto module yet.
 * @returns {{ status: 'ok' | 'failed' | 'skipped', message: string }}
 */
export function breakingCheck(root = ROOT, env = process.env, bufBin = buf) {
  const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  const skipped = (why) => ({ status: 'skipped', message: `proto: buf breaking skipped: ${why}` });
  const gitDir = git('rev-parse', '--path-format=absolute', '--git-common-dir');
  if (gitDir.status !== 0) return skipped('not a git checkout');
  let ref = env.PROTO_BREAKING_AGAINST;
  if (!ref) ref = git('status', '--porcelain', '--', 'proto').stdout.trim() ? 'HEAD' : 'HEAD~1';
  const sha = git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  if (sha.status !== 0)
    return skipped(`${ref} is not in this clone's history (a shallow clone or the first commit; fetch more history or set PROTO_BREAKING_AGAINST)`);
  const commit = sha.stdout.trim();
  if (git('cat-file', '-e', `${commit}:proto/buf.yaml`).status !== 0) return skipped(`${ref} has no proto/buf.yaml`);
  const against = `${gitDir.stdout.trim()}#ref=${commit},subdir=proto`;
  const r = spawnSync(bufBin, ['breaking', '--against', against], { cwd: join(root, 'proto'), encoding: 'utf8' });
  const what = `against ${ref} (${commit.slice(0, 12)})`;
  if (r.status === 0) return { status: 'ok', message: `proto: no breaking change ${what}` };
  return { status: 'failed', message: `proto: breaking changes ${what}:\n${(r.stdout + r.stderr).trim()}` };
}

function sh(args) {
  const r = spawnSync(buf, args, { cwd: PROTO, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`buf ${args.join(' ')} failed`);
    process.exit(1);
  }
}

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

function main() {
  sh(['lint']);
  const breaking = breakingCheck();
  (breaking.status === 'failed' ? console.error : console.log)(breaking.message);
  if (breaking.status === 'failed') process.exit(1);
  const scratch = mkdtempSync(join(tmpdir(), 'proto-check-'));
  try {
    sh(['generate', '-o', scratch]);
    const committed = join(PROTO, 'src', 'gen');
    const fresh = join(scratch, 'src', 'gen');
    const a = walk(committed)
      .map((p) => relative(committed, p))
      .sort();
    const b = walk(fresh)
      .map((p) => relative(fresh, p))
      .sort();
    const drift = [];
    for (const f of new Set([...a, ...b])) {
      const x = a.includes(f) ? readFileSync(join(committed, f), 'utf8') : null;
      const y = b.includes(f) ? readFileSync(join(fresh, f), 'utf8') : null;
      if (x !== y) drift.push(f);
    }
    if (drift.length) {
      console.error(`generated code is stale; run \`pnpm --dir proto generate\` and commit:\n  ${drift.join('\n  ')}`);
      process.exit(1);
    }
    console.log('proto: lint clean, generated code current');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
