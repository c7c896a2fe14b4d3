import { parse, stringify, v7, validate } from 'uuid';

/** A new time-ordered identifier (UUID v7). */
export function newId(): string {
  return v7();
}

/** True when `s` is a UUID string of any version. */
export function isUuid(s: unknown): s is string {
  return typeof s === 'string' && validate(s);
}

/** The 16 bytes of a UUID string (throws on one that is not a UUID). */
export function uuidToBytes(id: string): Buffer {
  return Buffer.from(parse(id));
}

/** The UUID string of 16 bytes. */
export function uuidFromBytes(bytes: Uint8Array): string {
  return stringify(bytes);
}
