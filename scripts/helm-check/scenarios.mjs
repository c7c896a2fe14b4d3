// The renders scripts/helm-check.mjs makes: defaults, each values file, every optional feature on, ...
import { basename, relative } from 'node:path';
import { ROOT, set } from './helm.mjs';

export const CRD_APIS = ['monitoring.coreos.com/v1/ServiceMonitor', 'monitoring.coreos.com/v1/PrometheusRule'];
export const MIN_KUBE = '1.27.0';
export const KEDA_API = 'keda.sh/v1alpha1/ScaledObject';

/** The scenarios, in the order they are rendered and reported. */
export function scenariosFor(valuesFiles) {
  const crdArgs = CRD_APIS.flatMap((a) => ['--api-versions', a]);
  return [
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
}
