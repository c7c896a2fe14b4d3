/**
 * Pipeline addons and their layered settings (docs/api-notes.md, "Addons"), served by the schema
 * service's AddonsService. Registering, choosing the production version, deleting a version and
 * the studio's settings are for Admins; a project's settings and pin for Admins and Supervisors
 * (403 before the body is validated; the service checks again); every role reads. Each route is
 * one call whose answer is the response body (mapped between REST and protobuf in
 * mappers/addons.mapper.ts).
 */
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import {
  ADDON_SETTINGS_BODY_BYTES,
  ADDON_VERSION_BODY_BYTES,
  AddonDeleted,
  AddonList,
  AddonOut,
  AddonOverridesBody,
  AddonOverridesOut,
  AddonPatch,
  AddonPath,
  AddonPinBody,
  AddonPinOut,
  AddonPinQuery,
  AddonProjectQuery,
  AddonSettingsOut,
  AddonSettingsQuery,
  AddonVersionBody,
  AddonVersionOut,
  AddonVersionPath,
} from '../schemas/addons.schema.js';
import { addonBodyRequest, addonText, addonTypedBodyRequest } from '../mappers/addons.mapper.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN, changesAddonSettings } from './route.roles.js';

const TAGS = ['addons'];

/** An answer (mappers/addons.mapper.ts) as the response body. */
const reply = (res: Parameters<typeof addonText>[0]): Reply => Reply.rawJson(addonText(res));

const LAYERS =
  'Settings resolve in three layers: the version’s `defaults`, the studio overrides and the project’s overrides ' +
  '(objects merged key by key, arrays and scalars replaced).';

