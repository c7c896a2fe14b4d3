/**
 * What the editor's unit specs share: a document seeded with the built-in types, usage counts,
 * and the error an editor function throws.
 */
import type { AppError } from '@reelbase/lib-platform';
import { seedBuiltins } from '../src/definitions/domain/schema.editor.js';
import { emptyDoc, type SchemaDoc, type SchemaUsage } from '../src/definitions/domain/schema.types.js';

/** A document holding the built-in types and fields, nothing else. */
export function seeded(): SchemaDoc {
  return seedBuiltins(emptyDoc())!.doc;
}

/** Usage counts: none, unless given. */
export function usage(counts: Partial<SchemaUsage> = {}): SchemaUsage {
  return { entity_types: {}, fields: {}, statuses: {}, steps: {}, priorities: {}, ...counts };
}

/** The AppError `run` throws (fails the test when it throws none). */
export function caught(run: () => unknown): AppError {
  try {
    run();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected the edit to be refused');
}

/** The 422 problems' locations and messages of `run`. */
export function problems(run: () => unknown): { loc: (string | number)[]; msg: string }[] {
  const err = caught(run);
  if (err.kind !== 'invalid') throw new Error(`expected a 422, got ${err.kind} ${err.code}`);
  return err.problems.map((p) => ({ loc: p.loc, msg: p.msg }));
}
