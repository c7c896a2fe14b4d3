/**
 * The bodies of the schema routes (docs/api-notes.md, "Schema"), checked again here: the
 * gateway validates them first, but the service never trusts a caller's JSON. A problem is a
 * 422 naming its place, all problems at once.
 */
import { AppError, DEFINITION_CODE_PATTERN, ENTITY_TYPE_CODE_PATTERN, FIELD_CODE_PATTERN, ROLES, type Problem } from '@reelbase/lib-platform';
import { z } from 'zod';
import { CODE, ENTITY_CODE, FIELD_CODE, FIELD_TYPES, STATUS_STATES } from './schema.types.js';

const entityCode = z.string().regex(ENTITY_CODE, `must match ${ENTITY_TYPE_CODE_PATTERN}`);
const fieldCode = z.string().regex(FIELD_CODE, `must match ${FIELD_CODE_PATTERN}`);
const code = z.string().regex(CODE, `must match ${DEFINITION_CODE_PATTERN}`);
const name = z.string().min(1).max(200);
const color = z.string().max(64).nullable();
const strMap = z.record(z.string(), z.string());

const option = z.strictObject({ code, label: z.string().max(200), color: color.optional() });

export const EntityTypeBody = z.strictObject({
  code: entityCode,
  name,
  description: z.string().max(10_000).optional(),
  project_scoped: z.boolean().optional(),
});
export const RenameBody = z.strictObject({ name });
export const CodeRenameBody = z.strictObject({ new_code: z.string().min(1).max(64) });

export const FieldBody = z.strictObject({
  code: fieldCode,
  name,
  type: z.enum(FIELD_TYPES),
  options: z.array(option).max(1000).optional(),
  link_types: z.array(entityCode).max(100).optional(),
  required: z.boolean().optional(),
  default: z.unknown().optional(),
  description: z.string().max(10_000).optional(),
});
export const FieldPatch = z.strictObject({
  name: name.optional(),
  description: z.string().max(10_000).optional(),
  required: z.boolean().optional(),
  default: z.unknown().optional(),
  options: z.array(option).max(1000).optional(),
});
export const OptionRenameBody = z.strictObject({ from: code, to: code });

export const StatusBody = z.strictObject({
  code,
  name,
  color: color.optional(),
  icon: z.string().max(200).nullable().optional(),
  state: z.enum(STATUS_STATES),
  entity_types: z.array(entityCode).max(1000).optional(),
});
export const StatusPatch = StatusBody.partial().omit({ code: true });

export const StepBody = z.strictObject({ code, name, color: color.optional(), entity_types: z.array(entityCode).max(1000).optional() });
export const StepPatch = z.strictObject({ name: name.optional(), color: color.optional(), entity_types: z.array(entityCode).max(1000).optional() });
export const StepReorder = z.strictObject({ codes: z.array(z.string()).max(10_000) });

export const PriorityBody = z.strictObject({ code, name, color: color.optional(), rank: z.number().int() });
export const PriorityPatch = z.strictObject({ name: name.optional(), color: color.optional(), rank: z.number().int().optional() });

export const WorkflowBody = z.strictObject({
  code,
  name: name.optional(),
  entity_type: entityCode.optional(),
  field: fieldCode.optional(),
  schemas: z
    .array(z.strictObject({ option: code, steps: z.array(code).max(1000) }))
    .max(1000)
    .optional(),
});

export const TransitionsBody = z.strictObject({
  entity_type: entityCode,
  transitions: z.array(z.strictObject({ from: code, to: z.array(code).max(1000), roles: z.array(z.enum(ROLES)).max(ROLES.length).optional() })).max(10_000),
});

export const TaskTemplatesBody = z.strictObject({
  templates: z
    .array(
      z.strictObject({
        code,
        name,
        entity_type: entityCode,
        tasks: z.array(z.strictObject({ name, step: code, estimate_minutes: z.number().int().min(0).nullable().optional() })).max(1000),
      }),
    )
    .max(1000),
});

export const BrandingBody = z.strictObject({
  studio_name: z.string().max(200).nullable().optional(),
  logo_media_key: z.string().max(1024).nullable().optional(),
  primary_color: color.optional(),
  accent_color: color.optional(),
});

export const ApplicationsBody = z.strictObject({
  applications: z
    .array(
      z.strictObject({
        code,
        label: z.string().max(200),
        group: z.string().max(200).nullable().optional(),
        version: z.string().max(200).nullable().optional(),
        icon: z.string().max(1024).nullable().optional(),
        executables: z.strictObject({ linux: z.string().optional(), windows: z.string().optional(), darwin: z.string().optional() }).optional(),
        args: z.array(z.string()).max(1000).optional(),
        environment: strMap.optional(),
      }),
    )
    .max(1000),
});

export const ToolsBody = z.strictObject({
  tools: z
    .array(
      z.strictObject({
        tool: code,
        label: z.string().max(200),
        icon: z.string().max(1024).nullable().optional(),
        variants: z
          .array(z.strictObject({ version: z.string().min(1).max(200), args: z.array(z.string()).max(1000).optional(), environment: strMap.optional() }))
          .max(1000),
      }),
    )
    .max(1000),
});

/** Problems of a zod failure, located under `body`. */
function problemsOf(error: z.ZodError): Problem[] {
  const out: Problem[] = [];
  for (const issue of error.issues) {
    const loc = ['body', ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      out.push({ loc, msg: 'Field required', type: 'missing' });
    } else {
      out.push({ loc, msg: issue.message, type: issue.code === 'invalid_type' ? `${issue.expected}_type` : 'value_error' });
    }
  }
  return out;
}

/** Decodes `json` (empty = `{}`) and checks it against `schema`; 422 with every problem otherwise. */
export function parseBody<S extends z.ZodType>(schema: S, json: string): z.infer<S> {
  let raw: unknown;
  try {
    raw = json.trim() === '' ? {} : JSON.parse(json);
  } catch {
    throw AppError.invalid([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]);
  }
  const res = schema.safeParse(raw);
  if (!res.success) throw AppError.invalid(problemsOf(res.error));
  return res.data;
}
