/**
 * Generated gRPC contracts (ts-proto, committed; `npm test` fails when regenerating changes them).
 * One namespace per proto package.
 */
export * as healthv1 from './gen/grpc/health/v1/health.js';
export * as authv1 from './gen/reelbase/auth/v1/auth.js';
export * as recordsv1 from './gen/reelbase/records/v1/records.js';
export * as farmv1 from './gen/reelbase/records/v1/farm.js';
export * as sitesyncv1 from './gen/reelbase/records/v1/sitesync.js';
export * as eventsv1 from './gen/reelbase/events/v1/events.js';
export * as schemav1 from './gen/reelbase/schema/v1/schema.js';
/** Package reelbase.schema.v1, file actions.proto: the ActionsService the schema service serves. */
export * as actionsv1 from './gen/reelbase/schema/v1/actions.js';
/** The addons service of package reelbase.schema.v1 (its own file, served by the schema service). */
export * as addonsv1 from './gen/reelbase/schema/v1/addons.js';
/** The sync service of package reelbase.records.v1 (its own file, served by the records service). */
export * as syncv1 from './gen/reelbase/records/v1/sync.js';
/** The idempotency keys of package reelbase.records.v1 (its own file, served by the records service). */
export * as idempotencyv1 from './gen/reelbase/records/v1/idempotency.js';
export * as mediav1 from './gen/reelbase/media/v1/media.js';
export * as notifierv1 from './gen/reelbase/notifier/v1/notifier.js';
