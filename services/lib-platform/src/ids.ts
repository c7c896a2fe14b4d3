import { v7, validate } from 'uuid';

/** A new time-ordered identifier (UUID v7). */
export function newId(): string {
  return v7();
}

/** True when `s` is a UUID string of any version. */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && validate(s);
}
