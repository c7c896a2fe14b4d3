/**
 * The gateway's gRPC peers (auth, records, events, schema, media-transcode, notifier), each wrapped
 * once by lib-platform's createGrpcClient, plus the grpc.health.v1 checks of those /readyz depends
 * on. Schema, media-transcode and notifier are not among them: records validate against the schema
 * they hold, so only the schema routes need the schema service, only the media routes
 * media-transcode, and only the notification and webhook routes the notifier; those answer
 * 503 while it is down. The action routes call the schema service's ActionsService (`actions`,
 * at the schema address).
 */
import { credentials, Metadata } from '@grpc/grpc-js';
import { createGrpcClient, type Metrics, type PromiseClient } from '@reelbase/lib-platform';
import { actionsv1, addonsv1, authv1, eventsv1, farmv1, healthv1, idempotencyv1, notifierv1, recordsv1, schemav1, sitesyncv1, syncv1 } from '@reelbase/proto';
import { createMediaClient, type MediaPeer } from './media.client.js';

/** What routes call. Tests pass fakes of the same shape. */
export interface Peers {
  auth: PromiseClient<authv1.AuthServiceClient>;
  records: PromiseClient<recordsv1.RecordsServiceClient>;
  events: PromiseClient<eventsv1.EventsServiceClient>;
  schema: SchemaClient;
  /** The addons of the schema service (its AddonsService, at the schema address). */
  addons: PromiseClient<addonsv1.AddonsServiceClient>;
  /** media-transcode: reviewable uploads and status, media reads (streams: media.client.ts). */
  media: MediaPeer;
  notifier: PromiseClient<notifierv1.NotifierServiceClient>;
  /** The actions (list, execute, launch requests, custom actions), served by the schema service. */
  actions: PromiseClient<actionsv1.ActionsServiceClient>;
  /** The farm (records' FarmService, at the records address; docs/farm.md). */
  farm: PromiseClient<farmv1.FarmServiceClient>;
  /** Site sync, served by records beside RecordsService (at the records address). */
  sitesync: PromiseClient<sitesyncv1.SiteSyncServiceClient>;
  /** Sync imports, mappings and changes (records' SyncService, at the records address). */
  sync: PromiseClient<syncv1.SyncServiceClient>;
  /** Idempotency keys of POSTs (records' IdempotencyService, at the records address). */
  idempotency: PromiseClient<idempotencyv1.IdempotencyServiceClient>;
}

/** The schema service: one call per schema and catalog route, JSON in and out. */
export type SchemaClient = PromiseClient<schemav1.SchemaServiceClient>;

export interface PeerAddresses {
  auth: string;
  records: string;
  events: string;
  schema: string;
  media: string;
  notifier: string;
}

/** The peers without which the gateway cannot serve its core routes. */
export type ReadinessPeer = 'auth' | 'records' | 'events';

/** Per-peer call deadlines that differ from the common one. */
export interface PeerDeadlines {
  /** Schema changes include their cascade (a rename rewrites every record using the code). */
  schemaMs?: number;
  /** Longest pause of a media stream (an upload or a read). */
  mediaIdleMs?: number;
  /** A sync import writes up to 1000 records in one call (default 60 s). */
  syncMs?: number;
}

export interface PeerConnections {
  peers: Peers;
  /** grpc.health.v1 Check of each peer /readyz depends on; rejects unless SERVING. */
  health: Record<ReadinessPeer, () => Promise<void>>;
  close(): void;
}

/** A health check against `address` with a short deadline. */
function healthCheck(client: healthv1.HealthClient, name: string, deadlineMs: number): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      client.check({ service: '' }, new Metadata(), { deadline: new Date(Date.now() + deadlineMs) }, (err, res) => {
        if (err) return reject(new Error(`${name}: ${err.details || err.message}`));
        if (res.status !== healthv1.HealthCheckResponse_ServingStatus.SERVING) return reject(new Error(`${name} is not serving`));
        resolve();
      });
    });
}

/** Creates clients for every peer. Nothing connects until the first call. */
export function connectPeers(
  addrs: PeerAddresses,
  deadlineMs: number,
  metrics: Metrics,
  internalAuthSecret: string,
  healthDeadlineMs = 1000,
  deadlines: PeerDeadlines = {},
): PeerConnections {
  const auth = createGrpcClient(authv1.AuthServiceClient, authv1.AuthServiceService, {
    name: 'auth',
    address: addrs.auth,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const records = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
    name: 'records',
    address: addrs.records,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const events = createGrpcClient(eventsv1.EventsServiceClient, eventsv1.EventsServiceService, {
    name: 'events',
    address: addrs.events,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const schema = createGrpcClient(schemav1.SchemaServiceClient, schemav1.SchemaServiceService, {
    name: 'schema',
    address: addrs.schema,
    internalAuthSecret,
    deadlineMs: deadlines.schemaMs ?? deadlineMs,
    metrics,
  });
  const addons = createGrpcClient(addonsv1.AddonsServiceClient, addonsv1.AddonsServiceService, {
    name: 'addons',
    address: addrs.schema,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const media = createMediaClient({
    address: addrs.media,
    internalAuthSecret,
    deadlineMs,
    idleMs: deadlines.mediaIdleMs ?? 60_000,
    metrics,
  });
  const notifier = createGrpcClient(notifierv1.NotifierServiceClient, notifierv1.NotifierServiceService, {
    name: 'notifier',
    address: addrs.notifier,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const actions = createGrpcClient(actionsv1.ActionsServiceClient, actionsv1.ActionsServiceService, {
    name: 'actions',
    address: addrs.schema,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const farm = createGrpcClient(farmv1.FarmServiceClient, farmv1.FarmServiceService, {
    name: 'farm',
    address: addrs.records,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const sitesync = createGrpcClient(sitesyncv1.SiteSyncServiceClient, sitesyncv1.SiteSyncServiceService, {
    name: 'sitesync',
    address: addrs.records,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const sync = createGrpcClient(syncv1.SyncServiceClient, syncv1.SyncServiceService, {
    name: 'sync',
    address: addrs.records,
    internalAuthSecret,
    deadlineMs: deadlines.syncMs ?? 60_000,
    metrics,
  });
  const idempotency = createGrpcClient(idempotencyv1.IdempotencyServiceClient, idempotencyv1.IdempotencyServiceService, {
    name: 'idempotency',
    address: addrs.records,
    internalAuthSecret,
    deadlineMs,
    metrics,
  });
  const healthClients = {
    auth: new healthv1.HealthClient(addrs.auth, credentials.createInsecure()),
    records: new healthv1.HealthClient(addrs.records, credentials.createInsecure()),
    events: new healthv1.HealthClient(addrs.events, credentials.createInsecure()),
  };
  return {
    peers: {
      auth: auth.call,
      records: records.call,
      events: events.call,
      schema: schema.call,
      addons: addons.call,
      media: media.peer,
      notifier: notifier.call,
      actions: actions.call,
      farm: farm.call,
      sitesync: sitesync.call,
      sync: sync.call,
      idempotency: idempotency.call,
    },
    health: {
      auth: healthCheck(healthClients.auth, 'auth', healthDeadlineMs),
      records: healthCheck(healthClients.records, 'records', healthDeadlineMs),
      events: healthCheck(healthClients.events, 'events', healthDeadlineMs),
    },
    close() {
      for (const c of [auth, records, events, schema, addons, media, notifier, actions, farm, sitesync, sync, idempotency]) c.close();
      for (const c of Object.values(healthClients)) c.close();
    },
  };
}
