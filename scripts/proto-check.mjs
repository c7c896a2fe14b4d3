// `buf lint` on proto/, then regenerates the TypeScript into a scratch folder and fails
// when it differs from the committed proto/src/gen (someone edited a .proto or the output).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PROTO = join(ROOT, 'proto');
const buf = join(ROOT, 'node_modules', '.bin', 'buf');

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

sh(['lint']);
const scratch = mkdtempSync(join(tmpdir(), 'proto-check-'));
try {
  sh(['generate', '-o', scratch]);
  const committed = join(PROTO, 'src', 'gen');
  const fresh = join(scratch, 'src', 'gen');
  const a = walk(committed).map((p) => relative(committed, p)).sort();
  const b = walk(fresh).map((p) => relative(fresh, p)).sort();
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
