#!/usr/bin/env node
// Writes the Grafana dashboards of the Helm chart, charts/reelbase/files/dashboards/*.json, from the
// panel lists below (one overview, one per service). `--check` compares instead of writing and
// exits 1 when a file differs (run by scripts/helm-check.mjs). Every PromQL expression names only
// metrics the services export: test/dashboards.e2e.spec.ts scrapes the running stack to prove it.
// Usage: node scripts/dashboards.mjs [--check]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'charts', 'reelbase', 'files', 'dashboards');
const DS = { type: 'prometheus', uid: '${datasource}' };
const R = '$__rate_interval';

/** A time-series panel; `targets` are [expr, legend] pairs. */
function ts(title, targets, { unit = 'short', description, stack = false } = {}) {
  return {
    type: 'timeseries',
    title,
    ...(description ? { description } : {}),
    datasource: DS,
    fieldConfig: {
      defaults: { unit, custom: { fillOpacity: stack ? 20 : 5, stacking: { mode: stack ? 'normal' : 'none' } } },
      overrides: [],
    },
    options: { legend: { displayMode: 'table', placement: 'bottom', calcs: ['lastNotNull', 'max'] }, tooltip: { mode: 'multi' } },
    targets: targets.map(([expr, legendFormat], i) => ({ datasource: DS, expr, legendFormat, refId: String.fromCharCode(65 + i) })),
  };
}

/** A single-number panel. */
function stat(title, expr, { unit = 'short', description, thresholds } = {}) {
  return {
    type: 'stat',
    title,
    ...(description ? { description } : {}),
    datasource: DS,
    fieldConfig: {
      defaults: {
        unit,
        thresholds: thresholds ?? { mode: 'absolute', steps: [{ color: 'green', value: null }] },
      },
      overrides: [],
    },
    options: { reduceOptions: { calcs: ['lastNotNull'] }, colorMode: 'value' },
    targets: [{ datasource: DS, expr, refId: 'A' }],
  };
}

const row = (title) => ({ type: 'row', title, collapsed: false, panels: [] });

/** Lays panels out 24 columns wide: rows full width, stats 4 wide, graphs 12 wide. */
function layout(panels) {
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  let id = 1;
  return panels.map((p) => {
    const w = p.type === 'row' ? 24 : p.type === 'stat' ? 4 : 12;
    const h = p.type === 'row' ? 1 : p.type === 'stat' ? 4 : 8;
    if (x + w > 24 || p.type === 'row') {
      y += rowHeight;
      x = 0;
      rowHeight = 0;
    }
    const placed = { id: id++, gridPos: { h, w, x, y }, ...p };
    x += w;
    rowHeight = Math.max(rowHeight, h);
    if (p.type === 'row') {
      y += h;
      x = 0;
      rowHeight = 0;
    }
    return placed;
  });
}

