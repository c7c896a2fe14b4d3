// What `npm run images` asks of debootstrap and buildah, and what deploy/Dockerfile does with a
// build-time certificate authority: the base image is made from a signature-checked Debian and
// carries no authority of the building machine; an extra authority (IMAGES_EXTRA_CA) reaches the
// build stages as a secret only, never the runtime stage.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BASE_SETUP,
  DEBIAN_KEYRING,
  EXTRA_CA_SECRET,
  RECIPE_LABEL,
  baseConfig,
  baseRecipe,
  budArgs,
  debootstrapArgs,
  extraCaFrom,
  missingPackages,
  // @ts-expect-error -- a plain ES module without type declarations
} from './images.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'images-spec-'));
  dirs.push(d);
  return d;
};

const PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

describe('images', () => {
  it('asks debootstrap to check the Release signature against Debian’s archive keyring, never to skip it', () => {
    const args: string[] = debootstrapArgs({ rootfs: '/cache/rootfs', mirror: 'http://mirror.example/debian' });
    expect(args).toEqual([
      '--variant=minbase',
      '--include=ca-certificates',
      `--keyring=${DEBIAN_KEYRING}`,
      'bookworm',
      '/cache/rootfs',
      'http://mirror.example/debian',
    ]);
    expect(DEBIAN_KEYRING).toBe(process.env.DEBIAN_KEYRING ?? '/usr/share/keyrings/debian-archive-keyring.gpg');
    expect(args.some((a) => /no-check|check-gpg|allow-unauth/.test(a))).toBe(false);
    expect(debootstrapArgs({ rootfs: '/r', keyring: '/studio/mirror.gpg' })).toContain('--keyring=/studio/mirror.gpg');
  });

  it('installs the keyring and gpgv when they are missing', () => {
    const none = missingPackages(
      { debootstrap: 'debootstrap', gpgv: 'gpgv' },
      { [DEBIAN_KEYRING]: 'debian-archive-keyring' },
      { has: () => false, exists: () => false },
    );
    expect(none).toEqual({ what: ['debootstrap', 'gpgv', DEBIAN_KEYRING], packages: ['debootstrap', 'gpgv', 'debian-archive-keyring'] });
    const all = missingPackages({ gpgv: 'gpgv' }, { [DEBIAN_KEYRING]: 'debian-archive-keyring' }, { has: () => true, exists: () => true });
    expect(all.packages).toEqual([]);
  });

  it('builds a base image that trusts Debian’s bundle only: no extra authority in its environment, setup or files', () => {
    const config: string[] = baseConfig('r1');
    const env = config.flatMap((a, i) => (config[i - 1] === '--env' ? [a.split('=')[0]] : []));
    expect(env).toEqual(['PATH', 'NODE_VERSION']);
    expect(config.join(' ')).not.toMatch(/NODE_EXTRA_CA_CERTS|SSL_CERT|ca-certificates/);
    expect(config).toContain(`${RECIPE_LABEL}=r1`);
    expect(BASE_SETUP).not.toMatch(/ca-certificates|NODE_EXTRA_CA_CERTS/);
    // The script itself copies no certificate of this machine into an image.
    const source = readFileSync(resolve(__dirname, 'images.mjs'), 'utf8');
    expect(source).not.toMatch(/copy[^\n]*LOCAL_CAS|LOCAL_CAS[^\n]*copy/i);
    expect(source).not.toMatch(/'--env',\s*'NODE_EXTRA_CA_CERTS/);
    // A base image built by another recipe (an earlier one with the machine's authorities) is not reused.
    expect(baseRecipe()).toMatch(/^[0-9a-f]{16}$/);
  });

  it('hands an extra authority to the build as a secret only when IMAGES_EXTRA_CA names one', () => {
    expect(budArgs('gateway', { revision: 'abc' })).not.toContain('--secret');
    const d = scratch();
    const pem = join(d, 'proxy-ca.pem');
    writeFileSync(pem, PEM);
    const file = extraCaFrom({ IMAGES_EXTRA_CA: pem });
    expect(file).toBe(pem);
    const args: string[] = budArgs('gateway', { revision: 'abc', extraCa: file });
    expect(args[args.indexOf('--secret') + 1]).toBe(`id=${EXTRA_CA_SECRET},src=${pem}`);
    expect(args.join(' ')).not.toMatch(/--build-arg [^ ]*CA|--env/);

    expect(extraCaFrom({})).toBeUndefined();
    expect(() => extraCaFrom({ IMAGES_EXTRA_CA: join(d, 'missing.pem') })).toThrow(/IMAGES_EXTRA_CA is .*missing\.pem, which cannot be read \(ENOENT\)/);
    writeFileSync(join(d, 'empty.pem'), 'not a certificate');
    expect(() => extraCaFrom({ IMAGES_EXTRA_CA: join(d, 'empty.pem') })).toThrow(/holds no PEM certificate/);
    expect(() => extraCaFrom({ IMAGES_EXTRA_CA: d })).toThrow(/holds no PEM certificate/);
  });

  it('the Dockerfile trusts the build secret in the download steps of the build stages and nowhere in the runtime stage', () => {
    const text = readFileSync(resolve(__dirname, '..', 'deploy', 'Dockerfile'), 'utf8');
    const code = text
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .join('\n');
    const at = code.indexOf('AS runtime');
    expect(at).toBeGreaterThan(0);
    const build = code.slice(0, at);
    const runtime = code.slice(at);
    expect(runtime).not.toMatch(/extra_ca|NODE_EXTRA_CA_CERTS|SSL_CERT|ca-certificates|--mount=type=secret/);
    expect(code).not.toMatch(/^\s*(ENV|ARG)\b[^\n]*(NODE_EXTRA_CA_CERTS|extra_ca)/m);
    // Every step that downloads packages from the npm registry mounts the secret and uses it.
    const runs = build.split(/\n(?=RUN |FROM |COPY |ENV |ARG |WORKDIR )/).filter((s) => s.startsWith('RUN '));
    const downloads = runs.filter((r) => /\b(npm|pnpm) install\b/.test(r));
    expect(downloads).toHaveLength(3);
    for (const r of downloads) {
      expect(r).toContain(`--mount=type=secret,id=${EXTRA_CA_SECRET}`);
      expect(r).toContain(`export NODE_EXTRA_CA_CERTS=/run/secrets/${EXTRA_CA_SECRET}`);
    }
  });
});
