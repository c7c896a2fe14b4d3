/**
 * The schema and catalog routes (docs/api-notes.md, Schema): entity types and fields, statuses, steps,
 * priorities, workflows, transitions, task templates, branding, the launcher and tools catalogs. Every
 * mutation is Admin only (403 before the body is looked at); any authenticated user reads. Each route
 * is one call to the schema service carrying the validated body as JSON; its JSON answer is the
 * response body as is (mappers/schema.mapper.ts).
 */
import { SCHEMA_OPERATIONS, SCHEMA_OPERATION_NAMES, type CallContext, type SchemaOperation, type SchemaOperationName } from '@reelbase/lib-platform';
import type { SchemaClient } from '../clients/peers.js';
import type { AnyRoute, RouteResponse } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import type { z } from 'zod';
import { catalogQuery, schemaAnswerText, schemaRequest, schemaRouteParts } from '../mappers/schema.mapper.js';
import { ErrorBody } from '../schemas/common.schema.js';
import {
  ActiveToolsOut,
  ActiveToolsQuery,
  ApplicationsOut,
  ApplicationsQuery,
  BrandingOut,
  CodePath,
  DeletedOut,
  EntityCodePath,
  EntityCodeRenamePath,
  EntityTypeOut,
  FieldOut,
  FieldPath,
  PriorityOut,
  RenameOut,
  SchemaOut,
  StatusDeleteOut,
  StatusDeleteQuery,
  StatusOut,
  StepOut,
  StepsOut,
  TaskTemplatesOut,
  ToolsOut,
  TransitionsOut,
  UsageOut,
  WorkflowOut,
} from '../schemas/schema.schema.js';
import type { RouteDeps } from './route.deps.js';

const TAGS = ['schema'];

/** An RPC's JSON answer as the response body. */
type SchemaAnswer = Parameters<typeof schemaAnswerText>[0];
const jsonReply = (res: SchemaAnswer): Reply => Reply.rawJson(schemaAnswerText(res));

const ok = (description: string, schema: NonNullable<RouteResponse['schema']>): RouteResponse => ({ description, schema });
const conflict = (codes: string): RouteResponse => ({ description: `Conflict: ${codes}.`, schema: ErrorBody });

const DUPLICATE = '`duplicate_code` (the code exists already)';
const BUILTIN = '`builtin` (built-in types, fields and codes cannot be deleted or renamed)';
const IN_USE = '`code_in_use` (records, retired ones included, still use it; `usage` counts them)';
const RENAMED =
  'The rename cascades to every record, link, transition, workflow schema, task template and Preset holding the code ' +
  'before the answer is sent, and emits one schema event naming the old code, the new code and how many records it ' +
  'rewrote (no per-record events).';

/** What the gateway adds to one schema operation of the shared table: its OpenAPI text, path and answer schemas. */
interface SchemaRouteDoc {
  /** Defaults to the operation's name. */
  operationId?: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** The 200 answer. */
  ok: RouteResponse;
  /** The `code`s of its 409, when it has one. */
  conflicts?: string;
  errors: number[];
}

const CODE_RENAME = {
  description: RENAMED,
  params: CodePath,
  ok: ok('The rename as applied.', RenameOut),
  conflicts: `${DUPLICATE}; ${BUILTIN}`,
};
const DELETE_IN_USE = { params: CodePath, conflicts: `${BUILTIN}; ${IN_USE}`, errors: [404, 503] };

/** A create: 409 when the code exists. */
const created = (summary: string, answer: RouteResponse): SchemaRouteDoc => ({
  summary,
  ok: answer,
  conflicts: DUPLICATE,
  errors: [503],
});
/** An update of the definition `{code}`. */
const updated = (summary: string, answer: RouteResponse): SchemaRouteDoc => ({
  summary,
  params: CodePath,
  ok: answer,
  errors: [404, 503],
});
/** A change with nothing in its path and no conflict. */
const replaced = (summary: string, answer: RouteResponse): SchemaRouteDoc => ({ summary, ok: answer, errors: [503] });

const APPLICATIONS =
  "Without project_id: the whole studio catalog. With project_id: the applications the project's `data.overrides.applications` " +
  'names (a project without one inherits the whole catalog); with step too, `overrides.applicationsByStep[step]` wins ' +
  'over the project-wide list when present. An unknown project, or a restricted one the caller may not read, is 404.';
