/**
 * The definitions the schema service owns, as one in-memory document (docs/architecture.md,
 * "The schema service"). The store keeps one row per definition; the rules in
 * schema.editor.ts turn one document into the next.
 */

import { ENTITY_TYPE_CODE, type FieldType, type StatusState } from '@reelbase/lib-platform';

// The codes and field types are kept once, in lib-platform (policy/schema-code.policy.ts), for the
// gateway's body schemas and this service alike.
export {
  DEFINITION_CODE as CODE,
  FIELD_CODE,
  FIELD_TYPES,
  LINK_FIELD_TYPES as LINK_TYPES,
  OPTION_FIELD_TYPES as OPTION_TYPES,
  RESERVED_FIELD_CODES as RECORD_COLUMNS,
  STATUS_STATES,
} from '@reelbase/lib-platform';
export type { FieldType, StatusState } from '@reelbase/lib-platform';

/** Entity type codes: `Shot`, `AssetBuild`. */
export const ENTITY_CODE = ENTITY_TYPE_CODE;

export interface OptionDef {
  code: string;
  label: string;
  color: string | null;
  /** Options of a built-in field the platform itself relies on (User.role, ...). */
  builtin: boolean;
}

export interface FieldDef {
  code: string;
  name: string;
  type: FieldType;
  description: string;
  options: OptionDef[];
  /** Allowed target types of a link; empty = any type. */
  link_types: string[];
  required: boolean;
  /** Applied on create when the key is absent; null = none. */
  default: unknown;
  builtin: boolean;
}

export interface EntityTypeDef {
  code: string;
  name: string;
  description: string;
  builtin: boolean;
  project_scoped: boolean;
  fields: FieldDef[];
}

export interface StatusDef {
  code: string;
  name: string;
  color: string | null;
  icon: string | null;
  state: StatusState;
  /** Types the status applies to; empty = every type. */
  entity_types: string[];
}

export interface StepDef {
  code: string;
  name: string;
  color: string | null;
  entity_types: string[];
}

export interface PriorityDef {
  code: string;
  name: string;
  color: string | null;
  rank: number;
}

export interface WorkflowSchemaDef {
  option: string;
  steps: string[];
}

export interface WorkflowDef {
  code: string;
  name: string;
  entity_type: string | null;
  field: string | null;
  schemas: WorkflowSchemaDef[];
}

export interface TransitionDef {
  from: string;
  to: string[];
  /** Roles allowed to make it; empty = every role. */
  roles: string[];
}

export interface TemplateTaskDef {
  name: string;
  step: string;
  estimate_minutes: number | null;
}

export interface TaskTemplateDef {
  code: string;
  name: string;
  entity_type: string;
  tasks: TemplateTaskDef[];
}

export interface BrandingDef {
  studio_name: string | null;
  logo_media_key: string | null;
  primary_color: string | null;
  accent_color: string | null;
}

export interface ApplicationDef {
  code: string;
  label: string;
  group: string | null;
  version: string | null;
  icon: string | null;
  executables: { linux?: string; windows?: string; darwin?: string };
  args: string[];
  environment: Record<string, string>;
}

export interface ToolVariantDef {
  version: string;
  args: string[];
  environment: Record<string, string>;
}

export interface ToolDef {
  tool: string;
  label: string;
  icon: string | null;
  variants: ToolVariantDef[];
}

/** Every definition at one version. */
export interface SchemaDoc {
  version: number;
  entity_types: EntityTypeDef[];
  statuses: StatusDef[];
  /** In their order. */
  steps: StepDef[];
  priorities: PriorityDef[];
  workflows: WorkflowDef[];
  /** Per entity type; a type without an entry (or with []) allows every change. */
  transitions: Record<string, TransitionDef[]>;
  task_templates: TaskTemplateDef[];
  branding: BrandingDef;
  applications: ApplicationDef[];
  /** null until an Admin sets the catalog: the built-in defaults apply. */
  tools: ToolDef[] | null;
}

/** An empty document (before seeding). */
export function emptyDoc(): SchemaDoc {
  return {
    version: 0,
    entity_types: [],
    statuses: [],
    steps: [],
    priorities: [],
    workflows: [],
    transitions: {},
    task_templates: [],
    branding: { studio_name: null, logo_media_key: null, primary_color: null, accent_color: null },
    applications: [],
    tools: null,
  };
}

/** The usage of codes by records, retired ones included (GET /schema/usage). */
export interface SchemaUsage {
  entity_types: Record<string, number>;
  /** `<Type>.<field>`. */
  fields: Record<string, number>;
  statuses: Record<string, number>;
  steps: Record<string, number>;
  priorities: Record<string, number>;
  /** `<Type>.<field>.<option>`, when records reports it. */
  options?: Record<string, number>;
  /** `<Type>.<status>`, when records reports it. */
  status_types?: Record<string, number>;
}
