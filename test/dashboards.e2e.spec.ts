/**
 * The chart's Grafana dashboards (charts/reelbase/files/dashboards/*.json) and alerting rules
 * (charts/reelbase/files/alerts.yaml) name only metrics the services export: every service of a
 * running stack is scraped on its `/metrics`, and every metric name in every PromQL expression
 * (parsed with Prometheus's own PromQL grammar, @prometheus-io/lezer-promql) must be among the
 * exported names (a histogram exports `<name>_bucket`, `_sum` and `_count`). The one series
 * Prometheus makes itself, `up`, is allowed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { REPO_ROOT } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2EStack, type E2EStack } from './support/e2e.stack.js';

const CHART = join(REPO_ROOT, 'charts', 'reelbase');
/** Series Prometheus adds to every scrape target. */
const PROMETHEUS_MADE = new Set(['up']);
/** Every process of the stack and the `service` label its metrics carry. */
const SERVICES: Record<string, string> = {
  gateway: 'gateway',
  auth: 'auth',
  records: 'records',
  events: 'events',
  schema: 'schema',
  notifier: 'notifier',
  'media-transcode': 'media_transcode',
  'media-worker': 'media_worker',
};

/**
 * The metric names an expression selects: the name of every vector selector, written either way
 * (`name{...}` or `{__name__="name"}`). Grafana's interval variables become a plain duration first.
 */
export function metricNames(expr: string): string[] {
  const promql = expr.replace(/\$__(rate_)?interval|\$\{__(rate_)?interval\}|\$__range/g, '5m');
  const tree = parser.parse(promql);
  const names = new Set<string>();
  const errors: string[] = [];
  tree.iterate({
    enter(node) {
      if (node.type.isError) errors.push(`${node.from}: ${promql.slice(node.from, node.from + 20)}`);
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') names.add(promql.slice(node.from, node.to));
      if (node.name === 'UnquotedLabelMatcher') {
        const m = /^__name__\s*=\s*"([^"]+)"$/.exec(promql.slice(node.from, node.to));
        if (m) names.add(m[1]!);
      }
    },
  });
  if (errors.length) throw new Error(`PromQL does not parse at ${errors.join(', ')}: ${expr}`);
  return [...names];
}

/** The names a `/metrics` page exports: each sample's name, and for histograms and summaries their derived series. */
export function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)/.exec(line);
    if (type) {
      const [, name, kind] = type;
      names.add(name!);
      if (kind === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${name}${s}`);
      if (kind === 'summary') for (const s of ['_sum', '_count']) names.add(`${name}${s}`);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}

/** Every `expr` of the rule file: inline (`expr: ...`) or a block scalar (`expr: |` and its indented lines). */
function alertExpressions(yaml: string): { alert: string; expr: string }[] {
  const out: { alert: string; expr: string }[] = [];
  const lines = yaml.split('\n');
  let alert = '';
  for (let i = 0; i < lines.length; i++) {
    const a = /^\s*- alert: (\S+)/.exec(lines[i]!);
    if (a) alert = a[1]!;
    const m = /^(\s*)expr: (.*)$/.exec(lines[i]!);
    if (!m) continue;
    const indent = m[1]!.length;
    if (m[2]!.trim() !== '|') {
      out.push({ alert, expr: m[2]!.trim() });
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1]!.trim() === '' || lines[i + 1]!.search(/\S/) > indent)) block.push(lines[++i]!.trim());
    out.push({ alert, expr: block.join('\n').trim() });
  }
  return out;
}

/** Every PromQL expression of every dashboard, with where it is. */
function dashboardExpressions(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const dir = join(CHART, 'files', 'dashboards');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    const walk = (panels: any[]) => {
      for (const p of panels ?? []) {
        for (const t of p.targets ?? []) if (t.expr) out.push({ where: `${file} / ${p.title}`, expr: t.expr });
        walk(p.panels);
      }
    };
    walk(dashboard.panels);
  }
  return out;
}

describe('dashboards and alerts name only exported metrics (whole stack)', () => {
  let e: E2EStack;
  const exported = new Map<string, Set<string>>();

  beforeAll(async () => {
    e = await startE2EStack('dashboards');
    expect(e.stack.services.sort()).toEqual(Object.keys(SERVICES).sort());
    for (const name of e.stack.services) {
      const ports = e.stack.ports[name]!;
      const port = name === 'gateway' ? ports.ops! : ports.http;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
      expect(res.status, `${name} /metrics`).toBe(200);
      const text = await res.text();
      expect(text, `${name}'s series carry service="${SERVICES[name]}"`).toContain(`service="${SERVICES[name]}"`);
      exported.set(name, exportedNames(text));
    }
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it('reads metric names the way Prometheus parses PromQL', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{service="gateway", route!~"/x"}[$__rate_interval]))) / on() group_left max without (pod) ({__name__="outbox_backlog"}) > bool 1 unless absent(nats_connected offset 5m)',
      ).sort(),
    ).toEqual(['http_request_duration_seconds_bucket', 'nats_connected', 'outbox_backlog']);
    expect(() => metricNames('sum(rate(x[5m])')).toThrow(/does not parse/);
    const page = '# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 0\n# TYPE c counter\nc_total 1\n# TYPE g gauge\n';
    expect([...exportedNames(page)].sort()).toEqual(['c', 'c_total', 'g', 'h', 'h_bucket', 'h_count', 'h_sum']);
  });

  it('every metric of every dashboard panel is exported by a service', () => {
    const all = new Set([...exported.values()].flatMap((s) => [...s]));
    const exprs = dashboardExpressions();
    expect(exprs.length).toBeGreaterThan(100);
    const unknown = exprs.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((n) => !all.has(n) && !PROMETHEUS_MADE.has(n))
        .map((n) => `${where}: ${n}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every metric of every alert is exported by a service', () => {
    const all = new Set([...exported.values()].flatMap((s) => [...s]));
    const rules = alertExpressions(readFileSync(join(CHART, 'files', 'alerts.yaml'), 'utf8'));
    expect(rules.length).toBeGreaterThanOrEqual(16);
    const unknown = rules.flatMap(({ alert, expr }) =>
      metricNames(expr)
        .filter((n) => !all.has(n) && !PROMETHEUS_MADE.has(n))
        .map((n) => `${alert}: ${n}`),
    );
    expect(unknown).toEqual([]);
  });

  it('the operational metrics come from the services that own them', () => {
    const has = (service: string, names: string[]) => names.filter((n) => !exported.get(service)?.has(n)).map((n) => `${service}: ${n}`);
    expect([
      ...Object.keys(SERVICES).flatMap((s) => has(s, ['nats_connected', 'service_ready', 'readiness_check_up', 'process_cpu_seconds_total'])),
      ...['auth', 'records', 'events', 'schema', 'notifier', 'media-transcode', 'media-worker'].flatMap((s) =>
        has(s, ['db_pool_connections', 'grpc_internal_auth_failures_total']),
      ),
      ...has('gateway', ['gateway_websocket_clients', 'http_request_duration_seconds_bucket']),
      ...has('records', ['farm_chunks', 'sitesync_states', 'outbox_backlog']),
      ...has('events', ['events_write_to_log_seconds_bucket', 'events_consumer_lag']),
      ...has('media-worker', ['media_transcode_queue_lag', 'media_transcode_queue_wait_seconds_bucket']),
    ]).toEqual([]);
  });
});
