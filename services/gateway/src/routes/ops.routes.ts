/**
 * Probes, metrics and the OpenAPI document. The probes and the document are public and never
 * rate limited; metrics on the API port need an Admin (Prometheus uses the ops port).
 */
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import { HealthOut, NotReadyOut, ReadyOut } from '../schemas/ops.schema.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN } from './route.roles.js';

export function opsRoutes(deps: RouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'Liveness: the process answers.',
      tags: ['ops'],
      auth: 'public',
      rateLimited: false,
      responses: { 200: { description: 'Alive.', schema: HealthOut } },
      handler: () => ({ status: 'ok' }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'Readiness: auth, records, events (grpc.health.v1) and NATS answer.',
      tags: ['ops'],
      auth: 'public',
      rateLimited: false,
      responses: {
        200: { description: 'Every dependency answers.', schema: ReadyOut },
        503: { description: 'A dependency does not answer (named in detail).', schema: NotReadyOut },
      },
      handler: async () => {
        if (deps.draining()) return Reply.json({ detail: 'gateway is shutting down', code: 'unavailable', checks: {} }, 503);
        const report = await deps.readiness.run();
        if (report.ready) return { status: 'ready', checks: report.checks };
        return Reply.json({ detail: `${report.failing} is not answering`, code: 'unavailable', checks: report.checks }, 503);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus metrics (RED per route template, gRPC client latency, process); Admin only.',
      description:
        'Prometheus scrapes the same registry without credentials on the ops port (`HTTP_PORT`, default 9100), ' + 'which is not exposed outside the cluster.',
      tags: ['ops'],
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'read metrics here' },
      responses: { 200: { description: 'Prometheus text format.', contentType: 'text/plain' } },
      handler: async () => Reply.text(await deps.metrics.registry.metrics(), deps.metrics.registry.contentType),
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This API as an OpenAPI 3.1 document.',
      tags: ['ops'],
      auth: 'public',
      rateLimited: false,
      responses: { 200: { description: 'OpenAPI 3.1.0, info.version 0.0.1.', contentType: 'application/json' } },
      handler: () => Reply.rawJson(deps.openapi()),
    }),
  ];
}
