// scripts/helm-check.mjs: the PrometheusRule and the Grafana dashboards.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART, ROOT } from './helm.mjs';
import { check } from './report.mjs';
import { byKind } from './rules.mjs';

/** The PrometheusRule (files/alerts.yaml) and the Grafana dashboard ConfigMaps (files/dashboards/). */
export function monitoringChecks(S) {
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
