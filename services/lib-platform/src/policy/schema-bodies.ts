/**
 * The bodies of the schema operations (docs/api-notes.md, "Schema"), written once: the gateway
 * validates requests with them and builds their OpenAPI text from them, and the schema service
 * checks the same bodies again (it never trusts a caller's JSON). SCHEMA_OPERATIONS names each
 * operation's body. Every body is strict (an unknown key is a 422); whether a code exists, is
 * built in or is still used is the schema service's to decide (404, 409). Schemas with a meta `id`
 * become `components.schemas` entries of the OpenAPI document.
 */
import { z } from 'zod';
import { ROLES } from '../context.js';
import { ENTITY_TYPE_CODE } from './entity-type.policy.js';
import {
  DEFINITION_CODE,
  DEFINITION_CODE_PATTERN,
  FIELD_CODE,
  FIELD_CODE_PATTERN,
  FIELD_TYPES,
  LINK_FIELD_TYPES,
  OPTION_FIELD_TYPES,
  RESERVED_FIELD_CODES,
  STATUS_STATES,
  type FieldType,
} from './schema-code.policy.js';

/**
 * The OpenAPI component names of the bodies: kept here rather than registered with `.meta()`, so that a
 * second copy of this module (a test importing it from source beside the built package) never puts a
 * second schema under the same name in zod's global registry. The gateway registers them once
 * ({@link registerBodyNames}) before it builds its document.
 */
const NAMES = new Map<z.ZodType, { id: string; description?: string }>();

function named<T extends z.ZodType>(schema: T, meta: { id: string; description?: string }): T {
  NAMES.set(schema, meta);
  return schema;
}

/** Gives every named body its component name (and description) in `registry` (zod's global one). */
export function registerBodyNames(registry = z.globalRegistry): void {
  for (const [schema, meta] of NAMES) registry.add(schema, { ...registry.get(schema), ...meta });
}

/** An entity type code such as `Shot` or a custom object code. */
export const EntityTypeCode = z.string().regex(ENTITY_TYPE_CODE);

export const Role = z.enum(ROLES);

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

/** A field code; a record column (`status`, `project_id`, ...) is refused. */
export const FieldCode = z
  .string()
  .regex(FIELD_CODE)
  .refine((s) => !RESERVED_FIELD_CODES.has(s), { message: 'A field code cannot be the name of a record column' })
  .describe(`Matches \`${FIELD_CODE_PATTERN}\`; not a record column (${[...RESERVED_FIELD_CODES].join(', ')}).`);

/** A status, step, priority, option, workflow, template, application or tool code. */
export const Code = z.string().regex(DEFINITION_CODE).describe(`Matches \`${DEFINITION_CODE_PATTERN}\`.`);

