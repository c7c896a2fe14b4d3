/**
 * The actions' use cases (docs/architecture.md, "Actions"): list what a caller can run on a
 * record or selection, execute one (a one-time launch request, or a webhook action queued with
 * the notifier), take a launch request back, and the studio's custom action list (Admin). Every
 * execute is an `Action` event (create), written through the schema service's outbox.
 *
 * The records named are read here, through records, so every rule about them is in one place:
 * a missing project or record (or one of an unknown type) is 404; a record of another type or of
 * another project is 422 at `["body","entity_ids",i]`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ACTION_REF_CHARS, AppError, newId, type CallContext, type Problem, type StreamEvent } from '@reelbase/lib-platform';
import { DEFAULT_TOOLS, resolveActiveTools, resolveApplications, type ProjectOverrides } from '../../definitions/domain/catalog.js';
import type { BodyInput } from '../../kernel/domain/bodies.js';
import type { ConfigDigest } from '../../kernel/domain/config.events.js';
import { definitionId } from '../../definitions/domain/schema.service.js';
import type { SchemaDoc } from '../../definitions/domain/schema.types.js';
import { checkedSelection, parseCustomActions, type SelectionInput } from './actions.body.js';
import type { ActionDeliveriesPort, ActionRecord, ActionRecordsPort, ActionStore } from './actions.ports.js';
import {
  LAUNCH_PREFIX,
  LAUNCH_TTL_MS,
  customActionEventView,
  customActionView,
  launchContext,
  launchPayload,
  linkedEntity,
  listActions,
  stepOf,
  type ActionItem,
  type CustomAction,
  type LaunchPayload,
} from './actions.rules.js';

export interface ActionsServiceDeps {
  store: ActionStore;
  records: ActionRecordsPort;
  deliveries: ActionDeliveriesPort;
  /** The current schema document (the launcher and tools catalogs). */
  schema: () => Promise<SchemaDoc>;
  /** The digest `Schema.Actions` events show instead of URLs and secrets (config.events.ts). */
  digest: ConfigDigest;
}

/** The calling user (login token or API key): their id and role. */
function userOf(ctx: CallContext): { id: string; role: string } {
  const p = ctx.principal;
  if (!p) throw new AppError('unauthenticated', 'no principal on the call');
  if ((p.authKind !== 'token' && p.authKind !== 'api_key') || !p.userId) throw new AppError('forbidden', 'actions are for signed-in users');
  return { id: p.userId.toLowerCase(), role: p.role };
}

function adminOf(ctx: CallContext): string {
  const user = userOf(ctx);
  if (user.role !== 'Admin') throw new AppError('forbidden', 'the custom action list is for Admins');
  return user.id;
}

/** The sha256 of a launch token, as stored. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function overridesOf(project: ActionRecord): ProjectOverrides {
  const o = project.data.overrides;
  return typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as ProjectOverrides) : {};
}

/** The project and the records of a selection, checked. */
interface Resolved {
  selection: SelectionInput;
  project: ActionRecord;
  records: ActionRecord[];
}

export class ActionsService {
  constructor(private readonly deps: ActionsServiceDeps) {}

  /**
   * Reads the project and the records: 404 for a missing project or record, 422 for a record of
   * another type or project (every such record at once).
   */
  private async resolve(selection: SelectionInput, ctx: CallContext): Promise<Resolved> {
    const project = await this.deps.records.find('Project', selection.projectId, ctx);
    if (!project) throw AppError.notFound(`project ${selection.projectId} does not exist`);
    const found = new Map((await this.deps.records.many(selection.entityType, selection.entityIds, ctx)).map((r) => [r.id, r]));
    const missing = selection.entityIds.filter((id) => !found.has(id));
    const problems: Problem[] = [];
    if (missing.length > 0) {
      // Records of another type answer 422, not 404: find what the missing ids are.
      const doc = await this.deps.schema();
      const others = new Set<string>();
      for (const type of doc.entity_types.map((t) => t.code).filter((c) => c !== selection.entityType)) {
        const left = missing.filter((id) => !others.has(id));
        if (left.length === 0) break;
        for (const r of await this.deps.records.many(type, left, ctx)) others.add(r.id);
      }
      selection.entityIds.forEach((id, i) => {
        if (others.has(id)) problems.push({ loc: ['body', 'entity_ids', i], msg: `record ${id} is not a ${selection.entityType}`, type: 'value_error' });
      });
    }
    selection.entityIds.forEach((id, i) => {
      const r = found.get(id);
      if (!r) return;
      // A Project is its own project; a record of a type without projects belongs to none.
      const inProject = r.entityType === 'Project' ? r.id === project.id : r.projectId === null || r.projectId === project.id;
      if (!inProject) problems.push({ loc: ['body', 'entity_ids', i], msg: `record ${id} belongs to another project`, type: 'value_error' });
    });
    if (problems.length) throw AppError.invalid(problems);
    const gone = missing[0];
    if (gone !== undefined) throw AppError.notFound(`${selection.entityType} ${gone} does not exist`);
    return { selection, project, records: selection.entityIds.map((id) => found.get(id)!) };
  }

  /** The actions the caller sees here, with what a launch needs. */
  private async actionsOf(r: Resolved, role: string): Promise<{ items: ActionItem[]; doc: SchemaDoc; custom: CustomAction[] }> {
    const [doc, custom] = await Promise.all([this.deps.schema(), this.deps.store.customActions()]);
    const one = r.records.length === 1 ? r.records[0]! : undefined;
    const applications = one ? resolveApplications(doc.applications, overridesOf(r.project), stepOf(one)) : [];
    const items = listActions({ applications, custom, entityType: r.selection.entityType, recordCount: r.records.length, role });
    return { items, doc, custom };
  }

