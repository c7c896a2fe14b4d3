/**
 * The bounds of an addon's definitions and settings (docs/api-notes.md, "Addons"), written once:
 * the gateway validates and documents the routes with them (body sizes, names, versions, titles),
 * and the schema service checks every one again before anything is compiled or stored, so a
 * hostile schema or body is a 422 or a 413, never a stalled service.
 */
export const ADDON_LIMITS = {
  /** `settings_schema` as JSON text, in bytes. */
  schemaBytes: 65_536,
  /** Sub-schemas nested in one another (`properties`, `items`, `additionalProperties`), the root being 1. */
  schemaDepth: 8,
  /** Sub-schemas in one `settings_schema`, the root included. */
  schemaNodes: 512,
  /** Values of one `enum`. */
  enumValues: 256,
  /** Characters of one `pattern`. */
  patternChars: 256,
  /** `defaults` as JSON text, in bytes. */
  defaultsBytes: 131_072,
  /** One override layer (a settings PUT body) as JSON text, in bytes: past it, 413. */
  overridesBytes: 131_072,
  /** Characters of `title`. */
  titleChars: 200,
  /** Characters of a version string. */
  versionChars: 64,
  /** Compiled validators kept per replica (least recently used first out). */
  cachedValidators: 256,
  /** A body of PUT /addons/{name}/versions/{version} (schema and defaults together), in bytes: past it, 413. */
  versionBodyBytes: 262_144,
} as const;

/** Addon names: a lower-case letter, then up to 63 lower-case letters, digits, `_` and `-`. */
export const ADDON_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
