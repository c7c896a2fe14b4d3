// The chart's rules for scripts/helm-check.mjs: what every render must satisfy, and the look-ups the checks share.
import { RELEASE } from './helm.mjs';

export const BASE_COMPONENTS = ['auth', 'events', 'gateway', 'media-transcode', 'media-worker', 'notifier', 'records', 'schema'];

export const byKind = (objects, kind) => objects.filter((o) => o.kind === kind);
export const find = (objects, kind, name) => objects.find((o) => o.kind === kind && o.metadata?.name === name);
export const componentOf = (o) => o.metadata?.labels?.['app.kubernetes.io/component'];
export const fullname = (component) => `${RELEASE}-${component}`; // release "reelbase" == chart name
export const subset = (small = {}, big = {}) => Object.entries(small).every(([k, v]) => big[k] === v);

/** Rules every render must satisfy; returns the list of problems. */
export function chartRules(objects, { networkPolicy = true } = {}) {
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

export const deploymentsOf = (objects) => byKind(objects, 'Deployment').map(componentOf).sort();
export const sameList = (a, b) => JSON.stringify(a) === JSON.stringify(b);
export const checksumOf = (objects, component) => find(objects, 'Deployment', fullname(component))?.spec.template.metadata.annotations?.['checksum/config'];
