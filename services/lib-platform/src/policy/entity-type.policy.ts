/**
 * Entity type codes (`Shot`, `Asset`, custom `CamelCase` codes): an upper-case letter, then up
 * to 63 letters and digits. They also become NATS subject tokens (`events.<Type>.<action>`),
 * so nothing else may pass. The gateway's path schema and records' own check both use this.
 */

/** The pattern as written in 422 messages and the OpenAPI document. */
export const ENTITY_TYPE_CODE_PATTERN = '^[A-Z][A-Za-z0-9]{0,63}$';

export const ENTITY_TYPE_CODE = new RegExp(ENTITY_TYPE_CODE_PATTERN);

/** True when `s` is a well-formed entity type code. */
export function isEntityTypeCode(s: unknown): s is string {
  return typeof s === 'string' && ENTITY_TYPE_CODE.test(s);
}
