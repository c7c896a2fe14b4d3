/**
 * The schema and catalog routes (docs/api-notes.md, Schema): entity types and fields, statuses, steps,
 * priorities, workflows, transitions, task templates, branding, the launcher and tools catalogs. Every
 * mutation is Admin only (403 before the body is looked at); any authenticated user reads. Each route
 * is one call to the schema service carrying the validated body as JSON; its JSON answer is the
 * response body as is.
 */
import { AppError, type CallContext } from '@reelbase/lib-platform';
import type { schemav1 } from '@reelbase/proto';
import type { SchemaClient } from '../clients/peers.js';
import type { AuthedPrincipal } from '../http/locals.js';
import type { AnyRoute, RouteResponse } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import { ErrorBody } from '../schemas/common.schema.js';
import {
  ActiveToolsOut,
  ActiveToolsQuery,
  ApplicationsBody,
  ApplicationsOut,
  ApplicationsQuery,
  BrandingBody,
  BrandingOut,
  CodePath,
  CodeRename,
  DefinitionOut,
  EntityCodePath,
  EntityCodeRename,
  EntityCodeRenamePath,
  EntityTypeBody,
  FieldBody,
  FieldPatch,
  FieldPath,
  ObjectTransitionsBody,
  OptionRename,
  PriorityBody,
  PriorityPatch,
  RenameBody,
  SchemaOut,
  StatusBody,
  StatusDeleteQuery,
  StatusPatch,
  StepBody,
  StepPatch,
  StepReorder,
  TaskTemplatesBody,
  ToolsBody,
  ToolsOut,
  UsageOut,
  WorkflowBody,
} from '../schemas/schema.schema.js';
import type { RouteDeps } from './route.deps.js';

const TAGS = ['schema'];

/** Schema mutations: Admins only, decided before the body is validated. */
export function assertSchemaAdmin(principal: AuthedPrincipal): void {
  if (principal.role !== 'Admin') throw new AppError('forbidden', 'only an Admin may change the schema and catalogs');
}

/** The JSON-carrying RPCs of the schema service. */
type JsonRpc = {
  [K in keyof SchemaClient]: Parameters<SchemaClient[K]>[0] extends schemav1.JsonBody ? K : never;
}[keyof SchemaClient];

type CatalogRpc = 'getApplications' | 'getActiveTools';

/** An RPC's JSON answer as the response body (an empty answer is `{}`). */
function jsonReply(res: schemav1.JsonResult): Reply {
  return Reply.rawJson(res.json === '' ? '{}' : res.json);
}

const ok = (description: string, schema = DefinitionOut): RouteResponse => ({ description, schema });
const conflict = (codes: string): RouteResponse => ({ description: `Conflict: ${codes}.`, schema: ErrorBody });

const DUPLICATE = '`duplicate_code` (the code exists already)';
const BUILTIN = '`builtin` (built-in types, fields and codes cannot be deleted or renamed)';
const IN_USE = '`code_in_use` (records, retired ones included, still use it; `usage` counts them)';
const RENAMED =
  'The rename cascades to every record, link, transition, workflow schema, task template and Preset holding the code ' +
  'before the answer is sent, and emits one schema event naming the old code, the new code and how many records it ' +
  'rewrote (no per-record events).';

