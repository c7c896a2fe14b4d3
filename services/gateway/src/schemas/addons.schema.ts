/**
 * Bodies and answers of the addon routes (docs/api-notes.md, "Addons"). The gateway checks the
 * shapes it can (names, the body's keys and types, sizes); the schema service checks the rest
 * against the addon it holds (semver, the settings schema's keywords and bounds, defaults and
 * overrides against the schema) and locates every problem itself.
 */
import { ADDON_LIMITS, ADDON_NAME } from '@reelbase/lib-platform';
import { z } from 'zod';
import { JsonObject, Uuid } from './common.schema.js';

/** Bodies of PUT /addons/{name}/versions/{version} (schema and defaults together) past this are 413. */
export const ADDON_VERSION_BODY_BYTES = ADDON_LIMITS.versionBodyBytes;
/** Bodies of PUT /addons/{name}/settings (one override layer) past this are 413. */
export const ADDON_SETTINGS_BODY_BYTES = ADDON_LIMITS.overridesBytes;

const KIB = 1024;
const SEMVER_HINT = 'A semantic version (`MAJOR.MINOR.PATCH[-pre][+build]`, no leading `v`).';

export const AddonName = z.string().regex(ADDON_NAME).describe(`\`${ADDON_NAME.source}\``);
/** Semantic Versioning 2.0.0's own expression (the schema service parses versions with `semver` as well). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const Version = z.string().max(ADDON_LIMITS.versionChars).regex(SEMVER).describe(SEMVER_HINT);

export const AddonPath = z.object({ name: AddonName });
export const AddonVersionPath = z.object({ name: AddonName, version: Version });

export const AddonVersionBody = z
  .strictObject({
    title: z.string().min(1).max(ADDON_LIMITS.titleChars),
    settings_schema: JsonObject.describe(
      'A JSON Schema (draft 2020-12) whose root is `"type": "object"`, using only `type`, `properties`, `required`, `enum`, ' +
        '`items`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern`, `default`, `additionalProperties`, `description` ' +
        `and \`title\` (and \`$schema\` naming draft 2020-12 at the root). No \`$ref\`. At most ${ADDON_LIMITS.schemaBytes / KIB} KiB of JSON, sub-schemas nested ` +
        `at most ${ADDON_LIMITS.schemaDepth} deep, ${ADDON_LIMITS.schemaNodes} sub-schemas, ${ADDON_LIMITS.enumValues} \`enum\` values; a \`pattern\` has at most ${ADDON_LIMITS.patternChars} characters, RE2 syntax, and no ` +
        'nested quantifier that could backtrack catastrophically.',
    ),
    defaults: JsonObject.optional().describe(`Must satisfy \`settings_schema\` (default \`{}\`); at most ${ADDON_LIMITS.defaultsBytes / KIB} KiB of JSON.`),
  })
  .meta({ id: 'AddonVersionBody', description: 'Body of PUT /addons/{name}/versions/{version}.' });

export const AddonVersionOut = z
  .object({
    name: z.string(),
    version: z.string(),
    title: z.string(),
    settings_schema: JsonObject,
    defaults: JsonObject,
    created_at: z.string(),
  })
  .meta({ id: 'AddonVersion', description: 'One registered version of an addon (immutable).' });

export const AddonOut = z
  .object({
    name: z.string(),
    title: z.string().describe('The production version’s title.'),
    versions: z.array(z.string()).describe('Every registered version, ascending by semver precedence.'),
    production_version: z.string(),
  })
  .meta({ id: 'Addon', description: 'A pipeline addon.' });

export const AddonList = z.object({ items: z.array(AddonOut) }).meta({ id: 'AddonList' });

export const AddonPatch = z.strictObject({ production_version: Version }).meta({ id: 'AddonPatch', description: 'Body of PATCH /addons/{name}.' });

export const AddonDeleted = z.object({ name: z.string(), version: z.string(), deleted: z.literal(true) }).meta({ id: 'AddonVersionDeleted' });

export const AddonProjectQuery = z.object({ project_id: Uuid.optional() });
export const AddonPinQuery = z.object({ project_id: Uuid });
export const AddonSettingsQuery = z.object({ project_id: Uuid.optional(), version: Version.optional() });

export const AddonOverridesBody = JsonObject.meta({
  id: 'AddonOverrides',
  description:
    'One override layer: a partial settings object (known keys, right types and bounds; `required` is not enforced). ' +
    `At most ${ADDON_LIMITS.overridesBytes / KIB} KiB of JSON.`,
});

export const AddonOverridesOut = z
  .object({
    name: z.string(),
    project_id: z.string().nullable().describe('null for the studio layer.'),
    version: z.string().describe('The version the layer was checked against: the project’s pin, else production.'),
    overrides: JsonObject,
  })
  .meta({ id: 'AddonOverridesLayer' });

export const AddonPinBody = z
  .strictObject({ version: Version.nullable().describe('A registered version, or null to unpin.') })
  .meta({ id: 'AddonPinBody', description: 'Body of PUT /addons/{name}/pin.' });

export const AddonPinOut = z.object({ name: z.string(), project_id: z.string(), version: z.string().nullable() }).meta({ id: 'AddonPin' });

export const AddonSettingsOut = z
  .object({
    name: z.string(),
    version: z.string().describe('The version resolved: `version=`, else the project’s pin, else production.'),
    settings: JsonObject.describe('defaults ⊕ studio ⊕ project: objects merged key by key, arrays and scalars replaced. Always satisfies the schema.'),
    sources: z
      .record(z.string(), z.enum(['default', 'studio', 'project']))
      .describe('Each leaf’s JSON pointer (an array is one leaf) → the layer its value came from.'),
    ignored: z.array(z.string()).describe('JSON pointers of overrides left out because they do not fit this version’s schema.'),
  })
  .meta({ id: 'AddonSettings', description: 'Resolved settings of an addon.' });
