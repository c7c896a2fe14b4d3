/**
 * The limits of the action routes (docs/api-notes.md, "Actions"), written once: the gateway
 * validates and documents the bodies with them, and the schema service, which owns the actions,
 * checks them again.
 */

/** Most records one list or execute names. */
export const MAX_ACTION_RECORDS = 100;

/** Most custom actions the studio list holds. */
export const MAX_CUSTOM_ACTIONS = 200;

/** The bounds of one custom action's fields (characters, list lengths). */
export const CUSTOM_ACTION_LIMITS = {
  /** Characters of `label`. */
  labelChars: 200,
  /** Entity types in `entity_types` (at least one). */
  entityTypes: 100,
  /** Characters of `icon`. */
  iconChars: 1024,
} as const;

/** Characters of an `action_id` in an execute, and of a launch token in its path. */
export const ACTION_REF_CHARS = 200;