const Name = z.string().trim().min(1).max(255);
const Description = z.string().max(10_000);
const Color = z
  .string()
  .regex(/^#[0-9A-Fa-f]{6}$/)
  .describe('`#RRGGBB`.');
const Icon = z.string().min(1).max(255);
export const FieldTypeEnum = z.enum(FIELD_TYPES).describe('One of the 14 field types.');
export const StateEnum = z.enum(STATUS_STATES);
const EntityTypes = z.array(EntityTypeCode).max(1000).describe('Entity type codes; empty or absent: every type.');
const Args = z.array(z.string().max(4096)).max(256);
const Environment = z.record(z.string().min(1).max(255), z.string().max(32_768));

/** 422 entries for every item of `items` whose `key` repeats an earlier one. */
function unique<T>(key: (item: T) => unknown, what: string, field: string | null = 'code') {
  return (items: T[], ctx: z.core.$RefinementCtx<T[]>) => {
    const seen = new Set<unknown>();
    items.forEach((item, i) => {
      const k = key(item);
      if (seen.has(k)) ctx.addIssue({ code: 'custom', message: `Duplicate ${what} ${JSON.stringify(k)}`, path: field === null ? [i] : [i, field], input: k });
      seen.add(k);
    });
  };
}

// ---------------------------------------------------------------------------------------------
// Entity types and fields
// ---------------------------------------------------------------------------------------------

export const EntityTypeBody = named(
  z.strictObject({
    code: EntityTypeCode.describe('An upper-case letter, then letters and digits (`^[A-Z][A-Za-z0-9]{0,63}$`).'),
    name: Name,
    description: Description.optional(),
    project_scoped: z.boolean().default(true).describe('Records of the type belong to a project (`project_id` required). Defaults to true.'),
  }),
  { id: 'EntityTypeBody', description: 'Body of POST /schema/entity-types.' },
);

export const RenameBody = named(z.strictObject({ name: Name }), { id: 'RenameBody', description: "An entity type's new display name." });

export const EntityCodeRename = named(z.strictObject({ new_code: EntityTypeCode }), {
  id: 'EntityCodeRename',
  description: "A custom entity type's new code; cascades to every record, link and Preset.",
});

export const CodeRename = named(z.strictObject({ new_code: Code }), {
  id: 'CodeRename',
  description: "A status, step or priority code's new code; cascades to every record and definition that stores it.",
});

export const OptionBody = named(z.strictObject({ code: Code, label: Name, color: Color.nullable().optional() }), {
  id: 'FieldOption',
  description: 'One option of an enum or multi_enum field.',
});

const Options = z
  .array(OptionBody)
  .max(1000)
  .superRefine(unique((o) => o.code, 'option code'));

/**
 * Checks a default that the field's own definition can decide: the JSON type for scalar types
 * and option membership for enums. Link targets (whether a record exists) are the service's.
 */
function checkDefault(type: FieldType, value: unknown, options: readonly { code: string }[] | undefined, ctx: z.core.$RefinementCtx<unknown>): void {
  if (value === undefined || value === null) return;
  const bad = (message: string) => ctx.addIssue({ code: 'custom', message, path: ['default'], input: value });
  const codes = new Set((options ?? []).map((o) => o.code));
  switch (type) {
    case 'text':
    case 'url':
    case 'color':
    case 'date':
    case 'datetime':
      if (typeof value !== 'string') bad(`The default of a ${type} field must be a string`);
      return;
    case 'integer':
      if (!Number.isSafeInteger(value)) bad('The default of an integer field must be an integer');
      return;
    case 'float':
      if (typeof value !== 'number' || !Number.isFinite(value)) bad('The default of a float field must be a number');
      return;
    case 'boolean':
      if (typeof value !== 'boolean') bad('The default of a boolean field must be true or false');
      return;
    case 'enum':
      if (typeof value !== 'string' || !codes.has(value)) bad('The default of an enum field must be one of its option codes');
      return;
    case 'multi_enum':
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || !codes.has(v)))
        bad('The default of a multi_enum field must be a list of its option codes');
      return;
    default:
      // link, multi_link, json, duration: the schema service checks them.
      return;
  }
}

export const FieldBody = named(
  z
    .strictObject({
      code: FieldCode,
      name: Name,
      type: FieldTypeEnum,
      options: Options.optional().describe('enum and multi_enum only: the options, in display order.'),
      link_types: z.array(EntityTypeCode).max(1000).optional().describe('link and multi_link only: the types a link may point to; absent or empty: any type.'),
      required: z.boolean().optional().describe('A record of the type must have a value (defaults to false).'),
      default: z.unknown().optional().describe("Applied on create when the key is absent; must be a value of the field's type."),
      description: Description.optional(),
    })
    .superRefine((f, ctx) => {
      if (f.options !== undefined && !OPTION_FIELD_TYPES.has(f.type)) {
        ctx.addIssue({ code: 'custom', message: 'Only enum and multi_enum fields have options', path: ['options'], input: f.options });
      }
      if (f.link_types !== undefined && !LINK_FIELD_TYPES.has(f.type)) {
        ctx.addIssue({ code: 'custom', message: 'Only link and multi_link fields have link_types', path: ['link_types'], input: f.link_types });
      }
      checkDefault(f.type, f.default, f.options, ctx);
    }),
  { id: 'FieldBody', description: 'Body of POST /schema/entity-types/{entity_code}/fields.' },
);