  async list(input: SelectionInput, ctx: CallContext): Promise<{ items: ActionItem[] }> {
    const user = userOf(ctx);
    const resolved = await this.resolve(checkedSelection(input), ctx);
    return { items: (await this.actionsOf(resolved, user.role)).items };
  }

  async execute(
    input: SelectionInput & { actionId: string },
    ctx: CallContext,
  ): Promise<{ kind: 'launch'; token: string; expires_at: string } | { kind: 'webhook'; delivery_id: string }> {
    const user = userOf(ctx);
    const extra: Problem[] = [];
    if (input.actionId === '' || input.actionId.length > ACTION_REF_CHARS)
      extra.push({ loc: ['body', 'action_id'], msg: 'an action id from the list', type: 'value_error' });
    if (input.actionId.startsWith(LAUNCH_PREFIX) && input.entityIds.length > 1) {
      extra.push({ loc: ['body', 'entity_ids'], msg: 'a launch action runs on exactly one record', type: 'value_error' });
    }
    const resolved = await this.resolve(checkedSelection(input, extra), ctx);
    const { items, doc, custom } = await this.actionsOf(resolved, user.role);
    const item = items.find((a) => a.id === input.actionId);
    if (!item) throw AppError.notFound(`action ${input.actionId} is not available here`);
    const { selection, project, records } = resolved;
    const id = newId();
    const event: StreamEvent = {
      event_id: newId(),
      entity_type: 'Action',
      entity_id: id,
      project_id: project.id,
      action: 'create',
      actor: user.id,
      changes: { action_id: item.id, kind: item.kind, entity_type: selection.entityType, entity_ids: selection.entityIds },
      occurred_at: new Date().toISOString(),
    };

    if (item.kind === 'launch') {
      const record = records[0]!;
      const app = doc.applications.find((a) => `${LAUNCH_PREFIX}${a.code}` === item.id)!;
      const step = stepOf(record);
      const tools = resolveActiveTools(doc.tools ?? DEFAULT_TOOLS, overridesOf(project), step);
      const link = record.entityType === 'Task' ? linkedEntity(record) : null;
      const linked = link ? await this.deps.records.find(link.type, link.id, ctx) : null;
      const payload = launchPayload(app, tools, launchContext(project, record, linked));
      const token = randomBytes(32).toString('base64url');
      const expiresAt = await this.deps.store.createLaunch({ id, tokenHash: tokenHash(token), userId: user.id, payload, ttlMs: LAUNCH_TTL_MS }, event);
      return { kind: 'launch', token, expires_at: expiresAt };
    }

    const action = custom.find((a) => a.id === item.id)!;
    const me = await this.deps.records.find('User', user.id, ctx);
    const body = JSON.stringify({
      action_id: action.id,
      user: { id: user.id, name: typeof me?.data.name === 'string' ? me.data.name : null },
      project_id: project.id,
      entity_type: selection.entityType,
      entity_ids: selection.entityIds,
      requested_at: event.occurred_at,
    });
    const deliveryId = await this.deps.deliveries.enqueue({ deliveryId: id, actionId: action.id, url: action.url, secret: action.secret, body }, ctx);
    await this.deps.store.recordEvent(event);
    return { kind: 'webhook', delivery_id: deliveryId };
  }

  /** The caller's launch request of `token`, taken once. */
  async takeLaunch(token: string, ctx: CallContext): Promise<LaunchPayload> {
    const user = userOf(ctx);
    const payload = token.length > 0 && token.length <= ACTION_REF_CHARS ? await this.deps.store.takeLaunch(tokenHash(token), user.id) : null;
    if (!payload) throw AppError.notFound('no such launch request');
    return payload;
  }

  async getCustomActions(ctx: CallContext): Promise<{ actions: ReturnType<typeof customActionView>[] }> {
    adminOf(ctx);
    return { actions: (await this.deps.store.customActions()).map(customActionView) };
  }

  /**
   * Replaces the studio's custom actions (Admin). A `secret` left out keeps the one the same id
   * had; `null` removes it. Written with a `Schema.Actions` event that shows no URL and no secret
   * (every role reads the log; the list is Admin-only), only `has_url`, `has_secret` and a digest.
   */
  async putCustomActions(body: BodyInput, ctx: CallContext): Promise<{ actions: ReturnType<typeof customActionView>[] }> {
    const actor = adminOf(ctx);
    const input = parseCustomActions(body);
    const stored = await this.deps.store.replaceCustomActions(
      input.actions.map((a) => ({
        id: a.id,
        label: a.label,
        url: a.url,
        entity_types: [...new Set(a.entity_types)],
        roles: a.roles ? [...new Set(a.roles)] : null,
        icon: a.icon ?? null,
        secret: a.secret,
      })),
      (list) => ({
        event_id: newId(),
        entity_type: 'Schema.Actions',
        entity_id: definitionId('Schema.Actions', 'studio'),
        project_id: null,
        action: 'update',
        actor,
        changes: { actions: list.map((a) => customActionEventView(a, this.deps.digest)) },
        occurred_at: new Date().toISOString(),
      }),
    );
    return { actions: stored.map(customActionView) };
  }
}
