/**
 * Fake adapters for unit tests: gRPC peers with the PromiseClient shape (in-memory records,
 * a token table for auth, an in-memory event log), a log capture, and a gateway started on
 * port 0 with them. Each peer's fake is in its own module beside this one (`*.fake.ts`, the peers
 * the schema service serves in `schema.fakes.ts`), over the state they share (`fake.state.ts`).
 */
import { Writable } from 'node:stream';
import { createLogger, Readiness, type Logger } from '@reelbase/lib-platform';
import { TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';
import type { Peers } from '../../src/clients/peers.js';
import { parseGatewayConfig } from '../../src/config.js';
import { createGatewayBus, type GatewayBus } from '../../src/live/gateway.bus.js';
import { startGateway, type RunningGateway } from '../../src/service.js';
import { fakeAuth } from './auth.fake.js';
import { fakeEvents } from './events.fake.js';
import { fakeMedia } from './media.fake.js';
import { fakeNotifier } from './notifier.fake.js';
import { fakeFarm, fakeRecords, fakeSitesync } from './records.fake.js';
import { fakeActions, fakeAddons, fakeScheduler, fakeSchema } from './schema.fakes.js';
import { emptyNotifierState, tokenTable, tracker, type FakeState } from './fake.state.js';

export { API_KEY_ID, emptyNotifierState, logEvent, storeProject, tokenTable, userLink, USERS, type FakeNotifierState, type FakeState } from './fake.state.js';

/** Fake peers over `state`. */
export function fakePeers(state: FakeState): Peers {
  const track = tracker(state);
  const records = fakeRecords(state, track);
  return {
    auth: fakeAuth(state, track, records),
    records,
    events: fakeEvents(state, track),
    schema: fakeSchema(state, track),
    addons: fakeAddons(track),
    media: fakeMedia(state, track),
    notifier: fakeNotifier(state, track),
    actions: fakeActions(track),
    sitesync: fakeSitesync(state, track),
    farm: fakeFarm(state, track),
    scheduler: fakeScheduler(state, track),
  } as unknown as Peers;
}

/** Captures pino output as parsed lines. */
export function captureLogs(): { logger: Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger('gateway', 'debug', stream);
  return {
    logger,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export interface TestGateway extends RunningGateway {
  url: string;
  state: FakeState;
  bus: GatewayBus;
  logs: ReturnType<typeof captureLogs>;
  readinessChecks: Map<string, () => Promise<unknown>>;
}

/** Starts a gateway on port 0 with fake peers (as `wrap` changes them), a fake live feed and fake readiness checks. */
export async function startTestGateway(env: Record<string, string> = {}, wrap: (peers: Peers, state: FakeState) => Peers = (p) => p): Promise<TestGateway> {
  const state: FakeState = {
    tokens: tokenTable(),
    records: new Map(),
    events: [],
    down: new Set(),
    calls: [],
    failNext: new Map(),
    notifier: emptyNotifierState(),
  };
  const logs = captureLogs();
  const bus = createGatewayBus(logs.logger);
  const readinessChecks = new Map<string, () => Promise<unknown>>();
  const readiness = new Readiness(300);
  for (const name of ['auth', 'records', 'events', 'nats']) {
    const check = async () => {
      if (state.down.has(name)) throw new Error(`${name} is down`);
    };
    readinessChecks.set(name, check);
    readiness.add(name, check);
  }
  const config = parseGatewayConfig({ INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET, GATEWAY_PORT: '0', HTTP_PORT: '0', LOG_LEVEL: 'debug', ...env });
  const gw = await startGateway(config, logs.logger, { peers: wrap(fakePeers(state), state), bus, readiness });
  return { ...gw, url: `http://127.0.0.1:${gw.httpPort}`, state, bus, logs, readinessChecks };
}
