/**
 * The checks a record write shares between a single write, a batch and a create with a task
 * template (record.service.ts, record.template.ts).
 */
import { AppError, canonicalUuid, clipEcho, IF_MATCH_NEVER, ifMatchHolds, normalizeIfMatch, type Problem } from '@reelbase/lib-platform';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import { projectNotFound } from '../../kernel/domain/record.rules.js';
import type { DataObject } from '../../kernel/domain/record.types.js';
import { foreignVersion, playlistVersionLinks } from '../../kernel/domain/review.rules.js';
import type { LinkRef } from '../../kernel/domain/schema.validator.js';
import type { RecordTransaction } from './core.ports.js';

export const notFound = (entityType: string, id: string) => AppError.notFound(`${entityType} ${id} not found`);

/**
 * `current` when it is a live record of `entityType` and If-Match holds; not found otherwise (a
 * record the writer may not read never reaches here: the store does not find it).
 */
export function checkLive(current: StoredRecord | undefined, entityType: string, id: string, ifMatch: string | undefined): StoredRecord {
  if (!current || current.retired || current.entityType !== entityType) throw notFound(entityType, id);
  if (!ifMatchHolds(ifMatch, current.updatedAt)) {
    const expected = normalizeIfMatch(ifMatch);
    const why = expected === IF_MATCH_NEVER ? ': If-Match is empty or malformed, so it matches no version' : ` was changed since ${clipEcho(ifMatch!)}`;
    throw AppError.conflict('stale_write', `${entityType} ${id}${why}`);
  }
  return current;
}

/**
 * Checks the project a write puts a record into, inside its transaction: a project the writer
 * (`reader`, membershipOf) may not read is not found (404, as a read of it would be: writes into it
 * do not tell it exists), one that is not a live Project is the body's 422 at `project_id`.
 */
export async function checkProject(tx: Pick<RecordTransaction, 'projectState'>, projectId: string, reader: string | null): Promise<void> {
  const state = await tx.projectState(projectId, reader);
  if (state === 'hidden') throw notFound('Project', projectId);
  if (state === 'missing') throw AppError.invalid([projectNotFound(projectId)]);
}

/** Catches the problems `fn` throws as `invalid`, so all of a request's problems are reported together. */
export function collect(problems: Problem[], fn: () => DataObject): DataObject {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AppError && err.kind === 'invalid') {
      problems.push(...err.problems);
      return {};
    }
    throw err;
  }
}

/**
 * `input` with its ids in one spelling (lower-case UUIDs), so an id re-sent in another case is
 * no change; link ids inside `data` are lower-cased once it is parsed.
 */
export function withCanonicalIds<T extends { id?: string; projectId?: string | null; thumbnailId?: string | null }>(input: T): T {
  return { ...input, id: canonicalUuid(input.id), projectId: canonicalUuid(input.projectId), thumbnailId: canonicalUuid(input.thumbnailId) };
}

/** How often a write re-validates when the schema changes under it before it gives up (503). */
export const MAX_SCHEMA_RETRIES = 5;

/** The problem of a link whose target is missing, retired or of another type. */
export function linkNotFound(link: LinkRef): Problem {
  return { loc: link.loc, msg: `no live ${link.type} with id ${link.id}`, type: 'link_not_found' };
}

/**
 * The problems of a Playlist's `versions` that belong to another project than `projectId` (a
 * Version `reader` may not read is a dead link, reported as such, never as another project's).
 */
export async function foreignVersions(
  store: Pick<RecordTransaction, 'linksOutsideProject'>,
  projectId: string | null,
  data: DataObject,
  reader: string | null,
): Promise<Problem[]> {
  const links = playlistVersionLinks(data);
  // Without a project, the missing project_id is the problem to report.
  return links.length && projectId !== null ? (await store.linksOutsideProject(links, projectId, reader)).map(foreignVersion) : [];
}
