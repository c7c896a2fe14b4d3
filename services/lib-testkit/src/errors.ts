/**
 * Assertion helpers for the platform's error type.
 */
import { AppError } from '@reelbase/lib-platform';

/** The AppError `p` rejects with; throws when it resolves or rejects with anything else. */
export async function appErrorOf(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw new Error(`expected an AppError, got ${String(err)}`, { cause: err });
  }
  throw new Error('expected the call to fail');
}
