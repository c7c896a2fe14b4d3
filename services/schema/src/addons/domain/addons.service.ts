/**
 * Pipeline addons and their layered settings (docs/api-notes.md, "Addons"; docs/architecture.md,
 * "The schema service", "Addons"). A version is registered once with its settings schema and
 * defaults and never changes; the studio and each project override its settings in layers; a
 * project may pin a version. Every change of one addon runs in one transaction holding that
 * addon's lock, with its event (`Addon` for the registry, `AddonSettings` for overrides and pins)
 * in schema's outbox.
 */
import { createHash } from 'node:crypto';
import { AppError, canonicalJson, isUuid, newId, type CallContext, type Problem, type StreamEvent } from '@reelbase/lib-platform';
import semver from 'semver';
import { v5 as uuidv5 } from 'uuid';
import { z } from 'zod';
import { bodyBytes, decodeBody, parseBody, type BodyInput } from '../../kernel/domain/bodies.js';
import type { AddonHead, AddonStore, AddonVersion, ProjectDirectory } from './addons.ports.js';
import { ADDON_LIMITS, ADDON_NAME } from './addon.limits.js';
import { resolveSettings, type Layer } from './settings.merge.js';
import { isObject, jsonBytes, settingsSchemaProblems, type JsonObject } from './settings.schema.js';
import { ValidatorCache, type SettingsValidator } from './validators.js';

/** Namespace of the addons' event entity ids (UUID v5 of `addon:<name>` and `addon-settings:<name>:<scope>`). */
const ADDON_NAMESPACE = '3b0f7c1e-9d2a-4f61-8c3e-5a7d2e9b1f40';

export const addonEntityId = (name: string): string => uuidv5(`addon:${name}`, ADDON_NAMESPACE);
export const addonSettingsEntityId = (name: string, projectId: string | null): string =>
  uuidv5(`addon-settings:${name}:${projectId ?? 'studio'}`, ADDON_NAMESPACE);

const RegisterBody = z.strictObject({
  title: z.string().min(1).max(ADDON_LIMITS.titleChars),
  settings_schema: z.record(z.string(), z.unknown()),
  defaults: z.record(z.string(), z.unknown()).optional(),
});
const ProductionBody = z.strictObject({ production_version: z.string().min(1).max(ADDON_LIMITS.versionChars) });
const PinBody = z.strictObject({ version: z.string().min(1).max(ADDON_LIMITS.versionChars).nullable() });

/** An addon as clients see it. */
export interface AddonItem {
  name: string;
  title: string;
  versions: string[];
  production_version: string;
}

export interface AddonsServiceDeps {
  store: AddonStore;
  projects: ProjectDirectory;
  /** Compiled validators (one per service process). */
  validators?: ValidatorCache;
}

const ascending = (versions: string[]): string[] => [...versions].sort(semver.compare);

/** The client form of an addon: its versions ascending, the production version's title. */
export function addonItem(head: AddonHead): AddonItem {
  const title = head.versions.find((v) => v.version === head.production_version)?.title ?? head.name;
  return { name: head.name, title, versions: ascending(head.versions.map((v) => v.version)), production_version: head.production_version };
}

const versionOut = (v: AddonVersion) => ({
  name: v.name,
  version: v.version,
  title: v.title,
  settings_schema: v.settings_schema,
  defaults: v.defaults,
  created_at: v.created_at,
});

function actorOf(ctx: CallContext): string | null {
  const id = ctx.principal?.userId;
  return isUuid(id) ? id.toLowerCase() : null;
}

function requireRole(ctx: CallContext, roles: readonly string[], what: string): void {
  const role = ctx.principal?.role;
  if (role === undefined || !roles.includes(role)) throw new AppError('forbidden', `${what} is for ${roles.join(' and ')} only`);
}

const ADMIN = ['Admin'] as const;
const PROJECT_WRITERS = ['Admin', 'Supervisor'] as const;

/** A version string: semver, in its own normal spelling (`1.2.0`, not `v1.2.0` or ` 1.2.0`). */
function versionProblem(version: string, loc: (string | number)[]): Problem | null {
  if (version.length > ADDON_LIMITS.versionChars || semver.valid(version) !== version) {
    return { loc, msg: 'Input should be a semantic version (MAJOR.MINOR.PATCH[-pre][+build])', type: 'semver' };
  }
  return null;
}

