/**
 * reelbase.schema.v1.SchemaService: proto messages ↔ domain calls, nothing more. Every
 * answer is the JSON object the gateway returns as the response body.
 */
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import { schemav1 } from '@reelbase/proto';
import type { SchemaRequest, SchemaService } from '../domain/schema.service.js';

/** The full proto name, used for registration and health checks. */
export const SCHEMA_SERVICE_NAME = 'reelbase.schema.v1.SchemaService';

const request = (b: schemav1.JsonBody): SchemaRequest => ({ body: b.bodyJson, code: b.code, fieldCode: b.subCode, entityCode: b.entityCode });
const json = (v: unknown): schemav1.JsonResult => ({ json: JSON.stringify(v) });

type Change =
  | 'createEntityType'
  | 'renameEntityType'
  | 'deleteEntityType'
  | 'renameEntityTypeCode'
  | 'createField'
  | 'updateField'
  | 'deleteField'
  | 'renameOption'
  | 'createStatus'
  | 'updateStatus'
  | 'deleteStatus'
  | 'renameStatus'
  | 'createStep'
  | 'reorderSteps'
  | 'updateStep'
  | 'deleteStep'
  | 'renameStep'
  | 'createWorkflow'
  | 'deleteWorkflow'
  | 'setTransitions'
  | 'setTaskTemplates'
  | 'createPriority'
  | 'updatePriority'
  | 'deletePriority'
  | 'renamePriority'
  | 'setBranding'
  | 'setApplications'
  | 'setTools';

/** Builds the handlers registered with GrpcServer under {@link SCHEMA_SERVICE_NAME}. */
export function schemaHandlers(service: SchemaService): UnaryHandlers<schemav1.SchemaServiceServer> {
  const change = (name: Change) => async (b: schemav1.JsonBody, ctx: CallContext) => json(await service[name](ctx, request(b)));
  return {
    getSchema: async () => json(await service.getSchema()),
    getUsage: async () => json(await service.getUsage()),
    getBranding: async () => json(await service.getBranding()),
    getTools: async () => json(await service.getTools()),
    getApplications: async (q: schemav1.CatalogQuery) => json(await service.getApplications(q.projectId, q.step)),
    getActiveTools: async (q: schemav1.CatalogQuery) => json(await service.getActiveTools(q.projectId, q.step)),
    createEntityType: change('createEntityType'),
    renameEntityType: change('renameEntityType'),
    deleteEntityType: change('deleteEntityType'),
    renameEntityTypeCode: change('renameEntityTypeCode'),
    createField: change('createField'),
    updateField: change('updateField'),
    deleteField: change('deleteField'),
    renameOption: change('renameOption'),
    createStatus: change('createStatus'),
    updateStatus: change('updateStatus'),
    deleteStatus: change('deleteStatus'),
    renameStatus: change('renameStatus'),
    createStep: change('createStep'),
    reorderSteps: change('reorderSteps'),
    updateStep: change('updateStep'),
    deleteStep: change('deleteStep'),
    renameStep: change('renameStep'),
    createWorkflow: change('createWorkflow'),
    deleteWorkflow: change('deleteWorkflow'),
    setTransitions: change('setTransitions'),
    setTaskTemplates: change('setTaskTemplates'),
    createPriority: change('createPriority'),
    updatePriority: change('updatePriority'),
    deletePriority: change('deletePriority'),
    renamePriority: change('renamePriority'),
    setBranding: change('setBranding'),
    setApplications: change('setApplications'),
    setTools: change('setTools'),
  };
}