const ACTIVE_TOOLS =
  "The variants the project's `data.overrides.tools` selectors (`<tool>/<version>`) name. With step, an explicit " +
  '`overrides.toolsByStep[step]` list (even an empty one) keeps only the selectors it names; an absent key keeps all. ' +
  'Selectors naming a tool or version not in the catalog are skipped. An unknown project, or a restricted one the caller may not read, is 404.';

/** A read with no input. */
const read = (summary: string, answer: RouteResponse): SchemaRouteDoc => ({ summary, ok: answer, errors: [503] });
/** A catalog read by project (404 for an unknown one). */
const catalogRead = (summary: string, description: string, query: z.ZodObject, answer: RouteResponse): SchemaRouteDoc => ({
  summary,
  description,
  query,
  ok: answer,
  errors: [404, 503],
});

/** The routes' OpenAPI text and schemas, one per operation of SCHEMA_OPERATIONS. */
const DOCS: Record<SchemaOperationName, SchemaRouteDoc> = {
  // --- the whole schema ------------------------------------------------------------------
  getSchema: read(
    'The whole run-time data model: entity types with their fields, statuses, steps (in order), priorities, workflows, transitions, task templates.',
    ok('The schema.', SchemaOut),
  ),
  getUsage: {
    operationId: 'getSchemaUsage',
    summary: 'How many records use each entity type, field, status, step and priority (retired records included).',
    ok: ok('The usage report.', UsageOut),
    errors: [503],
  },

  // --- entity types and fields -----------------------------------------------------------
  createEntityType: {
    summary: 'Create a custom entity type (Admin).',
    description: 'Records of it can be written by the very next request, with no migration and no restart.',
    ok: ok('The entity type as stored.', EntityTypeOut),
    conflicts: DUPLICATE,
    errors: [503],
  },
  renameEntityType: {
    summary: "Change an entity type's display name (Admin).",
    params: EntityCodePath,
    ok: ok('The entity type as stored.', EntityTypeOut),
    conflicts: BUILTIN,
    errors: [404, 503],
  },
  deleteEntityType: {
    summary: 'Delete a custom entity type (Admin).',
    ...DELETE_IN_USE,
    params: EntityCodePath,
    ok: ok('The deleted entity type.', DeletedOut),
  },
  renameEntityTypeCode: {
    summary: "Change a custom entity type's code (Admin).",
    ...CODE_RENAME,
    params: EntityCodeRenamePath,
    errors: [404, 503],
  },
  createField: {
    summary: 'Add a field to an entity type, built-in or custom (Admin).',
    description: 'The field is usable by the very next request.',
    params: EntityCodePath,
    ok: ok('The field as stored.', FieldOut),
    conflicts: DUPLICATE,
    errors: [404, 503],
  },
  updateField: {
    summary: "Update a field's name, description, required flag, default or options (Admin).",
    params: FieldPath,
    ok: ok('The field as stored.', FieldOut),
    conflicts: `${IN_USE} for a dropped option`,
    errors: [404, 503],
  },
  deleteField: {
    summary: 'Delete a custom field (Admin).',
    ...DELETE_IN_USE,
    params: FieldPath,
    ok: ok('The deleted field.', DeletedOut),
  },
  renameOption: {
    summary: "Change an enum option's code (Admin).",
    ...CODE_RENAME,
    params: FieldPath,
    errors: [404, 503],
  },

  // --- statuses ------------------------------------------------------------------------------
  createStatus: created('Create a status (Admin).', ok('The status as stored.', StatusOut)),
  updateStatus: {
    summary: 'Update a status (Admin).',
    params: CodePath,
    ok: ok('The status as stored.', StatusOut),
    conflicts: `${IN_USE} for a type dropped from its scope`,
    errors: [404, 503],
  },
  deleteStatus: {
    summary: 'Delete a status, or with entity_code remove it from that type only (Admin).',
    description: 'With `entity_code`, a status scoped to every type becomes scoped to every other existing type.',
    ...DELETE_IN_USE,
    query: StatusDeleteQuery,
    ok: ok('The status deleted, or as now scoped.', StatusDeleteOut),
  },
  renameStatus: { summary: 'Change a status code (Admin).', ...CODE_RENAME, errors: [404, 503] },

  // --- steps ---------------------------------------------------------------------------------
  createStep: created('Create a step; it comes last (Admin).', ok('The step as stored.', StepOut)),
  reorderSteps: {
    summary: 'Put the steps in a new order (Admin).',
    description: '`codes` must name every step exactly once (422 otherwise).',
    ok: ok('The steps in their new order.', StepsOut),
    errors: [503],
  },
  updateStep: updated('Update a step (Admin).', ok('The step as stored.', StepOut)),
  deleteStep: { summary: 'Delete a step (Admin).', ...DELETE_IN_USE, ok: ok('The deleted step.', DeletedOut) },
  renameStep: { summary: 'Change a step code (Admin).', ...CODE_RENAME, errors: [404, 503] },

  // --- workflows, transitions, task templates --------------------------------------------
  createWorkflow: created('Create a workflow and its workflow schemas (Admin).', ok('The workflow as stored.', WorkflowOut)),
  deleteWorkflow: {
    summary: 'Delete a workflow; the body needs only `code` (Admin).',
    ok: ok('The deleted workflow.', DeletedOut),
    errors: [404, 503],
  },
  setTransitions: replaced("Set an object type's studio-default transitions (Admin).", ok("The type's transitions as stored.", TransitionsOut)),
  setTaskTemplates: replaced('Replace the studio-wide task templates (Admin).', ok('The task templates as stored.', TaskTemplatesOut)),

  // --- priorities ------------------------------------------------------------------------
  createPriority: created('Create a priority (Admin).', ok('The priority as stored.', PriorityOut)),
  updatePriority: updated('Update a priority (Admin).', ok('The priority as stored.', PriorityOut)),
  deletePriority: { summary: 'Delete a priority (Admin).', ...DELETE_IN_USE, ok: ok('The deleted priority.', DeletedOut) },
  renamePriority: { summary: 'Change a priority code (Admin).', ...CODE_RENAME, errors: [404, 503] },

  // --- branding and catalogs -------------------------------------------------------------
  getBranding: read('The studio branding.', ok('The branding (unset keys are null).', BrandingOut)),
  setBranding: replaced('Set the studio branding (Admin).', ok('The branding as stored.', BrandingOut)),
  getApplications: catalogRead("The launcher catalog, or a project's applications.", APPLICATIONS, ApplicationsQuery, ok('The applications.', ApplicationsOut)),
  setApplications: replaced('Replace the studio launcher catalog (Admin).', ok('The catalog as stored.', ApplicationsOut)),
  getTools: read('The tools catalog (built-in defaults when never set).', ok('The tools catalog.', ToolsOut)),
  setTools: replaced('Replace the tools catalog (Admin).', ok('The catalog as stored.', ToolsOut)),
  getActiveTools: catalogRead('The tool variants attached to a project, flattened.', ACTIVE_TOOLS, ActiveToolsQuery, ok('The active tools.', ActiveToolsOut)),
};