export const FieldPatch = named(
  z.strictObject({
    name: Name.optional(),
    description: Description.optional(),
    required: z.boolean().optional(),
    default: z.unknown().optional().describe("null removes the default; a value must be of the field's type."),
    options: Options.optional().describe('The full new list (add, relabel, reorder); dropping an option still in use is 409 `code_in_use`.'),
  }),
  { id: 'FieldPatch', description: 'Body of PATCH /schema/entity-types/{entity_code}/fields/{field_code}: every key optional; the type cannot change.' },
);

export const OptionRename = named(
  z.strictObject({ from: Code, to: Code }).refine((b) => b.from !== b.to, { message: '"to" must differ from "from"', path: ['to'] }),
  { id: 'OptionRename', description: "An enum option's new code; cascades to every record and workflow schema." },
);

// ---------------------------------------------------------------------------------------------
// Statuses, steps, priorities
// ---------------------------------------------------------------------------------------------

const statusShape = {
  name: Name,
  color: Color.nullable().optional(),
  icon: Icon.nullable().optional(),
  state: StateEnum,
  entity_types: EntityTypes.optional(),
};

export const StatusBody = named(z.strictObject({ code: Code, ...statusShape }), { id: 'StatusBody', description: 'Body of POST /schema/statuses.' });

export const StatusPatch = named(z.strictObject(statusShape).partial(), {
  id: 'StatusPatch',
  description: 'Body of PATCH /schema/statuses/{code}: every key optional (the code changes through rename).',
});

const stepShape = { name: Name, color: Color.nullable().optional(), entity_types: EntityTypes.optional() };

export const StepBody = named(z.strictObject({ code: Code, ...stepShape }), {
  id: 'StepBody',
  description: 'Body of POST /schema/steps; a new step comes last.',
});

export const StepPatch = named(z.strictObject(stepShape).partial(), {
  id: 'StepPatch',
  description: 'Body of PATCH /schema/steps/{code}: every key optional (the code changes through rename).',
});

export const StepReorder = named(
  z.strictObject({
    codes: z
      .array(Code)
      .min(1)
      .max(10_000)
      .superRefine(unique((c) => c, 'step code', null))
      .describe('Every step code once, in the new order (anything else is a 422).'),
  }),
  { id: 'StepReorder' },
);

const priorityShape = {
  name: Name,
  color: Color.nullable().optional(),
  rank: z.number().int().min(-1_000_000).max(1_000_000).describe('Higher ranks are more urgent.'),
};

export const PriorityBody = named(z.strictObject({ code: Code, ...priorityShape }), { id: 'PriorityBody', description: 'Body of POST /schema/priorities.' });

export const PriorityPatch = named(z.strictObject(priorityShape).partial(), {
  id: 'PriorityPatch',
  description: 'Body of PATCH /schema/priorities/{code}: every key optional (the code changes through rename).',
});

// ---------------------------------------------------------------------------------------------
// Workflows, transitions, task templates
// ---------------------------------------------------------------------------------------------

export const WorkflowBody = named(
  z
    .strictObject({
      code: Code,
      name: Name.optional(),
      entity_type: EntityTypeCode.optional(),
      field: FieldCode.optional().describe('An enum field of entity_type whose options select a workflow schema.'),
      schemas: z
        .array(z.strictObject({ option: Code.describe('An option code of `field`.'), steps: z.array(Code).max(1000).describe('Step codes, in order.') }))
        .max(1000)
        .superRefine(unique((s) => s.option, 'option', 'option'))
        .optional(),
    })
    .superRefine((w, ctx) => {
      if (w.field !== undefined && w.entity_type === undefined) {
        ctx.addIssue({ code: 'custom', message: 'A workflow with a field needs its entity_type', path: ['entity_type'] });
      }
      if (w.schemas !== undefined && w.schemas.length > 0 && w.field === undefined) {
        ctx.addIssue({ code: 'custom', message: 'Workflow schemas need the enum field whose options they follow', path: ['field'] });
      }
    }),
  { id: 'WorkflowBody', description: 'Body of POST /schema/workflows; POST /schema/workflows/delete needs only `code`.' },
);