export function schemaRoutes({ peers }: RouteDeps): AnyRoute[] {
  const schema = peers.schema;
  /** One call with the request's path codes and body; the answer as it came. */
  const send = async (rpc: JsonRpc, ctx: CallContext, req: { body?: unknown; code?: string; subCode?: string; entityCode?: string } = {}): Promise<Reply> => {
    const request: schemav1.JsonBody = {
      bodyJson: req.body === undefined ? '' : JSON.stringify(req.body),
      code: req.code ?? '',
      subCode: req.subCode ?? '',
      entityCode: req.entityCode ?? '',
    };
    return jsonReply(await (schema[rpc] as (r: schemav1.JsonBody, c: CallContext) => Promise<schemav1.JsonResult>)(request, ctx));
  };
  const catalog = async (rpc: CatalogRpc, ctx: CallContext, query: schemav1.CatalogQuery): Promise<Reply> => jsonReply(await schema[rpc](query, ctx));
  const admin = (p: AuthedPrincipal) => assertSchemaAdmin(p);

  return [
    // --- the whole schema ------------------------------------------------------------------
    defineRoute({
      method: 'get',
      path: '/schema',
      operationId: 'getSchema',
      summary: 'The whole run-time data model: entity types with their fields, statuses, steps (in order), priorities, workflows, transitions, task templates.',
      tags: TAGS,
      auth: 'bearer',
      responses: { 200: { description: 'The schema.', schema: SchemaOut } },
      errors: [503],
      handler: ({ ctx }) => send('getSchema', ctx),
    }),
    defineRoute({
      method: 'get',
      path: '/schema/usage',
      operationId: 'getSchemaUsage',
      summary: 'How many records use each entity type, field, status, step and priority (retired records included).',
      tags: TAGS,
      auth: 'bearer',
      responses: { 200: { description: 'The usage report.', schema: UsageOut } },
      errors: [503],
      handler: ({ ctx }) => send('getUsage', ctx),
    }),

    // --- entity types and fields -----------------------------------------------------------
    defineRoute({
      method: 'post',
      path: '/schema/entity-types',
      operationId: 'createEntityType',
      summary: 'Create a custom entity type (Admin).',
      description: 'Records of it can be written by the very next request, with no migration and no restart.',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: EntityTypeBody,
      responses: { 200: ok('The entity type as stored.'), 409: conflict(DUPLICATE) },
      errors: [503],
      handler: ({ body, ctx }) => send('createEntityType', ctx, { body }),
    }),
    defineRoute({
      method: 'patch',
      path: '/schema/entity-types/{entity_code}',
      operationId: 'renameEntityType',
      summary: "Change an entity type's display name (Admin).",
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: EntityCodePath,
      body: RenameBody,
      responses: { 200: ok('The entity type as stored.'), 409: conflict(BUILTIN) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('renameEntityType', ctx, { body, entityCode: params.entity_code }),
    }),
    defineRoute({
      method: 'delete',
      path: '/schema/entity-types/{entity_code}',
      operationId: 'deleteEntityType',
      summary: 'Delete a custom entity type (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: EntityCodePath,
      responses: { 200: ok('The deleted entity type.'), 409: conflict(`${BUILTIN}; ${IN_USE}`) },
      errors: [404, 503],
      handler: ({ params, ctx }) => send('deleteEntityType', ctx, { entityCode: params.entity_code }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/entity-types/{code}/rename-code',
      operationId: 'renameEntityTypeCode',
      summary: "Change a custom entity type's code (Admin).",
      description: RENAMED,
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: EntityCodeRenamePath,
      body: EntityCodeRename,
      responses: { 200: ok('The rename as applied.'), 409: conflict(`${DUPLICATE}; ${BUILTIN}`) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('renameEntityTypeCode', ctx, { body, code: params.code }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/entity-types/{entity_code}/fields',
      operationId: 'createField',
      summary: 'Add a field to an entity type, built-in or custom (Admin).',
      description: 'The field is usable by the very next request.',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: EntityCodePath,
      body: FieldBody,
      responses: { 200: ok('The field as stored.'), 409: conflict(DUPLICATE) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('createField', ctx, { body, entityCode: params.entity_code }),
    }),
    defineRoute({
      method: 'patch',
      path: '/schema/entity-types/{entity_code}/fields/{field_code}',
      operationId: 'updateField',
      summary: "Update a field's name, description, required flag, default or options (Admin).",
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: FieldPath,
      body: FieldPatch,
      responses: { 200: ok('The field as stored.'), 409: conflict(`${IN_USE} for a dropped option`) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('updateField', ctx, { body, entityCode: params.entity_code, subCode: params.field_code }),
    }),
    defineRoute({
      method: 'delete',
      path: '/schema/entity-types/{entity_code}/fields/{field_code}',
      operationId: 'deleteField',
      summary: 'Delete a custom field (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: FieldPath,
      responses: { 200: ok('The deleted field.'), 409: conflict(`${BUILTIN}; ${IN_USE}`) },
      errors: [404, 503],
      handler: ({ params, ctx }) => send('deleteField', ctx, { entityCode: params.entity_code, subCode: params.field_code }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/entity-types/{entity_code}/fields/{field_code}/rename-option',
      operationId: 'renameOption',
      summary: "Change an enum option's code (Admin).",
      description: RENAMED,
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: FieldPath,
      body: OptionRename,
      responses: { 200: ok('The rename as applied.'), 409: conflict(`${DUPLICATE}; ${BUILTIN}`) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('renameOption', ctx, { body, entityCode: params.entity_code, subCode: params.field_code }),
    }),

    // --- statuses ------------------------------------------------------------------------------
    defineRoute({
      method: 'post',
      path: '/schema/statuses',
      operationId: 'createStatus',
      summary: 'Create a status (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: StatusBody,
      responses: { 200: ok('The status as stored.'), 409: conflict(DUPLICATE) },
      errors: [503],
      handler: ({ body, ctx }) => send('createStatus', ctx, { body }),
    }),
    defineRoute({
      method: 'patch',
      path: '/schema/statuses/{code}',
      operationId: 'updateStatus',
      summary: 'Update a status (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      body: StatusPatch,
      responses: { 200: ok('The status as stored.'), 409: conflict(`${IN_USE} for a type dropped from its scope`) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('updateStatus', ctx, { body, code: params.code }),
    }),
    defineRoute({
      method: 'delete',
      path: '/schema/statuses/{code}',
      operationId: 'deleteStatus',
      summary: 'Delete a status, or with entity_code remove it from that type only (Admin).',
      description: 'With `entity_code`, a status scoped to every type becomes scoped to every other existing type.',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      query: StatusDeleteQuery,
      responses: { 200: ok('The status deleted, or as now scoped.'), 409: conflict(`${BUILTIN}; ${IN_USE}`) },
      errors: [404, 503],
      handler: ({ params, query, ctx }) => send('deleteStatus', ctx, { code: params.code, entityCode: query.entity_code }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/statuses/{code}/rename',
      operationId: 'renameStatus',
      summary: 'Change a status code (Admin).',
      description: RENAMED,
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      body: CodeRename,
      responses: { 200: ok('The rename as applied.'), 409: conflict(`${DUPLICATE}; ${BUILTIN}`) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('renameStatus', ctx, { body, code: params.code }),
    }),

    // --- steps ---------------------------------------------------------------------------------
    defineRoute({
      method: 'post',
      path: '/schema/steps',
      operationId: 'createStep',
      summary: 'Create a step; it comes last (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: StepBody,
      responses: { 200: ok('The step as stored.'), 409: conflict(DUPLICATE) },
      errors: [503],
      handler: ({ body, ctx }) => send('createStep', ctx, { body }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/steps/reorder',
      operationId: 'reorderSteps',
      summary: 'Put the steps in a new order (Admin).',
      description: '`codes` must name every step exactly once (422 otherwise).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: StepReorder,
      responses: { 200: ok('The steps in their new order.') },
      errors: [503],
      handler: ({ body, ctx }) => send('reorderSteps', ctx, { body }),
    }),
    defineRoute({
      method: 'patch',
      path: '/schema/steps/{code}',
      operationId: 'updateStep',
      summary: 'Update a step (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      body: StepPatch,
      responses: { 200: ok('The step as stored.') },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('updateStep', ctx, { body, code: params.code }),
    }),
    defineRoute({
      method: 'delete',
      path: '/schema/steps/{code}',
      operationId: 'deleteStep',
      summary: 'Delete a step (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      responses: { 200: ok('The deleted step.'), 409: conflict(`${BUILTIN}; ${IN_USE}`) },
      errors: [404, 503],
      handler: ({ params, ctx }) => send('deleteStep', ctx, { code: params.code }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/steps/{code}/rename',
      operationId: 'renameStep',
      summary: 'Change a step code (Admin).',
      description: RENAMED,
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      body: CodeRename,
      responses: { 200: ok('The rename as applied.'), 409: conflict(`${DUPLICATE}; ${BUILTIN}`) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('renameStep', ctx, { body, code: params.code }),
    }),

    // --- workflows, transitions, task templates --------------------------------------------
    defineRoute({
      method: 'post',
      path: '/schema/workflows',
      operationId: 'createWorkflow',
      summary: 'Create a workflow and its workflow schemas (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: WorkflowBody,
      responses: { 200: ok('The workflow as stored.'), 409: conflict(DUPLICATE) },
      errors: [503],
      handler: ({ body, ctx }) => send('createWorkflow', ctx, { body }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/workflows/delete',
      operationId: 'deleteWorkflow',
      summary: 'Delete a workflow; the body needs only `code` (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: WorkflowBody,
      responses: { 200: ok('The deleted workflow.') },
      errors: [404, 503],
      handler: ({ body, ctx }) => send('deleteWorkflow', ctx, { body, code: body.code }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/transitions',
      operationId: 'setTransitions',
      summary: "Set an object type's studio-default transitions (Admin).",
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: ObjectTransitionsBody,
      responses: { 200: ok("The type's transitions as stored.") },
      errors: [503],
      handler: ({ body, ctx }) => send('setTransitions', ctx, { body, entityCode: body.entity_type }),
    }),
    defineRoute({
      method: 'put',
      path: '/schema/task-templates',
      operationId: 'setTaskTemplates',
      summary: 'Replace the studio-wide task templates (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: TaskTemplatesBody,
      responses: { 200: ok('The task templates as stored.') },
      errors: [503],
      handler: ({ body, ctx }) => send('setTaskTemplates', ctx, { body }),
    }),

    // --- priorities ------------------------------------------------------------------------
    defineRoute({
      method: 'post',
      path: '/schema/priorities',
      operationId: 'createPriority',
      summary: 'Create a priority (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: PriorityBody,
      responses: { 200: ok('The priority as stored.'), 409: conflict(DUPLICATE) },
      errors: [503],
      handler: ({ body, ctx }) => send('createPriority', ctx, { body }),
    }),
    defineRoute({
      method: 'patch',
      path: '/schema/priorities/{code}',
      operationId: 'updatePriority',
      summary: 'Update a priority (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      body: PriorityPatch,
      responses: { 200: ok('The priority as stored.') },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('updatePriority', ctx, { body, code: params.code }),
    }),
    defineRoute({
      method: 'delete',
      path: '/schema/priorities/{code}',
      operationId: 'deletePriority',
      summary: 'Delete a priority (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      responses: { 200: ok('The deleted priority.'), 409: conflict(`${BUILTIN}; ${IN_USE}`) },
      errors: [404, 503],
      handler: ({ params, ctx }) => send('deletePriority', ctx, { code: params.code }),
    }),
    defineRoute({
      method: 'post',
      path: '/schema/priorities/{code}/rename',
      operationId: 'renamePriority',
      summary: 'Change a priority code (Admin).',
      description: RENAMED,
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      params: CodePath,
      body: CodeRename,
      responses: { 200: ok('The rename as applied.'), 409: conflict(`${DUPLICATE}; ${BUILTIN}`) },
      errors: [404, 503],
      handler: ({ params, body, ctx }) => send('renamePriority', ctx, { body, code: params.code }),
    }),

    // --- branding and catalogs -------------------------------------------------------------
    defineRoute({
      method: 'get',
      path: '/branding',
      operationId: 'getBranding',
      summary: 'The studio branding.',
      tags: TAGS,
      auth: 'bearer',
      responses: { 200: { description: 'The branding (unset keys are null).', schema: BrandingOut } },
      errors: [503],
      handler: ({ ctx }) => send('getBranding', ctx),
    }),
    defineRoute({
      method: 'put',
      path: '/branding',
      operationId: 'setBranding',
      summary: 'Set the studio branding (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: BrandingBody,
      responses: { 200: { description: 'The branding as stored.', schema: BrandingOut } },
      errors: [503],
      handler: ({ body, ctx }) => send('setBranding', ctx, { body }),
    }),
    defineRoute({
      method: 'get',
      path: '/schema/applications',
      operationId: 'getApplications',
      summary: "The launcher catalog, or a project's applications.",
      description:
        "Without project_id: the whole studio catalog. With project_id: the applications the project's `data.overrides.applications` " +
        'names (a project without one inherits the whole catalog); with step too, `overrides.applicationsByStep[step]` wins ' +
        'over the project-wide list when present. An unknown project is 404.',
      tags: TAGS,
      auth: 'bearer',
      query: ApplicationsQuery,
      responses: { 200: { description: 'The applications.', schema: ApplicationsOut } },
      errors: [404, 503],
      handler: ({ query, ctx }) => catalog('getApplications', ctx, { projectId: query.project_id, step: query.step }),
    }),
    defineRoute({
      method: 'put',
      path: '/schema/applications',
      operationId: 'setApplications',
      summary: 'Replace the studio launcher catalog (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: ApplicationsBody,
      responses: { 200: { description: 'The catalog as stored.', schema: ApplicationsOut } },
      errors: [503],
      handler: ({ body, ctx }) => send('setApplications', ctx, { body }),
    }),
    defineRoute({
      method: 'get',
      path: '/schema/tools',
      operationId: 'getTools',
      summary: 'The tools catalog (built-in defaults when never set).',
      tags: TAGS,
      auth: 'bearer',
      responses: { 200: { description: 'The tools catalog.', schema: ToolsOut } },
      errors: [503],
      handler: ({ ctx }) => send('getTools', ctx),
    }),
    defineRoute({
      method: 'put',
      path: '/schema/tools',
      operationId: 'setTools',
      summary: 'Replace the tools catalog (Admin).',
      tags: TAGS,
      auth: 'bearer',
      authorize: admin,
      body: ToolsBody,
      responses: { 200: { description: 'The catalog as stored.', schema: ToolsOut } },
      errors: [503],
      handler: ({ body, ctx }) => send('setTools', ctx, { body }),
    }),
    defineRoute({
      method: 'get',
      path: '/schema/tools/active',
      operationId: 'getActiveTools',
      summary: 'The tool variants attached to a project, flattened.',
      description:
        "The variants the project's `data.overrides.tools` selectors (`<tool>/<version>`) name. With step, an explicit " +
        '`overrides.toolsByStep[step]` list (even an empty one) keeps only the selectors it names; an absent key keeps all. ' +
        'Selectors naming a tool or version not in the catalog are skipped. An unknown project is 404.',
      tags: TAGS,
      auth: 'bearer',
      query: ActiveToolsQuery,
      responses: { 200: { description: 'The active tools.', schema: ActiveToolsOut } },
      errors: [404, 503],
      handler: ({ query, ctx }) => catalog('getActiveTools', ctx, { projectId: query.project_id, step: query.step }),
    }),
  ];
}
