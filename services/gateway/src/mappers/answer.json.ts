/**
 * The answers of the schema service's groups as response bodies: the typed answer mapped to its
 * JSON when the service sent one, else the deprecated JSON field as it came (a schema service of
 * the previous release, during a rolling upgrade; docs/architecture.md, "Protocol buffers").
 */

/** The JSON text of an answer: `typed` mapped when present, else the deprecated `json` (empty is `{}`). */
export function answerText<T>(typed: T | undefined, toJson: (t: T) => unknown, json: string): string {
  if (typed !== undefined) return JSON.stringify(toJson(typed));
  return json === '' ? '{}' : json;
}

/**
 * A typed list answer, when it is one: a list field has no presence of its own, so a non-empty
 * list, or no deprecated JSON beside it, says the answer is typed (an empty list and JSON of the
 * previous release say the same thing either way).
 */
export function typedList<T>(items: readonly T[] | undefined, json: string): readonly T[] | undefined {
  return (items !== undefined && items.length > 0) || json === '' ? (items ?? []) : undefined;
}
