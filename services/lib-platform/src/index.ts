/**
 * The platform library every service builds on. It never imports a service.
 */
export * from './errors.js';
export * from './problems.js';
export * from './canonical.json.js';
export * from './ids.js';
export * from './bus.js';
export * from './event.js';
export * from './stream-event.js';
export * from './time.js';
export * from './policy/index.js';
export * from './config.js';
export * from './logger.js';
export * from './metrics.js';
export * from './readiness.js';
export * from './readiness.nats.js';
export * from './lifecycle/index.js';
export * from './context.js';
export * from './db.js';
export * from './sql.pool.js';
export * from './http/ops.server.js';
export * from './http/error.answer.js';
export * from './grpc/status.js';
export * from './grpc/health.js';
export * from './grpc/server.js';
export * from './grpc/client.js';
export * from './grpc/records.client.js';
export * from './grpc/schema/index.js';
export * from './grpc/internal.auth.js';
export * from './nats/subjects.js';
export * from './nats/connection.js';
export * from './nats/announce.js';
export * from './nats/durable.consumer.js';
export * from './outbox/index.js';
export * from './memory/stream.gc.js';
export * from './security/scrypt.hasher.js';
export * from './security/secret.cipher.js';
