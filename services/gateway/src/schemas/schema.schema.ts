/**
 * Schema and catalog routes' schemas (docs/api-notes.md, Schema): path and query parameters and the
 * answers. The bodies of the definition changes are lib-platform's `schemaBodies`, shared with the
 * schema service and named by SCHEMA_OPERATIONS.
 */
import { FIELD_CODE, schemaBodies } from '@reelbase/lib-platform';
import { z } from 'zod';
import { EntityTypeCode, Role, Uuid } from './common.schema.js';

const { Application, Code, FieldTypeEnum, StateEnum, Tool } = schemaBodies;

// The bodies' component names in the OpenAPI document.
schemaBodies.registerBodyNames();

/** A field code as a path parameter: only its shape (a column name simply does not exist: 404). */
const FieldCodeParam = z.string().regex(FIELD_CODE);

// ---------------------------------------------------------------------------------------------
// Path and query parameters
// ---------------------------------------------------------------------------------------------

export const EntityCodePath = z.strictObject({ entity_code: EntityTypeCode });
export const EntityCodeRenamePath = z.strictObject({ code: EntityTypeCode });
export const FieldPath = z.strictObject({ entity_code: EntityTypeCode, field_code: FieldCodeParam });
export const CodePath = z.strictObject({ code: Code });

export const StatusDeleteQuery = z.object({
  entity_code: EntityTypeCode.optional().describe("Removes the status from this type's scope only."),
});

export const ApplicationsQuery = z.object({
  project_id: Uuid.optional().describe("Filters to the project's applications (`data.overrides`); absent: the whole studio catalog."),
  step: Code.optional().describe("With project_id: the project's per-step list wins over its project-wide list."),
});

export const ActiveToolsQuery = z.object({
  project_id: Uuid.describe('The project whose `data.overrides.tools` are resolved.'),
  step: Code.optional().describe("An explicit `overrides.toolsByStep` list for this step (even an empty one) filters the project's selectors."),
});

export const BrandingOut = z
  .object({
    studio_name: z.string().nullable(),
    logo_media_key: z.string().nullable(),
    primary_color: z.string().nullable(),
    accent_color: z.string().nullable(),
  })
  .meta({ id: 'Branding' });

export const ApplicationsOut = z.object({ applications: z.array(Application) }).meta({
  id: 'Applications',
  description:
    "Without project_id: the whole catalog. With project_id: the project's `overrides.applications` (a project without " +
    'one inherits the whole catalog); with step too, `overrides.applicationsByStep[step]` wins when present.',
});

export const ToolsOut = z
  .object({ tools: z.array(Tool) })
  .meta({ id: 'Tools', description: 'The tools catalog; built-in defaults (Arnold, Redshift, RenderMan, V-Ray, Yeti, mGear, ...) when never set.' });

export const ActiveTool = z
  .object({
    tool: z.string(),
    label: z.string(),
    icon: z.string().nullable(),
    version: z.string(),
    args: z.array(z.string()),
    environment: z.record(z.string(), z.string()),
  })
  .meta({ id: 'ActiveTool', description: 'One tool variant attached to a project.' });

export const ActiveToolsOut = z.object({ tools: z.array(ActiveTool) }).meta({
  id: 'ActiveTools',
  description:
    "The variants named by the project's `overrides.tools` selectors (`<tool>/<version>`), in that order. With step, an " +
    'explicit `overrides.toolsByStep[step]` list (even an empty one) keeps only the selectors it names; an absent key keeps all. ' +
    'Selectors naming a tool or version not in the catalog are skipped.',
});

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

export const FieldOut = z
  .object({
    code: z.string(),
    name: z.string(),
    type: FieldTypeEnum,
    options: z.array(z.object({ code: z.string(), label: z.string(), color: z.string().nullable().optional() })),
    link_types: z.array(z.string()),
    required: z.boolean(),
    default: z.unknown(),
    description: z.string().nullable().optional(),
    builtin: z.boolean(),
  })
  .meta({ id: 'Field' });

