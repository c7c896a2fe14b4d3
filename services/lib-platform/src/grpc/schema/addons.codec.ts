/**
 * The addons' REST JSON (docs/api-notes.md, "Addons") ↔ their typed protobuf messages
 * (`reelbase.schema.v1.AddonsService`, addons.proto), both ways, written once for the gateway
 * (answers in) and the schema service (answers out). Settings schemas, defaults, layers and
 * resolved settings are free-form JSON objects and travel as `google.protobuf.Struct`.
 */
import type { addonsv1 } from '@reelbase/proto';
import { objectAt, orNull, str, stringMap, strings, type JsonObject } from './json.values.js';

/** Which answer an AddonsService call gives (one per kind of route). */
export type AddonAnswerKind = NonNullable<addonsv1.AddonJson['answer']>['$case'];

const addonToProto = (a: JsonObject): addonsv1.Addon => ({
  name: str(a.name) ?? '',
  title: str(a.title) ?? '',
  versions: strings(a.versions),
  productionVersion: str(a.production_version) ?? '',
});

const addonFromProto = (a: addonsv1.Addon): JsonObject => ({
  name: a.name,
  title: a.title,
  versions: [...a.versions],
  production_version: a.productionVersion,
});

/** The typed answer of kind `kind` holding the JSON answer `v`. */
export function addonAnswerToProto(kind: AddonAnswerKind, v: JsonObject): NonNullable<addonsv1.AddonJson['answer']> {
  switch (kind) {
    case 'addons':
      return { $case: kind, value: { items: (Array.isArray(v.items) ? v.items : []).map((a) => addonToProto(objectAt(a))) } };
    case 'addon':
      return { $case: kind, value: addonToProto(v) };
    case 'version':
      return {
        $case: kind,
        value: {
          name: str(v.name) ?? '',
          version: str(v.version) ?? '',
          title: str(v.title) ?? '',
          settingsSchema: objectAt(v.settings_schema),
          defaults: objectAt(v.defaults),
          createdAt: str(v.created_at) ?? '',
        },
      };
    case 'deleted':
      return { $case: kind, value: { name: str(v.name) ?? '', version: str(v.version) ?? '', deleted: v.deleted === true } };
    case 'overrides':
      return {
        $case: kind,
        value: { name: str(v.name) ?? '', projectId: str(v.project_id), version: str(v.version) ?? '', overrides: objectAt(v.overrides) },
      };
    case 'pin':
      return { $case: kind, value: { name: str(v.name) ?? '', projectId: str(v.project_id) ?? '', version: str(v.version) } };
    case 'settings':
      return {
        $case: kind,
        value: {
          name: str(v.name) ?? '',
          version: str(v.version) ?? '',
          settings: objectAt(v.settings),
          sources: stringMap(v.sources),
          ignored: strings(v.ignored),
        },
      };
  }
}

/** The JSON answer of a typed answer. */
export function addonAnswerFromProto(a: NonNullable<addonsv1.AddonJson['answer']>): JsonObject {
  switch (a.$case) {
    case 'addons':
      return { items: a.value.items.map(addonFromProto) };
    case 'addon':
      return addonFromProto(a.value);
    case 'version': {
      const v = a.value;
      return { name: v.name, version: v.version, title: v.title, settings_schema: v.settingsSchema ?? {}, defaults: v.defaults ?? {}, created_at: v.createdAt };
    }
    case 'deleted':
      return { name: a.value.name, version: a.value.version, deleted: a.value.deleted };
    case 'overrides': {
      const o = a.value;
      return { name: o.name, project_id: orNull(o.projectId), version: o.version, overrides: o.overrides ?? {} };
    }
    case 'pin':
      return { name: a.value.name, project_id: a.value.projectId, version: orNull(a.value.version) };
    case 'settings': {
      const s = a.value;
      return { name: s.name, version: s.version, settings: s.settings ?? {}, sources: { ...s.sources }, ignored: [...s.ignored] };
    }
  }
}

/** PATCH /addons/{name} and PUT /addons/{name}/pin: their typed fields. */
export function addonBodyFieldsToProto(route: 'production' | 'pin', body: JsonObject): Pick<addonsv1.AddonBody, 'productionVersion' | 'pin'> {
  if (route === 'production') return { productionVersion: str(body.production_version) };
  return { pin: { version: str(body.version) } };
}

/** The body of PATCH /addons/{name} or PUT /addons/{name}/pin from its typed fields; undefined when they are absent. */
export function addonBodyFromProto(route: 'production' | 'pin', req: addonsv1.AddonBody): JsonObject | undefined {
  if (route === 'production') return req.productionVersion === undefined ? undefined : { production_version: req.productionVersion };
  return req.pin === undefined ? undefined : { version: orNull(req.pin.version) };
}