export function addonRoutes({ peers, access }: RouteDeps): AnyRoute[] {
  const addons = peers.addons;
  return [
    defineRoute({
      method: 'get',
      path: '/addons',
      operationId: 'listAddons',
      summary: 'Every addon, by name.',
      tags: TAGS,
      auth: 'bearer',
      responses: { 200: { description: 'The addons.', schema: AddonList } },
      errors: [503],
      handler: async ({ ctx }) => reply(await addons.listAddons({}, ctx)),
    }),
    defineRoute({
      method: 'get',
      path: '/addons/{name}',
      operationId: 'getAddon',
      summary: 'One addon: its versions (ascending) and production version.',
      tags: TAGS,
      auth: 'bearer',
      params: AddonPath,
      responses: { 200: { description: 'The addon.', schema: AddonOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => reply(await addons.getAddon({ name: params.name, version: '' }, ctx)),
    }),
    defineRoute({
      method: 'patch',
      path: '/addons/{name}',
      operationId: 'setAddonProductionVersion',
      summary: 'Choose the production version (Admin).',
      description: 'A version that is not registered is 422 at `["body","production_version"]`. Emits an `Addon` update event.',
      tags: TAGS,
      auth: 'bearer',
      params: AddonPath,
      body: AddonPatch,
      allow: { roles: ADMIN, to: 'choose the production version' },
      responses: { 200: { description: 'The addon.', schema: AddonOut } },
      errors: [404, 503],
      handler: async ({ params, body, ctx }) => reply(await addons.setProductionVersion(addonTypedBodyRequest('production', { name: params.name }, body), ctx)),
    }),
    defineRoute({
      method: 'get',
      path: '/addons/{name}/versions/{version}',
      operationId: 'getAddonVersion',
      summary: 'One registered version: its title, settings schema and defaults.',
      tags: TAGS,
      auth: 'bearer',
      params: AddonVersionPath,
      responses: { 200: { description: 'The version.', schema: AddonVersionOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => reply(await addons.getAddonVersion({ name: params.name, version: params.version }, ctx)),
    }),
    defineRoute({
      method: 'put',
      path: '/addons/{name}/versions/{version}',
      operationId: 'registerAddonVersion',
      summary: 'Register an addon version (Admin).',
      description:
        '`version` is a semantic version. A version is immutable: the same body again is 200 and changes nothing; another ' +
        'body is 409 `duplicate_code`. `defaults` must satisfy `settings_schema` (422 located in `defaults`); a schema ' +
        'keyword outside the supported list, or a schema past its bounds, is 422 located in `settings_schema`. The first ' +
        `version of an addon becomes its production version. Bodies over ${ADDON_VERSION_BODY_BYTES} bytes are 413. ` +
        'Emits an `Addon` event (create for a new addon).',
      tags: TAGS,
      auth: 'bearer',
      params: AddonVersionPath,
      body: AddonVersionBody,
      bodyLimitBytes: ADDON_VERSION_BODY_BYTES,
      allow: { roles: ADMIN, to: 'register an addon version' },
      responses: { 200: { description: 'The version as registered.', schema: AddonVersionOut } },
      errors: [409, 503],
      handler: async ({ params, body, ctx }) =>
        reply(await addons.registerAddonVersion(addonBodyRequest({ name: params.name, version: params.version }, body), ctx)),
    }),
    defineRoute({
      method: 'delete',
      path: '/addons/{name}/versions/{version}',
      operationId: 'deleteAddonVersion',
      summary: 'Delete an addon version (Admin).',
      description:
        '409 `code_in_use` while it is the production version or a project pins it (`usage`: the projects pinning it). ' + 'Emits an `Addon` update event.',
      tags: TAGS,
      auth: 'bearer',
      params: AddonVersionPath,
      allow: { roles: ADMIN, to: 'delete an addon version' },
      responses: { 200: { description: 'The version is gone.', schema: AddonDeleted } },
      errors: [404, 409, 503],
      handler: async ({ params, ctx }) => reply(await addons.deleteAddonVersion({ name: params.name, version: params.version }, ctx)),
    }),
    defineRoute({
      method: 'put',
      path: '/addons/{name}/settings',
      operationId: 'putAddonSettings',
      summary: 'Replace the studio’s (Admin) or a project’s (Admin, Supervisor) override layer.',
      description:
        `${LAYERS} The body replaces the layer whole (\`{}\` clears it). It is a partial settings object checked against ` +
        'the version it applies to (the studio layer: the production version; a project layer: the project’s pin, else ' +
        'production): only known keys, right types and bounds; `required` is not enforced. Problems are 422 at ' +
        `\`["body", <path>...]\`. Bodies over ${ADDON_SETTINGS_BODY_BYTES} bytes are 413. An unknown project (or a restricted one the caller ` +
        'may not read) is 404. ' +
        'Emits an `AddonSettings` event when the layer changes.',
      tags: TAGS,
      auth: 'bearer',
      params: AddonPath,
      query: AddonProjectQuery,
      body: AddonOverridesBody,
      bodyLimitBytes: ADDON_SETTINGS_BODY_BYTES,
      authorize: changesAddonSettings,
      responses: { 200: { description: 'The layer as stored.', schema: AddonOverridesOut } },
      errors: [404, 503],
      handler: async ({ params, query, body, ctx }) => {
        access.assertReadable(ctx.principal, query.project_id);
        return reply(await addons.putAddonSettings(addonBodyRequest({ name: params.name, projectId: query.project_id }, body), ctx));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/addons/{name}/settings',
      operationId: 'getAddonSettings',
      summary: 'Resolved settings of an addon (any role).',
      description:
        `${LAYERS} Resolved for \`version\` when given, else the project’s pin, else the production version. \`sources\` ` +
        'maps each leaf’s JSON pointer (an array is one leaf) to `default`, `studio` or `project`. The result always ' +
        'satisfies the version’s schema: an override that does not fit it (made for another version) is left out and its ' +
        'pointer listed in `ignored`. An unknown project or version is 404, and so is a restricted project the caller may not read.',
      tags: TAGS,
      auth: 'bearer',
      params: AddonPath,
      query: AddonSettingsQuery,
      responses: { 200: { description: 'The resolved settings.', schema: AddonSettingsOut } },
      errors: [404, 503],
      handler: async ({ params, query, ctx }) => {
        access.assertReadable(ctx.principal, query.project_id);
        return reply(await addons.getAddonSettings({ name: params.name, projectId: query.project_id, version: query.version }, ctx));
      },
    }),
    defineRoute({
      method: 'put',
      path: '/addons/{name}/pin',
      operationId: 'pinAddonVersion',
      summary: 'Pin a project to a version, or unpin it (Admin, Supervisor).',
      description:
        'A pinned project resolves its settings for that version and its override layer is checked against it. A version ' +
        'that is not registered is 422 at `["body","version"]`; an unknown project (or a restricted one the caller may not read) 404. ' +
        'A pinned version cannot be deleted. ' +
        'Emits an `AddonSettings` event when the pin changes.',
      tags: TAGS,
      auth: 'bearer',
      params: AddonPath,
      query: AddonPinQuery,
      body: AddonPinBody,
      allow: { roles: ['Admin', 'Supervisor'], to: 'pin an addon version' },
      responses: { 200: { description: 'The pin.', schema: AddonPinOut } },
      errors: [404, 503],
      handler: async ({ params, query, body, ctx }) => {
        access.assertReadable(ctx.principal, query.project_id);
        return reply(await addons.pinAddonVersion(addonTypedBodyRequest('pin', { name: params.name, projectId: query.project_id }, body), ctx));
      },
    }),
  ];
}