export const EntityTypeOut = z
  .object({
    code: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    builtin: z.boolean(),
    project_scoped: z.boolean(),
    fields: z.array(FieldOut),
  })
  .meta({ id: 'EntityType' });

export const StatusOut = z
  .object({
    code: z.string(),
    name: z.string(),
    color: z.string().nullable(),
    icon: z.string().nullable(),
    state: StateEnum,
    entity_types: z.array(z.string()).describe('Empty: every type.'),
  })
  .meta({ id: 'Status' });

export const StepOut = z
  .object({ code: z.string(), name: z.string(), color: z.string().nullable(), entity_types: z.array(z.string()).describe('Empty: every type.') })
  .meta({ id: 'Step' });

export const StepsOut = z.object({ items: z.array(StepOut).describe('Every step, in the new order.') }).meta({ id: 'StepList' });

export const PriorityOut = z.object({ code: z.string(), name: z.string(), color: z.string().nullable(), rank: z.number().int() }).meta({ id: 'Priority' });

export const WorkflowOut = z
  .object({
    code: z.string(),
    name: z.string(),
    entity_type: z.string().nullable(),
    field: z.string().nullable(),
    schemas: z.array(z.object({ option: z.string(), steps: z.array(z.string()) })),
  })
  .meta({ id: 'Workflow' });

export const TransitionRuleOut = z
  .object({ from: z.string(), to: z.array(z.string()), roles: z.array(Role).describe('Empty: every role.') })
  .meta({ id: 'TransitionRuleOut' });

export const TransitionsOut = z
  .object({ entity_type: z.string(), transitions: z.array(TransitionRuleOut) })
  .meta({ id: 'ObjectTransitions', description: "A type's transitions as stored (empty: every status change is allowed)." });

export const TaskTemplateOut = z
  .object({
    code: z.string(),
    name: z.string(),
    entity_type: z.string(),
    tasks: z.array(z.object({ name: z.string(), step: z.string(), estimate_minutes: z.number().int().nullable() })),
  })
  .meta({ id: 'TaskTemplateOut' });

export const TaskTemplatesOut = z.object({ templates: z.array(TaskTemplateOut) }).meta({ id: 'TaskTemplates' });

export const RenameOut = z
  .object({
    kind: z.enum(['entity_type', 'status', 'step', 'priority', 'option']),
    entity_type: z.string().nullable().describe('The type of a renamed option (and the old code of a renamed type); null otherwise.'),
    field: z.string().nullable().describe('The field of a renamed option; null otherwise.'),
    old_code: z.string(),
    new_code: z.string(),
    rewritten: z.number().int().describe('How many records (retired ones included) the cascade rewrote.'),
  })
  .meta({ id: 'RenameResult', description: 'A rename as applied: every record holding the old code now holds the new one.' });

export const DeletedOut = z.object({ code: z.string(), deleted: z.literal(true) }).meta({ id: 'DefinitionDeleted' });

export const StatusDeleteOut = z
  .union([DeletedOut, StatusOut])
  .meta({ id: 'StatusDeleteResult', description: 'The status deleted, or (with entity_code) the status as now scoped.' });

export const SchemaOut = z
  .object({
    entity_types: z.array(EntityTypeOut),
    statuses: z.array(StatusOut),
    steps: z.array(StepOut).describe('In order.'),
    priorities: z.array(PriorityOut).describe('By rank.'),
    workflows: z.array(WorkflowOut),
    transitions: z.record(z.string(), z.array(TransitionRuleOut)).describe('Per entity type, its transition rules.'),
    task_templates: z.array(TaskTemplateOut),
  })
  .meta({ id: 'Schema', description: 'The whole run-time data model.' });

export const UsageOut = z
  .object({
    entity_types: z.record(z.string(), z.number().int()),
    fields: z.record(z.string(), z.number().int()).describe('Keyed `<Type>.<field>`.'),
    statuses: z.record(z.string(), z.number().int()),
    steps: z.record(z.string(), z.number().int()),
    priorities: z.record(z.string(), z.number().int()),
  })
  .meta({ id: 'SchemaUsage', description: 'How many records (retired ones included) use each code.' });