function dashboard(uid, title, description, panels) {
  return {
    uid,
    title,
    description,
    tags: ['reelbase'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-3h', to: 'now' },
    timezone: 'utc',
    graphTooltip: 1,
    links: [{ title: 'reelbase dashboards', type: 'dashboards', tags: ['reelbase'], asDropdown: true }],
    annotations: { list: [] },
    templating: {
      list: [{ name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', current: {}, hide: 0 }],
    },
    panels: layout(panels),
  };
}

const sel = (service, extra = '') => `{service="${service}"${extra ? `, ${extra}` : ''}}`;
const p99 = (metric, by, matchers) => `histogram_quantile(0.99, sum by (le${by ? `, ${by}` : ''}) (rate(${metric}_bucket${matchers}[${R}])))`;
const p50 = (metric, by, matchers) => `histogram_quantile(0.5, sum by (le${by ? `, ${by}` : ''}) (rate(${metric}_bucket${matchers}[${R}])))`;

/** RED per RPC, the process, NATS and internal-auth refusals: every gRPC service's first rows. */
function grpcRows(service) {
  return [
    row('Calls (RED per RPC)'),
    ts('Calls/s by method', [[`sum by (method) (rate(grpc_server_handled_total${sel(service)}[${R}]))`, '{{method}}']], { unit: 'reqps' }),
    ts('Errors/s by method and code', [[`sum by (method, code) (rate(grpc_server_handled_total${sel(service, 'code!="OK"')}[${R}]))`, '{{method}} {{code}}']], {
      unit: 'reqps',
    }),
    ts('p99 by method', [[p99('grpc_server_handling_seconds', 'method', sel(service)), '{{method}}']], { unit: 's' }),
    ts('p50 by method', [[p50('grpc_server_handling_seconds', 'method', sel(service)), '{{method}}']], { unit: 's' }),
  ];
}

function processRows(service, { pool = true } = {}) {
  return [
    row('Dependencies and process'),
    ...(pool
      ? [
          ts(
            'Database pool',
            [
              [`sum by (pool, state) (db_pool_connections${sel(service, 'state=~"used|pending"')})`, '{{pool}} {{state}}'],
              [`sum by (pool) (db_pool_connections${sel(service, 'state="max"')})`, '{{pool}} max'],
            ],
            { description: 'Connections in use and callers waiting, per pool, summed over replicas (db_pool_connections).' },
          ),
        ]
      : []),
    ts(
      'Readiness and NATS',
      [
        [`min by (check) (readiness_check_up${sel(service)})`, 'ready: {{check}}'],
        [`min(nats_connected${sel(service)})`, 'NATS connected (worst replica)'],
      ],
      { description: '1 = answering. A 0 here is ReelbaseNotReady or ReelbaseNatsDisconnected (docs/runbook.md).' },
    ),
    ts('Internal calls refused/s', [[`sum by (reason) (rate(grpc_internal_auth_failures_total${sel(service)}[${R}]))`, '{{reason}}']], {
      unit: 'reqps',
      description: 'Calls without a valid internal assertion (ReelbaseInternalAuthFailures).',
    }),
    ts('CPU', [[`sum by (pod) (rate(process_cpu_seconds_total${sel(service)}[${R}]))`, '{{pod}}']], { unit: 'percentunit' }),
    ts('Resident memory', [[`sum by (pod) (process_resident_memory_bytes${sel(service)})`, '{{pod}}']], { unit: 'bytes' }),
    ts('Event-loop lag p99', [[`max by (pod) (nodejs_eventloop_lag_p99_seconds${sel(service)})`, '{{pod}}']], { unit: 's' }),
  ];
}

const GW = sel('gateway');
const overview = dashboard(
  'reelbase-overview',
  'reelbase / Overview',
  'Requests, errors and latency per route; writes; event lag; WebSocket clients; queues.',
  [
    row('API'),
    stat('Requests/s', `sum(rate(http_requests_total${GW}[${R}]))`, { unit: 'reqps' }),
    stat('5xx ratio', `sum(rate(http_requests_total${sel('gateway', 'status=~"5.."')}[${R}])) / sum(rate(http_requests_total${GW}[${R}]))`, {
      unit: 'percentunit',
      thresholds: {
        mode: 'absolute',
        steps: [
          { color: 'green', value: null },
          { color: 'orange', value: 0.01 },
          { color: 'red', value: 0.05 },
        ],
      },
    }),
    stat('Writes/s', `sum(rate(http_requests_total${sel('gateway', 'method=~"POST|PATCH|PUT|DELETE", status=~"2.."')}[${R}]))`, { unit: 'reqps' }),
    stat('WebSocket clients', `sum(gateway_websocket_clients)`),
    stat('Write → log p99', p99('events_write_to_log_seconds', '', ''), { unit: 's' }),
    stat('Event-log writers', 'sum(events_writer_active)', {
      description: 'Exactly one events replica holds the writer lock.',
      thresholds: {
        mode: 'absolute',
        steps: [
          { color: 'red', value: null },
          { color: 'green', value: 1 },
          { color: 'red', value: 2 },
        ],
      },
    }),
    ts('Requests/s by route', [[`sum by (route) (rate(http_requests_total${GW}[${R}]))`, '{{route}}']], { unit: 'reqps' }),
    ts(
      'Errors/s by route and status',
      [[`sum by (route, status) (rate(http_requests_total${sel('gateway', 'status=~"4..|5.."')}[${R}]))`, '{{route}} {{status}}']],
      {
        unit: 'reqps',
      },
    ),
    ts('p99 by route', [[p99('http_request_duration_seconds', 'route', GW), '{{route}}']], { unit: 's' }),
    ts('p50 by route', [[p50('http_request_duration_seconds', 'route', GW), '{{route}}']], { unit: 's' }),
    row('Writes and events'),
    ts(
      'Writes/s',
      [
        [`sum by (method) (rate(http_requests_total${sel('gateway', 'method=~"POST|PATCH|PUT|DELETE", status=~"2.."')}[${R}]))`, 'API {{method}}'],
        [`sum(rate(events_appended_total[${R}]))`, 'events appended to the log'],
      ],
      { unit: 'reqps' },
    ),
    ts(
      'Event lag, write → log',
      [
        [p50('events_write_to_log_seconds', '', ''), 'p50'],
        [p99('events_write_to_log_seconds', '', ''), 'p99'],
      ],
      { unit: 's', description: "From a write's commit in records to its event's row in the log (events_write_to_log_seconds)." },
    ),
    ts('WebSocket clients', [[`sum by (pod) (gateway_websocket_clients)`, '{{pod}}']]),
    ts('Readiness (worst replica)', [[`min by (service, check) (readiness_check_up)`, '{{service}}: {{check}}']]),
    row('Queues'),
    ts(
      'Event pipeline',
      [
        ['max(outbox_backlog)', 'records outbox'],
        ['max(schema_outbox_backlog)', 'schema outbox'],
        ['max(events_consumer_lag)', 'event-log consumer'],
        ['max(notifier_follow_lag_events)', 'notifier behind the log'],
      ],
      { description: 'Rows or messages waiting at each step from a write to its subscribers.' },
    ),
    ts('Work queues', [
      ['max(media_transcode_queue_lag)', 'transcode jobs'],
      ['sum(notifier_delivery_backlog)', 'webhook deliveries pending'],
      ['max by (state) (farm_chunks)', 'farm chunks {{state}}'],
      ['max by (status) (sitesync_states{status=~"queued|in_progress"})', 'site sync {{status}}'],
    ]),
  ],
);

const gateway = dashboard('reelbase-gateway', 'reelbase / gateway', 'REST and WebSocket front door: RED per route, calls to the services, WebSocket clients.', [
  row('HTTP (RED per route)'),
  ts('Requests/s by route', [[`sum by (route) (rate(http_requests_total${GW}[${R}]))`, '{{route}}']], { unit: 'reqps' }),
  ts(
    'Errors/s by route and status',
    [[`sum by (route, status) (rate(http_requests_total${sel('gateway', 'status=~"4..|5.."')}[${R}]))`, '{{route}} {{status}}']],
    {
      unit: 'reqps',
    },
  ),
  ts('p99 by route', [[p99('http_request_duration_seconds', 'route', GW), '{{route}}']], { unit: 's' }),
  ts('p50 by route', [[p50('http_request_duration_seconds', 'route', GW), '{{route}}']], { unit: 's' }),
  row('Calls to the services'),
  ts('p99 by method, as seen by the gateway', [[p99('grpc_client_handling_seconds', 'method', GW), '{{method}}']], { unit: 's' }),
  ts(
    'Failed calls/s by method and code',
    [[`sum by (method, code) (rate(grpc_client_handling_seconds_count${sel('gateway', 'code!="OK"')}[${R}]))`, '{{method}} {{code}}']],
    {
      unit: 'reqps',
    },
  ),
  ts('WebSocket clients', [[`sum by (pod) (gateway_websocket_clients)`, '{{pod}}']]),
  ...processRows('gateway', { pool: false }),
]);

const auth = dashboard('reelbase-auth', 'reelbase / auth', 'Users, logins and tokens: RED per RPC, database pool.', [
  ...grpcRows('auth'),
  ...processRows('auth'),
]);

const records = dashboard('reelbase-records', 'reelbase / records', 'Records, schema admin, farm and site sync: RED per RPC, pools, outbox, queues.', [
  ...grpcRows('records'),
  row('Outbox and queues'),
  ts(
    'Outbox',
    [
      ['max(outbox_backlog{service="records"})', 'backlog (rows)'],
      [`sum by (duplicate) (rate(outbox_published_total{service="records"}[${R}]))`, 'published/s duplicate={{duplicate}}'],
    ],
    { description: 'Rows waiting for the relay should hover near 0 (ReelbaseOutboxBacklogGrowing).' },
  ),
  ts('Farm chunks', [['max by (state) (farm_chunks)', '{{state}}']], { description: 'Render-farm chunks queued and leased, database-wide.' }),
  ts('Site-sync states', [['max by (status) (sitesync_states)', '{{status}}']], {
    description: 'Site-sync transfers queued, running and failed, database-wide.',
  }),
  ...processRows('records'),
]);

const schema = dashboard('reelbase-schema', 'reelbase / schema', 'Schema service: RED per RPC, outbox, renames.', [
  ...grpcRows('schema'),
  row('Schema'),
  ts('Outbox', [
    ['max(schema_outbox_backlog)', 'backlog (rows)'],
    [`sum(rate(schema_outbox_published_total[${R}]))`, 'published/s'],
  ]),
  ts('Schema version', [['max by (pod) (schema_version)', '{{pod}}']]),
  ts('Rename cascades', [
    [`sum by (kind) (rate(schema_renames_total[${R}]))`, 'renames/s {{kind}}'],
    [`sum(rate(schema_rename_records_total[${R}]))`, 'records rewritten/s'],
  ]),
  ...processRows('schema'),
]);

const events = dashboard('reelbase-events', 'reelbase / events', 'Event log: writer, consumer lag, append rate, write → log lag.', [
  ...grpcRows('events'),
  row('Event-log writer'),
  ts('Consumer lag', [['max(events_consumer_lag)', 'messages waiting']], { description: 'EVENTS stream messages not yet delivered to the writer.' }),
  ts('Writers', [['sum(events_writer_active)', 'replicas holding the writer lock']]),
  ts(
    'Appended/s',
    [
      [`sum(rate(events_appended_total[${R}]))`, 'appended'],
      [`sum(rate(events_duplicates_total[${R}]))`, 'duplicates (already logged)'],
      [`sum by (reason) (rate(events_skipped_total[${R}]))`, 'skipped {{reason}}'],
    ],
    { unit: 'ops' },
  ),
  ts(
    'Latency',
    [
      [p99('events_batch_duration_seconds', '', sel('events')), 'batch append p99'],
      [p99('events_write_to_log_seconds', '', ''), 'write → log p99'],
      [p50('events_write_to_log_seconds', '', ''), 'write → log p50'],
    ],
    { unit: 's' },
  ),
  ...processRows('events'),
]);

const notifier = dashboard('reelbase-notifier', 'reelbase / notifier', 'Notifications and webhooks: following the log, deliveries, dead letters.', [
  ...grpcRows('notifier'),
  row('Following the event log'),
  ts(
    'Events applied/s and errors',
    [
      [`sum(rate(notifier_events_applied_total[${R}]))`, 'events applied'],
      [`sum(rate(notifier_notifications_total[${R}]))`, 'notifications written'],
      [`sum(rate(notifier_follow_errors_total[${R}]))`, 'follow errors'],
    ],
    { unit: 'ops' },
  ),
  ts('Behind the log', [['max(notifier_follow_lag_events)', 'events']]),
  row('Webhook deliveries'),
  ts('Attempts/s by outcome', [[`sum by (outcome) (rate(notifier_delivery_attempts_total[${R}]))`, '{{outcome}}']], { unit: 'ops' }),
  ts(
    'Dead letters and disabled webhooks',
    [
      ['max(notifier_deliveries_dead)', 'dead deliveries (kept)'],
      [`sum(increase(notifier_webhooks_disabled_total[1h]))`, 'webhooks disabled in the last hour'],
    ],
    { description: 'Dead deliveries wait for a retry by hand (ReelbaseWebhookDeadDeliveries).' },
  ),
  ts('Pending deliveries by webhook', [['max by (webhook) (notifier_delivery_backlog)', '{{webhook}}']]),
  ts(
    'Delivery latency',
    [
      [p99('notifier_delivery_attempt_seconds', 'outcome', ''), 'attempt p99 {{outcome}}'],
      [p99('notifier_delivery_end_to_end_seconds', '', ''), 'commit → delivered p99'],
    ],
    { unit: 's' },
  ),
  ...processRows('notifier'),
]);

const MT = sel('media_transcode');
const MW = sel('media_worker');
const media = dashboard('reelbase-media', 'reelbase / media-transcode', 'Reviewable uploads (media api) and transcodes (media workers).', [
  ...grpcRows('media_transcode'),
  row('Uploads'),
  ts('Uploads/s by outcome', [[`sum by (outcome) (rate(media_uploads_total${MT}[${R}]))`, '{{outcome}}']], { unit: 'ops' }),
  ts('Upload bytes/s', [[`sum(rate(media_upload_bytes_total${MT}[${R}]))`, 'bytes received']], { unit: 'Bps' }),
  ts('Jobs re-published by the sweeper', [[`sum(increase(media_jobs_swept_total${MT}[${R}]))`, 'swept']]),
  row('Transcode queue and workers'),
  ts('Queue', [['max(media_transcode_queue_lag)', 'jobs waiting or in progress']], {
    description: 'TRANSCODE consumer num_pending + num_ack_pending: what KEDA scales the workers on.',
  }),
  ts(
    'Queue wait (upload → start)',
    [
      [`histogram_quantile(0.9, sum by (le) (rate(media_transcode_queue_wait_seconds_bucket${MW}[${R}])))`, 'p90'],
      [p50('media_transcode_queue_wait_seconds', '', MW), 'p50'],
    ],
    { unit: 's' },
  ),
  ts('Attempts/s by outcome', [[`sum by (outcome) (rate(media_transcode_attempts_total${MW}[${R}]))`, '{{outcome}}']], { unit: 'ops' }),
  ts('Step duration p90 by step', [[`histogram_quantile(0.9, sum by (le, step) (rate(media_transcode_seconds_bucket${MW}[${R}])))`, '{{step}}']], {
    unit: 's',
  }),
  ts('Workers', [[`count(nats_connected${MW})`, 'worker processes']]),
  ...processRows('media_transcode'),
  ...processRows('media_worker').map((p) => (p.type === 'row' ? { ...p, title: 'Workers: dependencies and process' } : p)),
]);

const DASHBOARDS = { overview, gateway, auth, records, schema, events, notifier, 'media-transcode': media };

const check = process.argv.includes('--check');
let stale = 0;
mkdirSync(OUT, { recursive: true });
for (const [name, d] of Object.entries(DASHBOARDS)) {
  const file = join(OUT, `${name}.json`);
  const text = `${JSON.stringify(d, null, 2)}\n`;
  if (!check) {
    writeFileSync(file, text);
    continue;
  }
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing
  }
  if (current !== text) {
    stale++;
    console.error(`${file} is not what scripts/dashboards.mjs makes: run \`node scripts/dashboards.mjs\``);
  }
}
if (stale) process.exit(1);
