/**
 * The actions' REST JSON (docs/api-notes.md, "Actions") ↔ their typed protobuf messages
 * (`reelbase.schema.v1.ActionsService`, actions.proto), both ways, written once for the gateway
 * (requests out, answers in) and the schema service (requests in, answers out).
 */
import type { actionsv1 } from '@reelbase/proto';
import { int, isJsonObject, objectAt, orNull, put, str, stringMap, strings, type JsonObject } from './json.values.js';

export function actionItemToProto(a: JsonObject): actionsv1.ActionItem {
  return {
    id: str(a.id) ?? '',
    kind: str(a.kind) ?? '',
    label: str(a.label) ?? '',
    app: str(a.app),
    variant: str(a.variant),
    icon: str(a.icon),
    group: str(a.group),
    order: int(a.order) ?? 0,
  };
}

export function actionItemFromProto(a: actionsv1.ActionItem): JsonObject {
  const out: JsonObject = { id: a.id, kind: a.kind, label: a.label };
  put(out, 'app', a.app);
  put(out, 'variant', a.variant);
  put(out, 'icon', a.icon);
  put(out, 'group', a.group);
  out.order = a.order;
  return out;
}

/** An execute's answer: a launch request or a queued webhook delivery. */
export function executeResultToProto(r: JsonObject): actionsv1.ExecuteActionResponse['result'] {
  if (r.kind === 'launch') return { $case: 'launch', value: { token: str(r.token) ?? '', expiresAt: str(r.expires_at) ?? '' } };
  return { $case: 'webhook', value: { deliveryId: str(r.delivery_id) ?? '' } };
}

export function executeResultFromProto(r: NonNullable<actionsv1.ExecuteActionResponse['result']>): JsonObject {
  if (r.$case === 'launch') return { kind: 'launch', token: r.value.token, expires_at: r.value.expiresAt };
  return { kind: 'webhook', delivery_id: r.value.deliveryId };
}

function entityToProto(e: JsonObject): actionsv1.LaunchEntity {
  const label: actionsv1.LaunchEntity['label'] =
    typeof e.code === 'string'
      ? { $case: 'code', value: e.code }
      : typeof e.name === 'string'
        ? { $case: 'name', value: e.name }
        : 'name' in e || 'code' in e
          ? { $case: 'noName', value: true }
          : undefined;
  return { type: str(e.type) ?? '', id: str(e.id) ?? '', label };
}

function entityFromProto(e: actionsv1.LaunchEntity | undefined): JsonObject {
  const out: JsonObject = { type: e?.type ?? '', id: e?.id ?? '' };
  const l = e?.label;
  if (l?.$case === 'code') out.code = l.value;
  else if (l?.$case === 'name') out.name = l.value;
  else if (l?.$case === 'noName') out.name = null;
  return out;
}

/** What `GET /actions/launch/{token}` answers. */
export function launchPayloadToProto(p: JsonObject): actionsv1.LaunchPayload {
  const c = objectAt(p.context);
  const project = objectAt(c.project);
  const task = isJsonObject(c.task) ? c.task : undefined;
  return {
    app: str(p.app) ?? '',
    variant: str(p.variant),
    label: str(p.label) ?? '',
    executables: stringMap(p.executables),
    args: strings(p.args),
    environment: stringMap(p.environment),
    tools: (Array.isArray(p.tools) ? p.tools : []).map((t) => {
      const o = objectAt(t);
      return { tool: str(o.tool) ?? '', label: str(o.label) ?? '', version: str(o.version) ?? '' };
    }),
    context: {
      project: { id: str(project.id) ?? '', code: str(project.code), name: str(project.name) },
      entity: entityToProto(objectAt(c.entity)),
      task: task ? { id: str(task.id) ?? '', name: str(task.name), step: str(task.step) } : undefined,
    },
  };
}

export function launchPayloadFromProto(p: actionsv1.LaunchPayload): JsonObject {
  const out: JsonObject = { app: p.app, variant: orNull(p.variant), label: p.label };
  if (Object.keys(p.executables).length > 0) out.executables = { ...p.executables };
  out.args = [...p.args];
  out.environment = { ...p.environment };
  out.tools = p.tools.map((t) => ({ tool: t.tool, label: t.label, version: t.version }));
  const c = p.context;
  const context: JsonObject = {
    project: { id: c?.project?.id ?? '', code: orNull(c?.project?.code), name: orNull(c?.project?.name) },
    entity: entityFromProto(c?.entity),
  };
  if (c?.task) context.task = { id: c.task.id, name: orNull(c.task.name), step: orNull(c.task.step) };
  out.context = context;
  return out;
}

/** A custom action as Admins read it (`has_secret` instead of the secret). */
export function customActionViewToProto(a: JsonObject): actionsv1.CustomActionView {
  return {
    id: str(a.id) ?? '',
    label: str(a.label) ?? '',
    url: str(a.url) ?? '',
    entityTypes: strings(a.entity_types),
    roles: strings(a.roles),
    icon: str(a.icon),
    hasSecret: a.has_secret === true,
  };
}

export function customActionViewFromProto(a: actionsv1.CustomActionView): JsonObject {
  return {
    id: a.id,
    label: a.label,
    url: a.url,
    entity_types: [...a.entityTypes],
    roles: a.roles.length > 0 ? [...a.roles] : null,
    icon: orNull(a.icon),
    has_secret: a.hasSecret,
  };
}

/** The body of PUT /actions/custom. */
export function customActionListToProto(body: JsonObject): actionsv1.CustomActionList {
  return {
    actions: (Array.isArray(body.actions) ? body.actions : []).map((raw): actionsv1.CustomActionInput => {
      const a = objectAt(raw);
      return {
        id: str(a.id) ?? '',
        label: str(a.label) ?? '',
        url: str(a.url) ?? '',
        entityTypes: strings(a.entity_types),
        roles: strings(a.roles),
        secretChange:
          a.secret === undefined ? undefined : a.secret === null ? { $case: 'noSecret', value: true } : { $case: 'secret', value: str(a.secret) ?? '' },
        icon: str(a.icon),
      };
    }),
  };
}

export function customActionListFromProto(list: actionsv1.CustomActionList): JsonObject {
  return {
    actions: list.actions.map((a) => {
      const out: JsonObject = { id: a.id, label: a.label, url: a.url, entity_types: [...a.entityTypes] };
      if (a.roles.length > 0) out.roles = [...a.roles];
      if (a.secretChange) out.secret = a.secretChange.$case === 'secret' ? a.secretChange.value : null;
      return put(out, 'icon', a.icon);
    }),
  };
}
