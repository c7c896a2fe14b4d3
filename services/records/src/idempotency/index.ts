/** The idempotency module: the keys of the gateway's retried writes and their stored answers (docs/api-notes.md, "Idempotent retries"). */
export { IdempotencyKeys } from './domain/idempotency.keys.js';
export { IdempotencyRepository } from './store/idempotency.repository.js';
export { IDEMPOTENCY_SERVICE_NAME, idempotencyHandlers } from './grpc/idempotency.handler.js';
