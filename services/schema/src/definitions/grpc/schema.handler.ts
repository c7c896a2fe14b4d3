/**
 * reelbase.schema.v1.SchemaService: proto messages ↔ domain calls, nothing more, built from the
 * operations table (SCHEMA_OPERATIONS): every change goes to SchemaService.change, every read to
 * its method. Every answer is the JSON object the gateway returns as the response body.
 */
import {
  SCHEMA_OPERATION_NAMES,
  isSchemaChange,
  type CallContext,
  type SchemaOperationName,
  type SchemaReadName,
  type UnaryHandlers,
} from '@reelbase/lib-platform';
import { schemav1 } from '@reelbase/proto';
import type { SchemaRequest, SchemaService } from '../domain/schema.service.js';

/** The full proto name, used for registration and health checks. */
export const SCHEMA_SERVICE_NAME = 'reelbase.schema.v1.SchemaService';

const request = (b: schemav1.JsonBody): SchemaRequest => ({ body: b.bodyJson, code: b.code, fieldCode: b.subCode, entityCode: b.entityCode });
const json = (v: unknown): schemav1.JsonResult => ({ json: JSON.stringify(v) });

/** The table and the proto service name the same RPCs (the build fails otherwise). */
type Rpc = keyof schemav1.SchemaServiceService;
export const TABLE_MATCHES_PROTO: [Exclude<Rpc, SchemaOperationName>, Exclude<SchemaOperationName, Rpc>] extends [never, never] ? true : false = true;

type Handler = (req: schemav1.JsonBody & schemav1.CatalogQuery, ctx: CallContext) => Promise<schemav1.JsonResult>;

/** Builds the handlers registered with GrpcServer under {@link SCHEMA_SERVICE_NAME}. */
export interface SchemaHandlerDeps {
  service: SchemaService;
}

export function schemaHandlers({ service }: SchemaHandlerDeps): UnaryHandlers<schemav1.SchemaServiceServer> {
  const reads: Record<SchemaReadName, Handler> = {
    getSchema: async () => json(await service.getSchema()),
    getUsage: async () => json(await service.getUsage()),
    getBranding: async () => json(await service.getBranding()),
    getTools: async () => json(await service.getTools()),
    getApplications: async (q) => json(await service.getApplications(q.projectId, q.step)),
    getActiveTools: async (q) => json(await service.getActiveTools(q.projectId, q.step)),
  };
  const handlers = SCHEMA_OPERATION_NAMES.map((name): [string, Handler] => [
    name,
    isSchemaChange(name) ? async (b, ctx) => json(await service.change(name, ctx, request(b))) : reads[name],
  ]);
  return Object.fromEntries(handlers) as unknown as UnaryHandlers<schemav1.SchemaServiceServer>;
}
