/**
 * The schema operations, listed once (docs/architecture.md, "The schema service"): for each, its
 * RPC of reelbase.schema.v1.SchemaService (the key, as ts-proto names it), its HTTP route, where
 * the RPC's path codes come from, and who may call it. The gateway builds its routes from this
 * table (adding only their OpenAPI text and body schemas), the schema service its gRPC handlers
 * and its changes (adding each change's body check and editor function); both are keyed by it,
 * so the compiler refuses either side when it misses an operation.
 */
import type { Role } from '../context.js';

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
}

const read = (path: string, request: SchemaOperation['request'] = 'json') => ({ method: 'get', path, role: null, request }) as const;
const change = (method: SchemaOperation['method'], path: string, codes?: SchemaOperation['codes']) =>
  ({ method, path, role: 'Admin', request: 'json', ...(codes ? { codes } : {}) }) as const;

const ENTITY = { entityCode: 'path.entity_code' } as const;
const FIELD = { entityCode: 'path.entity_code', subCode: 'path.field_code' } as const;
const CODE = { code: 'path.code' } as const;

/** Every schema operation, in the order of the routes (and of the OpenAPI document). */
export const SCHEMA_OPERATIONS = {
  getSchema: read('/schema'),
  getUsage: read('/schema/usage'),

  createEntityType: change('post', '/schema/entity-types'),
  renameEntityType: change('patch', '/schema/entity-types/{entity_code}', ENTITY),
  deleteEntityType: change('delete', '/schema/entity-types/{entity_code}', ENTITY),
  renameEntityTypeCode: change('post', '/schema/entity-types/{code}/rename-code', CODE),
  createField: change('post', '/schema/entity-types/{entity_code}/fields', ENTITY),
  updateField: change('patch', '/schema/entity-types/{entity_code}/fields/{field_code}', FIELD),
  deleteField: change('delete', '/schema/entity-types/{entity_code}/fields/{field_code}', FIELD),
  renameOption: change('post', '/schema/entity-types/{entity_code}/fields/{field_code}/rename-option', FIELD),

  createStatus: change('post', '/schema/statuses'),
  updateStatus: change('patch', '/schema/statuses/{code}', CODE),
  deleteStatus: change('delete', '/schema/statuses/{code}', { code: 'path.code', entityCode: 'query.entity_code' }),
  renameStatus: change('post', '/schema/statuses/{code}/rename', CODE),

  createStep: change('post', '/schema/steps'),
  reorderSteps: change('post', '/schema/steps/reorder'),
  updateStep: change('patch', '/schema/steps/{code}', CODE),
  deleteStep: change('delete', '/schema/steps/{code}', CODE),
  renameStep: change('post', '/schema/steps/{code}/rename', CODE),

  createWorkflow: change('post', '/schema/workflows'),
  deleteWorkflow: change('post', '/schema/workflows/delete', { code: 'body.code' }),
  setTransitions: change('post', '/schema/transitions', { entityCode: 'body.entity_type' }),
  setTaskTemplates: change('put', '/schema/task-templates'),

  createPriority: change('post', '/schema/priorities'),
  updatePriority: change('patch', '/schema/priorities/{code}', CODE),
  deletePriority: change('delete', '/schema/priorities/{code}', CODE),
  renamePriority: change('post', '/schema/priorities/{code}/rename', CODE),

  getBranding: read('/branding'),
  setBranding: change('put', '/branding'),
  getApplications: read('/schema/applications', 'catalog'),
  setApplications: change('put', '/schema/applications'),
  getTools: read('/schema/tools'),
  setTools: change('put', '/schema/tools'),
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
