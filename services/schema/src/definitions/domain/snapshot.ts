/**
 * The snapshot the records service validates against (docs/architecture.md, "The schema
 * service"): what a record write needs of each definition, at one version.
 */
import type { SchemaDoc } from './schema.types.js';

/** The snapshot of `doc`, JSON-safe. */
export function snapshotOf(doc: SchemaDoc): Record<string, unknown> {
  return {
    version: doc.version,
    entity_types: doc.entity_types.map((t) => ({
      code: t.code,
      project_scoped: t.project_scoped,
      builtin: t.builtin,
      fields: t.fields.map((f) => ({
        code: f.code,
        type: f.type,
        options: f.options.map((o) => ({ code: o.code })),
        link_types: f.link_types,
        required: f.required,
        default: f.default,
      })),
    })),
    statuses: doc.statuses.map((s) => ({ code: s.code, state: s.state, entity_types: s.entity_types })),
    steps: doc.steps.map((s) => ({ code: s.code, entity_types: s.entity_types })),
    priorities: doc.priorities.map((p) => ({ code: p.code, rank: p.rank })),
    transitions: doc.transitions,
    task_templates: doc.task_templates,
  };
}

/** The answer of GET /schema. */
export function schemaView(doc: SchemaDoc): Record<string, unknown> {
  return {
    version: doc.version,
    entity_types: doc.entity_types,
    statuses: doc.statuses,
    steps: doc.steps,
    priorities: doc.priorities,
    workflows: doc.workflows,
    transitions: doc.transitions,
    task_templates: doc.task_templates,
  };
}