function nameProblem(name: string): Problem | null {
  return ADDON_NAME.test(name) ? null : { loc: ['path', 'name'], msg: `String should match pattern '${ADDON_NAME.source}'`, type: 'string_pattern_mismatch' };
}

function throwIfAny(problems: (Problem | null)[]): void {
  const list = problems.filter((p): p is Problem => p !== null);
  if (list.length > 0) throw AppError.invalid(list);
}

function projectIdOf(projectId: string | undefined, required: boolean): string | null {
  if (projectId === undefined || projectId === '') {
    if (required) throw AppError.invalid([{ loc: ['query', 'project_id'], msg: 'Field required', type: 'missing' }]);
    return null;
  }
  if (!isUuid(projectId)) throw AppError.invalid([{ loc: ['query', 'project_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
  return projectId.toLowerCase();
}

const notFound = (name: string): AppError => AppError.notFound(`addon ${name} does not exist`);
const noVersion = (name: string, version: string): AppError => AppError.notFound(`addon ${name} has no version ${version}`);

export class AddonsService {
  readonly validators: ValidatorCache;

  constructor(private readonly deps: AddonsServiceDeps) {
    this.validators = deps.validators ?? new ValidatorCache();
  }

  private validatorOf(v: AddonVersion): SettingsValidator {
    return this.validators.get(v.name, v.version, v.digest, v.settings_schema as JsonObject);
  }

  private event(
    entityType: 'Addon' | 'AddonSettings',
    entityId: string,
    projectId: string | null,
    action: 'create' | 'update' | 'delete',
    changes: Record<string, unknown>,
    ctx: CallContext,
  ): StreamEvent {
    return {
      event_id: newId(),
      entity_type: entityType,
      entity_id: entityId,
      project_id: projectId,
      action,
      actor: actorOf(ctx),
      changes,
      occurred_at: new Date().toISOString(),
    };
  }

  private async requireProject(projectId: string): Promise<void> {
    if (!(await this.deps.projects.projectExists(projectId))) throw AppError.notFound(`project ${projectId} does not exist`);
  }

  // ─── registry ──────────────────────────────────────────────────────────────────────────

  /**
   * `PUT /addons/{name}/versions/{version}`: registers a version. The same body again changes
   * nothing; another body for a registered version is 409 `duplicate_code`.
   */
  async registerVersion(ctx: CallContext, name: string, version: string, input: BodyInput): Promise<{ version: unknown; created: boolean }> {
    requireRole(ctx, ADMIN, 'registering an addon version');
    throwIfAny([nameProblem(name), versionProblem(version, ['path', 'version'])]);
    const body = parseBody(RegisterBody, input);
    const schema = body.settings_schema as JsonObject;
    const defaults = (body.defaults ?? {}) as JsonObject;
    const problems = settingsSchemaProblems(schema, ['body', 'settings_schema']);
    const defaultsBytes = jsonBytes(defaults);
    if (defaultsBytes > ADDON_LIMITS.defaultsBytes) {
      problems.push({
        loc: ['body', 'defaults'],
        msg: `defaults have at most ${ADDON_LIMITS.defaultsBytes} bytes of JSON (these have ${defaultsBytes})`,
        type: 'too_large',
      });
    }
    if (problems.length > 0) throw AppError.invalid(problems);
    const digest = createHash('sha256')
      .update(canonicalJson({ title: body.title, settings_schema: schema, defaults }))
      .digest('hex');
    const validator = this.validators.get(name, version, digest, schema);
    const wrong = validator.full(defaults, ['body', 'defaults']);
    if (wrong.length > 0) throw AppError.invalid(wrong);

    return this.deps.store.change(name, async (tx) => {
      const existing = await tx.version(version);
      if (existing) {
        if (existing.digest !== digest)
          throw AppError.conflict('duplicate_code', `addon ${name} version ${version} is registered with another body; versions never change`);
        return { version: versionOut(existing), created: false };
      }
      const before = await tx.head();
      const stored = await tx.insertVersion({ name, version, title: body.title, settings_schema: schema, defaults, digest });
      const head = (await tx.head())!;
      await tx.append(this.event('Addon', addonEntityId(name), null, before ? 'update' : 'create', { ...addonItem(head), registered_version: version }, ctx));
      return { version: versionOut(stored), created: true };
    });
  }

  async list(): Promise<{ items: AddonItem[] }> {
    const heads = await this.deps.store.list();
    return { items: heads.map(addonItem).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
  }

  async get(name: string): Promise<AddonItem> {
    throwIfAny([nameProblem(name)]);
    const head = await this.deps.store.head(name);
    if (!head) throw notFound(name);
    return addonItem(head);
  }

  async getVersion(name: string, version: string): Promise<unknown> {
    throwIfAny([nameProblem(name), versionProblem(version, ['path', 'version'])]);
    const v = await this.deps.store.version(name, version);
    if (!v) {
      if (!(await this.deps.store.head(name))) throw notFound(name);
      throw noVersion(name, version);
    }
    return versionOut(v);
  }

  /** `PATCH /addons/{name}`: the production version (one that is registered: 422 otherwise). */
  async setProduction(ctx: CallContext, name: string, input: BodyInput): Promise<AddonItem> {
    requireRole(ctx, ADMIN, 'choosing the production version');
    throwIfAny([nameProblem(name)]);
    const body = parseBody(ProductionBody, input);
    throwIfAny([versionProblem(body.production_version, ['body', 'production_version'])]);
    return this.deps.store.change(name, async (tx) => {
      const head = await tx.head();
      if (!head) throw notFound(name);
      if (!head.versions.some((v) => v.version === body.production_version)) {
        throw AppError.invalid([{ loc: ['body', 'production_version'], msg: `addon ${name} has no version ${body.production_version}`, type: 'value_error' }]);
      }
      if (head.production_version === body.production_version) return addonItem(head);
      await tx.setProduction(body.production_version);
      const after = addonItem((await tx.head())!);
      await tx.append(this.event('Addon', addonEntityId(name), null, 'update', { production_version: after.production_version, title: after.title }, ctx));
      return after;
    });
  }

  /** `DELETE /addons/{name}/versions/{version}`: 409 `code_in_use` while production or pinned. */
  async deleteVersion(ctx: CallContext, name: string, version: string): Promise<unknown> {
    requireRole(ctx, ADMIN, 'deleting an addon version');
    throwIfAny([nameProblem(name), versionProblem(version, ['path', 'version'])]);
    return this.deps.store.change(name, async (tx) => {
      const head = await tx.head();
      if (!head) throw notFound(name);
      if (!head.versions.some((v) => v.version === version)) throw noVersion(name, version);
      const pins = await tx.pinCount(version);
      if (head.production_version === version) {
        throw AppError.conflict('code_in_use', `addon ${name} version ${version} is the production version; choose another first`, { usage: pins });
      }
      if (pins > 0) {
        throw AppError.conflict('code_in_use', `addon ${name} version ${version} is pinned by ${pins} project${pins === 1 ? '' : 's'}`, { usage: pins });
      }
      await tx.deleteVersion(version);
      const after = addonItem((await tx.head())!);
      await tx.append(this.event('Addon', addonEntityId(name), null, 'update', { versions: after.versions, deleted_version: version }, ctx));
      return { name, version, deleted: true };
    });
  }

  // ─── settings ──────────────────────────────────────────────────────────────────────────

  /**
   * `PUT /addons/{name}/settings[?project_id=]`: replaces the studio layer (Admin) or a project's
   * (Admin, Supervisor), checked as a partial object against the version it applies to.
   */
  async putSettings(ctx: CallContext, name: string, rawProjectId: string | undefined, input: BodyInput): Promise<unknown> {
    const projectId = projectIdOf(rawProjectId, false);
    requireRole(ctx, projectId === null ? ADMIN : PROJECT_WRITERS, projectId === null ? 'changing studio addon settings' : 'changing project addon settings');
    throwIfAny([nameProblem(name)]);
    if (bodyBytes(input) > ADDON_LIMITS.overridesBytes) {
      throw new AppError('too_large', `addon settings have at most ${ADDON_LIMITS.overridesBytes} bytes of JSON`);
    }
    const overrides = decodeBody(input);
    if (!isObject(overrides)) throw AppError.invalid([{ loc: ['body'], msg: 'Input should be a valid dictionary or object', type: 'dict_type' }]);
    if (projectId !== null) await this.requireProject(projectId);
    return this.deps.store.change(name, async (tx) => {
      const head = await tx.head();
      if (!head) throw notFound(name);
      const pinned = projectId === null ? null : ((await tx.pin(projectId)) ?? null);
      const target = (await tx.version(pinned ?? head.production_version))!;
      const wrong = this.validatorOf(target).partial(overrides, ['body']);
      if (wrong.length > 0) throw AppError.invalid(wrong);
      const before = await tx.overrides(projectId);
      const answer = { name, project_id: projectId, version: target.version, overrides };
      if (before !== undefined && canonicalJson(before) === canonicalJson(overrides)) return answer;
      await tx.putOverrides(projectId, overrides);
      await tx.append(
        this.event(
          'AddonSettings',
          addonSettingsEntityId(name, projectId),
          projectId,
          before === undefined ? 'create' : 'update',
          { addon: name, overrides },
          ctx,
        ),
      );
      return answer;
    });
  }

  /** `PUT /addons/{name}/pin?project_id=` `{"version"|null}` (Admin, Supervisor). */
  async pin(ctx: CallContext, name: string, rawProjectId: string | undefined, input: BodyInput): Promise<unknown> {
    requireRole(ctx, PROJECT_WRITERS, 'pinning an addon version');
    const projectId = projectIdOf(rawProjectId, true)!;
    throwIfAny([nameProblem(name)]);
    const body = parseBody(PinBody, input);
    if (body.version !== null) throwIfAny([versionProblem(body.version, ['body', 'version'])]);
    await this.requireProject(projectId);
    return this.deps.store.change(name, async (tx) => {
      const head = await tx.head();
      if (!head) throw notFound(name);
      if (body.version !== null && !head.versions.some((v) => v.version === body.version)) {
        throw AppError.invalid([{ loc: ['body', 'version'], msg: `addon ${name} has no version ${body.version}`, type: 'value_error' }]);
      }
      const before = await tx.pin(projectId);
      const answer = { name, project_id: projectId, version: body.version };
      if ((before ?? null) === body.version) return answer;
      await tx.setPin(projectId, body.version);
      await tx.append(
        this.event(
          'AddonSettings',
          addonSettingsEntityId(name, projectId),
          projectId,
          before === undefined ? 'create' : 'update',
          { addon: name, pinned_version: body.version },
          ctx,
        ),
      );
      return answer;
    });
  }

  /**
   * `GET /addons/{name}/settings[?project_id=][&version=]`: defaults ⊕ studio ⊕ project for the
   * given version, else the project's pin, else the production version, with each leaf's source
   * and the overrides left out because they do not fit that version.
   */
  async settings(name: string, rawProjectId: string | undefined, rawVersion: string | undefined): Promise<unknown> {
    const projectId = projectIdOf(rawProjectId, false);
    const version = rawVersion === undefined || rawVersion === '' ? null : rawVersion;
    throwIfAny([nameProblem(name), version === null ? null : versionProblem(version, ['query', 'version'])]);
    const [inputs] = await Promise.all([
      this.deps.store.settingsInputs(name, projectId, version),
      projectId === null ? undefined : this.requireProject(projectId),
    ]);
    if (!inputs) throw notFound(name);
    const v = inputs.version;
    if (!v) throw noVersion(name, version ?? inputs.pin ?? inputs.production_version);
    const layers: Layer[] = [];
    if (inputs.studio) layers.push({ source: 'studio', overrides: inputs.studio as JsonObject });
    if (inputs.project) layers.push({ source: 'project', overrides: inputs.project as JsonObject });
    const out = resolveSettings(v.defaults as JsonObject, layers, this.validatorOf(v));
    return { name, version: v.version, settings: out.settings, sources: out.sources, ignored: out.ignored };
  }
}
