// scripts/helm-check.mjs: the default render, component by component.
import { check, section } from './report.mjs';
import { BASE_COMPONENTS, byKind, componentOf, deploymentsOf, find, fullname, sameList } from './rules.mjs';

export function defaultsChecks(S) {
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
}
