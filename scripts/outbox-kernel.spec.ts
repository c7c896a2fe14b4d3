// Every outbox row is written by lib-platform's write kernel (outbox/outbox.table.ts,
// docs/architecture.md, "The write path and its events"): no service's code writes an outbox
// table by hand, so the columns and the payload the relay reads are defined once. And a relay is
// woken one way: by the bus topic `committed` it subscribes to (OutboxRelay.wakeOn).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KERNEL = 'services/lib-platform/src/outbox/outbox.table.ts';
/** `insert into <schema>.outbox` or `insert into ${…outbox…}`, across lines. */
const HAND_WRITTEN = /insert\s+into\s+(?:"?[a-z_]+"?\."?outbox"?\b|\$\{[^}]*outbox)/i;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The services' source files (tests left out), relative to the repository, and their text. */
function serviceSources(): { file: string; text: string }[] {
  const services = join(ROOT, 'services');
  return readdirSync(services, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => sources(join(services, d.name, 'src')))
    .map((f) => ({ file: relative(ROOT, f), text: readFileSync(f, 'utf8') }));
}

describe('the outbox write kernel', () => {
  it('is the only code that inserts into an outbox table', () => {
    const offenders = serviceSources().filter((s) => s.file !== KERNEL && HAND_WRITTEN.test(s.text));
    expect(offenders.map((s) => s.file)).toEqual([]);
    expect(readFileSync(join(ROOT, KERNEL), 'utf8')).toMatch(/insert into \$\{this\.name\} \(event_id, subject, payload\)/);
  });

  it('wakes a relay only through the bus: no service calls its nudge', () => {
    const offenders = serviceSources().filter((s) => !s.file.startsWith('services/lib-platform/') && /\brelay\??\.nudge\(/.test(s.text));
    expect(offenders.map((s) => s.file)).toEqual([]);
  });
});
