/**
 * The rules of actions (docs/api-notes.md, "Actions"), as pure functions:
 * - which actions a caller sees for a record or selection: one launch action per application the
 *   launcher catalog allows here (the catalog's narrowing rules live in domain/catalog.ts), only
 *   for exactly one record; then the studio's custom actions whose `entity_types` has the type
 *   and whose `roles` (absent: every role) has the caller's role;
 * - what a launch request carries: the application variant, the active tools, the environment
 *   and arguments merged in order, and the context (project, entity, task).
 */
import type { ActiveTool } from '../../definitions/domain/catalog.js';
import type { ConfigDigest } from '../../kernel/domain/config.events.js';
import type { ApplicationDef } from '../../definitions/domain/schema.types.js';

/** The prefix of every launch action's id (`launch:<application code>`). */
export const LAUNCH_PREFIX = 'launch:';

/** How long a launch request stays valid. */
export const LAUNCH_TTL_MS = 10 * 60 * 1000;

/** One custom action of the studio list (`secret` in clear; never answered). */
export interface CustomAction {
  id: string;
  label: string;
  url: string;
  entity_types: string[];
  /** null: every role. */
  roles: string[] | null;
  icon: string | null;
  secret: string | null;
}

/** One listed action (absent keys do not apply to its kind). */
export interface ActionItem {
  id: string;
  kind: 'launch' | 'webhook';
  label: string;
  app?: string;
  variant?: string;
  icon?: string;
  group?: string;
  order: number;
}

/** A custom action as Admins read it: `has_secret` instead of the secret. */
export function customActionView(a: CustomAction): Omit<CustomAction, 'secret'> & { has_secret: boolean } {
  return { id: a.id, label: a.label, url: a.url, entity_types: a.entity_types, roles: a.roles, icon: a.icon, has_secret: a.secret !== null };
}

/**
 * A custom action as its `Schema.Actions` event shows it to every role (docs/api-notes.md,
 * "Events"): what the actions list shows users anyway (id, label, icon, types, roles), then
 * `has_url`, `has_secret` and the `digest` of the whole action (its URL and secret included), never
 * the URL or the secret.
 */
export function customActionEventView(a: CustomAction, digest: ConfigDigest): Record<string, unknown> {
  return {
    id: a.id,
    label: a.label,
    entity_types: a.entity_types,
    roles: a.roles,
    icon: a.icon,
    has_url: a.url !== '',
    has_secret: a.secret !== null,
    digest: digest(a),
  };
}

/** The step a Task names (`data.step`), when it names one. */
export function stepOf(record: ActionRecord): string | undefined {
  if (record.entityType !== 'Task') return undefined;
  const step = record.data.step;
  return typeof step === 'string' && step !== '' ? step : undefined;
}

/** The launch action of one application entry. */
export function launchItem(app: ApplicationDef): Omit<ActionItem, 'order'> {
  return {
    id: `${LAUNCH_PREFIX}${app.code}`,
    kind: 'launch',
    label: app.label,
    app: app.group ?? app.code,
    ...(app.version !== null ? { variant: app.version } : {}),
    ...(app.icon !== null ? { icon: app.icon } : {}),
    ...(app.group !== null ? { group: app.group } : {}),
  };
}

/** True when `action` is offered for records of `entityType` to a caller with `role`. */
export function customActionApplies(action: CustomAction, entityType: string, role: string): boolean {
  return action.entity_types.includes(entityType) && (action.roles === null || action.roles.includes(role));
}

export interface ListInput {
  /** The applications the catalog allows for the project (and the Task's step). */
  applications: readonly ApplicationDef[];
  custom: readonly CustomAction[];
  entityType: string;
  /** How many records were named. */
  recordCount: number;
  role: string;
}

/** The actions of a record or selection, launch actions first, each with its `order`. */
export function listActions(input: ListInput): ActionItem[] {
  const launch = input.recordCount === 1 ? input.applications.map(launchItem) : [];
  const custom = input.custom
    .filter((a) => customActionApplies(a, input.entityType, input.role))
    .map((a): Omit<ActionItem, 'order'> => ({
      id: a.id,
      kind: 'webhook',
      label: a.label,
      ...(a.icon !== null ? { icon: a.icon } : {}),
    }));
  return [...launch, ...custom].map((item, order) => ({ ...item, order }));
}

/**
 * Environments merged in order: a key set by several sources keeps the last value, except keys
 * ending in `PATH`, whose values are joined with `:` in order.
 */
export function mergeEnvironment(sources: ReadonlyArray<Readonly<Record<string, string>>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const env of sources) {
    for (const [key, value] of Object.entries(env)) {
      out[key] = key.endsWith('PATH') && Object.hasOwn(out, key) ? `${out[key]}:${value}` : value;
    }
  }
  return out;
}

/** A record as the actions read it. */
export interface ActionRecord {
  id: string;
  entityType: string;
  projectId: string | null;
  data: Record<string, unknown>;
}

/** The context a launched application opens in. */
export interface LaunchContext {
  project: { id: string; code: string | null; name: string | null };
  entity: { type: string; id: string; code?: string | null; name?: string | null };
  task?: { id: string; name: string | null; step: string | null };
}

/** What `GET /actions/launch/{token}` answers. */
export interface LaunchPayload {
  app: string;
  variant: string | null;
  label: string;
  executables?: { linux?: string; windows?: string; darwin?: string };
  args: string[];
  environment: Record<string, string>;
  tools: Array<{ tool: string; label: string; version: string }>;
  context: LaunchContext;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A record as the context names it: its `code` when it has one, else its `name`. */
export function entityRef(record: ActionRecord): LaunchContext['entity'] {
  const code = str(record.data.code);
  return code !== null ? { type: record.entityType, id: record.id, code } : { type: record.entityType, id: record.id, name: str(record.data.name) };
}

/** The `{type, id}` a Task's `data.entity` links to, when it is a link. */
export function linkedEntity(task: ActionRecord): { type: string; id: string } | null {
  const e = task.data.entity;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return null;
  const { type, id } = e as Record<string, unknown>;
  return typeof type === 'string' && typeof id === 'string' ? { type, id } : null;
}

/**
 * The context of a launch on `record`: with a Task, `task` is the Task and `entity` is what its
 * `data.entity` links to (`linked`, or the link alone when that record is gone; the Task itself
 * when it links nothing); otherwise `entity` is the record.
 */
export function launchContext(project: ActionRecord, record: ActionRecord, linked: ActionRecord | null): LaunchContext {
  const projectRef = { id: project.id, code: str(project.data.code), name: str(project.data.name) };
  if (record.entityType !== 'Task') return { project: projectRef, entity: entityRef(record) };
  const link = linkedEntity(record);
  const entity = link === null ? entityRef(record) : linked !== null ? entityRef(linked) : { type: link.type, id: link.id };
  return { project: projectRef, entity, task: { id: record.id, name: str(record.data.name), step: stepOf(record) ?? null } };
}

/** The launch payload of `app` with the active `tools` (in their order) in `context`. */
export function launchPayload(app: ApplicationDef, tools: readonly ActiveTool[], context: LaunchContext): LaunchPayload {
  const executables = Object.fromEntries(Object.entries(app.executables ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return {
    app: app.group ?? app.code,
    variant: app.version,
    label: app.label,
    ...(Object.keys(executables).length > 0 ? { executables } : {}),
    args: [...app.args, ...tools.flatMap((t) => t.args)],
    environment: mergeEnvironment([app.environment, ...tools.map((t) => t.environment)]),
    tools: tools.map((t) => ({ tool: t.tool, label: t.label, version: t.version })),
    context,
  };
}
