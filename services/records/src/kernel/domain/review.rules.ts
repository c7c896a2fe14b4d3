/**
 * The write rules of Representation, Note and Playlist as records enforces them (the rules
 * themselves are lib-platform's policy/review-write.policy.ts, shared with the gateway; the
 * ones here also need the stored record, its project or its share links).
 */
import {
  AppError,
  AUTHOR_REFUSED,
  fieldWriteRefusal,
  isPerson,
  isUuid,
  linkedId,
  noteChangeRefusal,
  type Principal,
  type Problem,
} from '@reelbase/lib-platform';
import { jsonEqual } from './record.changes.js';
import type { CompiledSchema } from './schema.snapshot.js';
import type { LinkRef } from './schema.validator.js';
import type { DataObject } from './record.types.js';

const forbidden = (why: string) => new AppError('forbidden', why);

/** 403 when the body names a field `p` may not write on `entityType` (create or patch). */
export function checkFieldWrite(p: Principal, entityType: string, data: DataObject): void {
  const why = fieldWriteRefusal(p, entityType, data);
  if (why) throw forbidden(why);
}

/**
 * A new Note's data with `author` set to the calling person (when the schema's Note has the
 * field). Checked against the body first (checkFieldWrite), so an author given here is the
 * caller's own; the principal's user id is what auth resolved, so it is not re-checked as input.
 */
export function withAuthor(p: Principal, entityType: string, data: DataObject, schema: CompiledSchema): DataObject {
  if (entityType !== 'Note' || !isPerson(p) || !p.userId) return data;
  if (schema.version > 0 && !schema.entityTypes.get('Note')?.fields.has('author')) return data;
  if (data.author !== undefined && data.author !== null) return data;
  return { ...data, author: { type: 'User', id: p.userId.toLowerCase() } };
}

/** 403 unless `p` may edit (`update`) or retire and revive (`retire`) the stored Note `current`. */
export function checkNoteChange(p: Principal, change: 'update' | 'retire', current: DataObject, next?: DataObject): void {
  const why = noteChangeRefusal(p, change, { author: current.author, guest_name: current.guest_name });
  if (why) throw forbidden(why);
  // The author never changes: a patch may only repeat it.
  if (next && p.authKind !== 'service' && !sameLink(current.author, next.author)) throw forbidden(AUTHOR_REFUSED);
}

function sameLink(a: unknown, b: unknown): boolean {
  const ida = linkedId(a)?.toLowerCase();
  const idb = linkedId(b)?.toLowerCase();
  return ida === idb;
}

/** True when a patch changes what a Playlist's `versions` hold (their order included). */
export function versionsChanged(before: DataObject, after: DataObject): boolean {
  return !jsonEqual(before.versions ?? null, after.versions ?? null);
}

/** The well-formed links of a Playlist's `versions`, each with its place in the body. */
export function playlistVersionLinks(data: DataObject): LinkRef[] {
  const versions = data.versions;
  if (!Array.isArray(versions)) return [];
  const links: LinkRef[] = [];
  versions.forEach((v: unknown, i) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return;
    const { type, id } = v as { type?: unknown; id?: unknown };
    if (typeof type === 'string' && typeof id === 'string' && isUuid(id)) links.push({ type, id: id.toLowerCase(), loc: ['data', 'versions', i] });
  });
  return links;
}

/** The problem of a Playlist's version that belongs to another project. */
export function foreignVersion(link: LinkRef): Problem {
  return { loc: link.loc, msg: `${link.type} ${link.id} belongs to another project: a Playlist holds Versions of its own project only`, type: 'link_project' };
}