export function schemaRoutes({ peers, access }: RouteDeps): AnyRoute[] {
  const schema = peers.schema;

  /** One route per operation: a call carrying the validated body and path codes, its answer as it came. */
  const route = (name: SchemaOperationName): AnyRoute => {
    const op: SchemaOperation = SCHEMA_OPERATIONS[name];
    const { operationId = name, summary, description, params, query, ok: answer, conflicts, errors } = DOCS[name];
    const body = op.body;
    return defineRoute({
      method: op.method,
      path: op.path,
      operationId,
      summary,
      ...(description === undefined ? {} : { description }),
      tags: TAGS,
      auth: 'bearer',
      ...(op.role ? { allow: { roles: [op.role], to: 'change the schema and catalogs' } } : {}),
      ...(params === undefined ? {} : { params }),
      ...(query === undefined ? {} : { query }),
      ...(body === undefined ? {} : { body }),
      responses: conflicts === undefined ? { 200: answer } : { 200: answer, 409: conflict(conflicts) },
      errors,
      handler: async (input: { params: unknown; query: unknown; body: unknown; ctx: CallContext }) => {
        const parts = schemaRouteParts(input);
        if (op.request === 'catalog') {
          const q = catalogQuery(parts);
          // A restricted project the caller may not read is answered as an unknown one.
          access.assertReadable(input.ctx.principal, q.projectId);
          return jsonReply(await (schema[name] as (r: unknown, c: CallContext) => Promise<SchemaAnswer>)(q, input.ctx));
        }
        const request = schemaRequest(op, parts);
        return jsonReply(await (schema[name] as (r: unknown, c: CallContext) => Promise<SchemaAnswer>)(request, input.ctx));
      },
    });
  };

  return SCHEMA_OPERATION_NAMES.map(route);
}
