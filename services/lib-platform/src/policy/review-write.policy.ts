/**
 * The narrower write rules of the three types that decide what a share link shows and who
 * speaks for the client (docs/api-notes.md, "Roles and who may write"):
 *
 * - Representation: the transcode fields are the media service's own record of a job; only a
 *   call the media service makes (for itself, or for the person uploading) writes them.
 * - Note: `author` is the caller (the server fills it in); `verdict` and `guest_name` come only
 *   from a share link's guest. A Note is edited or retired by its author, Admin or Supervisor;
 *   a guest's note is never edited, only retired, by Admin, Supervisor or Coordinator.
 * - Playlist: while it has a live share link, its `versions` change only by a role that may share.
 *
 * The gateway applies the rules that need only the body, before validation (a quick 403);
 * records applies all of them, the ones that need the stored record or its share links included.
 */
import type { Principal, Role } from '../context.js';

/** The name the media service gives itself in `Principal.via`. */
export const MEDIA_SERVICE = 'media-transcode';

/** Representation fields only the media service writes. */
export const REPRESENTATION_MEDIA_FIELDS: readonly string[] = [
  'transcode_status',
  'transcode_error',
  'review_kind',
  'review_media_key',
  'thumbnail_media_key',
  'attempts',
];

/** Note fields written only through a share link (`POST /shared/{token}/notes`). */
export const NOTE_GUEST_FIELDS: readonly string[] = ['verdict', 'guest_name'];

/** Roles that may share a playlist, and so change what a live link shows. */
export const SHARE_ROLES: ReadonlySet<Role> = new Set<Role>(['Admin', 'Supervisor', 'Coordinator']);

/** Roles that edit and retire anyone's Note (besides its author). */
export const NOTE_MODERATOR_ROLES: ReadonlySet<Role> = new Set<Role>(['Admin', 'Supervisor']);

/** Roles that retire a guest's Note. */
export const GUEST_NOTE_RETIRER_ROLES: ReadonlySet<Role> = new Set<Role>(['Admin', 'Supervisor', 'Coordinator']);

export const MEDIA_FIELDS_REFUSED =
  'transcode_status, transcode_error, review_kind, review_media_key, thumbnail_media_key and attempts are written by the media service only';
export const GUEST_FIELDS_REFUSED = 'verdict and guest_name are written only through a share link (POST /shared/{token}/notes)';
export const AUTHOR_REFUSED = "a Note's author is the user who writes it: it is set for you and cannot name anyone else";
export const NOTE_NOT_YOURS = 'a Note is edited or retired by its author, an Admin or a Supervisor';
export const GUEST_NOTE_NOT_EDITABLE = "a guest's note is never edited; an Admin, Supervisor or Coordinator may retire it";
export const GUEST_NOTE_RETIRE_REFUSED = "a guest's note is retired only by an Admin, Supervisor or Coordinator";
export const SHARED_PLAYLIST_REFUSED =
  'this Playlist has a live share link: only an Admin, Supervisor or Coordinator may change its versions (revoke the link, or ask one of them)';

type Who = Pick<Principal, 'role' | 'authKind' | 'userId' | 'via'>;

/** A person: a user signed in with a token or an API key (not a service, not a guest). */
export function isPerson(p: Who): boolean {
  return p.authKind === 'token' || p.authKind === 'api_key';
}

/** A call the media service makes, for itself or for the person uploading. */
export function isMediaService(p: Who): boolean {
  return p.via === MEDIA_SERVICE;
}

/** The id a link value `{"type","id"}` names (a bare id is read the same way). */
export function linkedId(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string') return (value as { id: string }).id;
  return undefined;
}

/** True when `value` names the caller's own User record. */
function namesCaller(p: Who, value: unknown): boolean {
  const id = linkedId(value);
  const typeOk = typeof value === 'string' || (value as { type?: unknown }).type === 'User';
  return p.userId !== '' && id !== undefined && typeOk && id.toLowerCase() === p.userId.toLowerCase();
}

/**
 * Why `p` may not write these `data` keys of a `entityType` record (create or patch), or
 * undefined. Needs only the body: the gateway asks it before validation, records again.
 */
export function fieldWriteRefusal(p: Who, entityType: string, data: Readonly<Record<string, unknown>>): string | undefined {
  if (entityType === 'Representation') {
    if (!isMediaService(p) && REPRESENTATION_MEDIA_FIELDS.some((f) => Object.hasOwn(data, f))) return MEDIA_FIELDS_REFUSED;
    return undefined;
  }
  if (entityType !== 'Note') return undefined;
  if (p.authKind !== 'guest' && NOTE_GUEST_FIELDS.some((f) => Object.hasOwn(data, f))) return GUEST_FIELDS_REFUSED;
  // A service acting on its own may name an author (an import keeps who wrote a note); a person
  // may only repeat their own link; a guest's note has none. A create's null is no value.
  if (Object.hasOwn(data, 'author') && p.authKind !== 'service') {
    const author = data.author;
    if (author === null || author === undefined) return undefined;
    if (p.authKind === 'guest' || !namesCaller(p, author)) return AUTHOR_REFUSED;
  }
  return undefined;
}

/** What is known of a stored Note for the rules. */
export interface NoteOwnership {
  author: unknown;
  guest_name?: unknown;
}

/** A guest's note: written through a share link (no author, a guest name). */
export function isGuestNote(note: NoteOwnership): boolean {
  return (note.author === undefined || note.author === null) && typeof note.guest_name === 'string' && note.guest_name !== '';
}

/**
 * Why `p` may not change (`update`) or retire/revive (`retire`) the stored Note `note`, or
 * undefined. A service acting on its own may, but never edits a guest's note either.
 */
export function noteChangeRefusal(p: Who, change: 'update' | 'retire', note: NoteOwnership): string | undefined {
  if (isGuestNote(note)) {
    if (change === 'update') return GUEST_NOTE_NOT_EDITABLE;
    return p.authKind === 'service' || GUEST_NOTE_RETIRER_ROLES.has(p.role as Role) ? undefined : GUEST_NOTE_RETIRE_REFUSED;
  }
  if (p.authKind === 'service' || NOTE_MODERATOR_ROLES.has(p.role as Role)) return undefined;
  if (p.authKind === 'guest') return NOTE_NOT_YOURS;
  const author = linkedId(note.author);
  return author !== undefined && p.userId !== '' && author.toLowerCase() === p.userId.toLowerCase() ? undefined : NOTE_NOT_YOURS;
}

/** True when `p` may change the versions of a Playlist that has a live share link. */
export function mayChangeSharedPlaylist(p: Who): boolean {
  return (p.authKind === 'service' && !p.userId) || SHARE_ROLES.has(p.role as Role);
}
