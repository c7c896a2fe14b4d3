/**
 * The schema operations, listed once (docs/architecture.md, "The schema service"): for each, its
 * RPC of reelbase.schema.v1.SchemaService (the key, as ts-proto names it), its HTTP route, where
 * the RPC's path codes come from, who may call it and the body it takes (schema-bodies.ts). The
 * gateway builds its routes from this table (adding only their OpenAPI text), the schema service
 * its gRPC handlers and its changes (adding each change's editor function); both are keyed by it,
 * so the compiler refuses either side when it misses an operation. A new operation is one entry
 * here, its RPC in schema.proto, its editor function and its OpenAPI text.
 */
import type { z } from 'zod';
import type { Role } from '../context.js';
import * as B from './schema-bodies.js';

/** Where one path code of the RPC request comes from on the route: `<part>.<name>`. */
export type SchemaCodeSource = `path.${string}` | `query.${string}` | `body.${string}`;

export interface SchemaOperation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The OpenAPI form of the route's path. */
  path: string;
  /** Who may call it: every change is for Admins; `null` is any authenticated user. */
  role: Role | null;
  /**
   * `json`: the RPC takes `JsonBody` (the body as JSON and the path codes below); `catalog`: it
   * takes `CatalogQuery` (the `project_id` and `step` query parameters).
   */
  request: 'json' | 'catalog';
  /** The `JsonBody` codes: `code`, `subCode` (the field of the field routes) and `entityCode`. */
  codes?: { code?: SchemaCodeSource; subCode?: SchemaCodeSource; entityCode?: SchemaCodeSource };
  /** The JSON body it takes, checked by the gateway and again by the schema service; none: no body. */
  body?: z.ZodType;
}

const read = (path: string, request: SchemaOperation['request'] = 'json') => ({ method: 'get', path, role: null, request, body: undefined }) as const;
const change = <Body extends z.ZodType | undefined = undefined>(
  method: SchemaOperation['method'],
  path: string,
  body?: Body,
  codes?: SchemaOperation['codes'],
) => ({ method, path, role: 'Admin', request: 'json', body: body as Body, ...(codes ? { codes } : {}) }) as const;

const ENTITY = { entityCode: 'path.entity_code' } as const;
const FIELD = { entityCode: 'path.entity_code', subCode: 'path.field_code' } as const;
const CODE = { code: 'path.code' } as const;

/** Every schema operation, in the order of the routes (and of the OpenAPI document). */
export const SCHEMA_OPERATIONS = {
  getSchema: read('/schema'),
  getUsage: read('/schema/usage'),

  createEntityType: change('post', '/schema/entity-types', B.EntityTypeBody),
  renameEntityType: change('patch', '/schema/entity-types/{entity_code}', B.RenameBody, ENTITY),
  deleteEntityType: change('delete', '/schema/entity-types/{entity_code}', undefined, ENTITY),
  renameEntityTypeCode: change('post', '/schema/entity-types/{code}/rename-code', B.EntityCodeRename, CODE),
  createField: change('post', '/schema/entity-types/{entity_code}/fields', B.FieldBody, ENTITY),
  updateField: change('patch', '/schema/entity-types/{entity_code}/fields/{field_code}', B.FieldPatch, FIELD),
  deleteField: change('delete', '/schema/entity-types/{entity_code}/fields/{field_code}', undefined, FIELD),
  renameOption: change('post', '/schema/entity-types/{entity_code}/fields/{field_code}/rename-option', B.OptionRename, FIELD),

  createStatus: change('post', '/schema/statuses', B.StatusBody),
  updateStatus: change('patch', '/schema/statuses/{code}', B.StatusPatch, CODE),
  deleteStatus: change('delete', '/schema/statuses/{code}', undefined, { code: 'path.code', entityCode: 'query.entity_code' }),
  renameStatus: change('post', '/schema/statuses/{code}/rename', B.CodeRename, CODE),

  createStep: change('post', '/schema/steps', B.StepBody),
  reorderSteps: change('post', '/schema/steps/reorder', B.StepReorder),
  updateStep: change('patch', '/schema/steps/{code}', B.StepPatch, CODE),
  deleteStep: change('delete', '/schema/steps/{code}', undefined, CODE),
  renameStep: change('post', '/schema/steps/{code}/rename', B.CodeRename, CODE),

  createWorkflow: change('post', '/schema/workflows', B.WorkflowBody),
  deleteWorkflow: change('post', '/schema/workflows/delete', B.WorkflowBody, { code: 'body.code' }),
  setTransitions: change('post', '/schema/transitions', B.ObjectTransitionsBody, { entityCode: 'body.entity_type' }),
  setTaskTemplates: change('put', '/schema/task-templates', B.TaskTemplatesBody),

  createPriority: change('post', '/schema/priorities', B.PriorityBody),
  updatePriority: change('patch', '/schema/priorities/{code}', B.PriorityPatch, CODE),
  deletePriority: change('delete', '/schema/priorities/{code}', undefined, CODE),
  renamePriority: change('post', '/schema/priorities/{code}/rename', B.CodeRename, CODE),

  getBranding: read('/branding'),
  setBranding: change('put', '/branding', B.BrandingBody),
  getApplications: read('/schema/applications', 'catalog'),
  setApplications: change('put', '/schema/applications', B.ApplicationsBody),
  getTools: read('/schema/tools'),
  setTools: change('put', '/schema/tools', B.ToolsBody),
  getActiveTools: read('/schema/tools/active', 'catalog'),
} as const satisfies Record<string, SchemaOperation>;

export type SchemaOperationName = keyof typeof SCHEMA_OPERATIONS;

/** The operations that change the definitions (Admin only). */
export type SchemaChangeName = { [K in SchemaOperationName]: (typeof SCHEMA_OPERATIONS)[K]['role'] extends null ? never : K }[SchemaOperationName];

/** The reads (any authenticated user). */
export type SchemaReadName = Exclude<SchemaOperationName, SchemaChangeName>;

/** The operations' names, in table order. */
export const SCHEMA_OPERATION_NAMES = Object.keys(SCHEMA_OPERATIONS) as SchemaOperationName[];

/** True when `name` is a change (its role is set). */
export function isSchemaChange(name: SchemaOperationName): name is SchemaChangeName {
  return SCHEMA_OPERATIONS[name].role !== null;
}
