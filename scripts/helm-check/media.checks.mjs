// scripts/helm-check.mjs: the reviewables (media api, media worker, KEDA) and the notifier.
import { renderWith } from './helm.mjs';
import { check, section } from './report.mjs';
import { byKind, componentOf, find, fullname, sameList } from './rules.mjs';

export function mediaChecks(S) {
  const d = S.defaults.objects;
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
  const badKeda = renderWith('components.media-worker.autoscaling.jetstream.lagThreshold=0', 'keda.natsServerMonitoringEndpoint=nats');
  check(
    badKeda.status !== 0 &&
      badKeda.stderr.includes("at '/components/media-worker/autoscaling/jetstream/lagThreshold'") &&
      badKeda.stderr.includes("at '/keda/natsServerMonitoringEndpoint'"),
    'refused: a lag threshold below 1, a monitoring endpoint without a port',
  );
  // The notifier: its own process with a database, called by the gateway only, and the one
  // component with egress to webhook targets, on public addresses only.
  const gwEnv = envOf(d, 'gateway');
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
}
