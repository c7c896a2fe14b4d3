// scripts/helm-check.mjs: what each optional setting renders (checksums, replicas, autoscaling, monitoring, secrets, production).
import { RELEASE, renderWith } from './helm.mjs';
import { monitoringChecks } from './monitoring.checks.mjs';
import { check } from './report.mjs';
import { BASE_COMPONENTS, byKind, checksumOf, componentOf, deploymentsOf, find, fullname, sameList } from './rules.mjs';

export function scenarioChecks(S) {
  const d = S.defaults.objects;
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
  const badSecretsKey = renderWith('secrets.secretsKey=not-32-bytes');
  check(badSecretsKey.status !== 0 && badSecretsKey.stderr.includes("at '/secrets/secretsKey'"), 'refused: a SECRETS_KEY that is not 32 bytes in base64');
  const shortKey = renderWith('secrets.internalAuthSecret=too-short');
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
}