export const TransitionRule = named(
  z.strictObject({
    from: Code.describe('A status code.'),
    to: z.array(Code).max(1000).describe('The status codes a record may move to from `from`.'),
    roles: z.array(Role).max(5).optional().describe('Roles allowed to make these changes; absent: every role.'),
  }),
  { id: 'TransitionRule' },
);

export const ObjectTransitionsBody = named(
  z.strictObject({
    entity_type: EntityTypeCode,
    transitions: z.array(TransitionRule).max(10_000).describe("Replaces the type's transitions; empty: every status change is allowed."),
  }),
  {
    id: 'ObjectTransitionsBody',
    description:
      "Body of POST /schema/transitions. With transitions set for a type, a status change not listed for the caller's role " +
      '(Admins included) is 409 `transition_not_allowed`; creating a record with a status is not a transition.',
  },
);

export const TaskTemplate = named(
  z.strictObject({
    code: Code,
    name: Name,
    entity_type: EntityTypeCode.describe('Shot, Asset or another type with Tasks.'),
    tasks: z
      .array(
        z.strictObject({
          name: Name,
          step: Code.describe('A step code.'),
          estimate_minutes: z.number().int().min(0).max(10_000_000).nullable().optional(),
        }),
      )
      .max(1000),
  }),
  { id: 'TaskTemplate' },
);

export const TaskTemplatesBody = named(
  z.strictObject({
    templates: z
      .array(TaskTemplate)
      .max(10_000)
      .superRefine(unique((t) => t.code, 'template code')),
  }),
  {
    id: 'TaskTemplatesBody',
    description: 'Body of PUT /schema/task-templates: replaces the whole list. `"task_template": code` in a Shot or Asset create makes its tasks.',
  },
);

// ---------------------------------------------------------------------------------------------
// Branding and catalogs
// ---------------------------------------------------------------------------------------------

export const BrandingBody = named(
  z.strictObject({
    studio_name: z.string().max(255).nullable().optional(),
    logo_media_key: z.string().max(1024).nullable().optional(),
    primary_color: Color.nullable().optional(),
    accent_color: Color.nullable().optional(),
  }),
  { id: 'BrandingBody', description: 'Body of PUT /branding: replaces the branding (an absent key is unset).' },
);

const Executable = z.string().min(1).max(4096);

export const Application = named(
  z.strictObject({
    code: Code,
    label: Name,
    group: z.string().max(255).nullable().optional(),
    version: z.string().max(255).nullable().optional(),
    icon: Icon.nullable().optional(),
    executables: z.strictObject({ linux: Executable.optional(), windows: Executable.optional(), darwin: Executable.optional() }).optional(),
    args: Args.optional(),
    environment: Environment.optional(),
  }),
  { id: 'Application', description: 'One launcher of the studio catalog.' },
);

export const ApplicationsBody = named(
  z.strictObject({
    applications: z
      .array(Application)
      .max(10_000)
      .superRefine(unique((a) => a.code, 'application code')),
  }),
  { id: 'ApplicationsBody', description: 'Body of PUT /schema/applications: replaces the launcher catalog.' },
);

/** A version string of a tool (`5.4.2`, `2025.1`); it follows the `/` of a selector. */
const ToolVersion = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[^/\s]+$/)
  .describe('No `/` or spaces: a selector is `<tool>/<version>`.');

export const ToolVariant = named(z.strictObject({ version: ToolVersion, args: Args.optional(), environment: Environment.optional() }), { id: 'ToolVariant' });

export const Tool = named(
  z.strictObject({
    tool: Code,
    label: Name,
    icon: Icon.nullable().optional(),
    variants: z
      .array(ToolVariant)
      .max(1000)
      .superRefine(unique((v) => v.version, 'version', 'version')),
  }),
  { id: 'Tool', description: 'A renderer or plugin with its versions.' },
);

export const ToolsBody = named(
  z.strictObject({
    tools: z
      .array(Tool)
      .max(10_000)
      .superRefine(unique((t) => t.tool, 'tool', 'tool')),
  }),
  { id: 'ToolsBody', description: 'Body of PUT /schema/tools: replaces the tools catalog.' },
);
