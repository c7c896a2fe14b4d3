// scripts/helm-check.mjs: values the chart must refuse, each with a helpful message.
import { renderWith } from './helm.mjs';
import { check, section } from './report.mjs';

export function refusedChecks() {
  section('values that must be refused');
  // values.schema.json: Helm lists every violation in one message before rendering anything.
  const refused = renderWith(
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
  );
  check(refused.status !== 0, 'helm template fails on bad values');
  inOneMessage(refused, [
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
  ]);
  // templates/_validate.tpl: references the schema cannot check, also in one message.
  const badRefs = renderWith(
    'components.records.probes.port=nope',
    'components.events.metrics.port=none',
    'components.events.metrics.path=/metrics',
    'components.auth.calls={records,billing}',
  );
  check(badRefs.status !== 0, 'helm template fails on bad references');
  inOneMessage(badRefs, [
    ['components.records.probes.port "nope" is not one of its ports', 'probe on a missing port'],
    ['components.events: metrics port "none" is not one of its ports', 'metrics on a missing port'],
    ['components.auth.calls: no component "billing"', 'a call to a component that does not exist'],
  ]);
  const disabledCallee = renderWith('components.records.enabled=false');
  check(
    disabledCallee.status !== 0 && disabledCallee.stderr.includes('components.gateway.calls records, which is disabled'),
    'refused: disabling a component that others call',
  );
}

/** One check per `[needle, what]`: the refusal's message holds the needle (a string, or a pattern it matches). */
function inOneMessage(result, needles) {
  for (const [needle, what] of needles) {
    check(typeof needle === 'string' ? result.stderr.includes(needle) : needle.test(result.stderr), `refused, all in one message: ${what}`);
  }
}
