/**
 * The reader rule (project.readers.sql.ts) as the records store's Knex statements bind it: the
 * condition on a row alias with its `?` binding (the membership probe of
 * kernel/domain/project.readers.ts). A caller who reads every project (`reader` null: an Admin, a
 * service, a share-link guest) gets no condition, so its statements stay as they were.
 */
import { membershipProbe } from '../domain/project.readers.js';
import { readableSql } from './project.readers.sql.js';

/** A fragment of SQL and the Knex bindings of its `?`s, in order. */
export interface BoundSql {
  sql: string;
  bindings: string[];
}

/** The condition that row `alias` is readable by `reader` (membershipOf's user id); undefined when reader is null or absent. */
export function readableBound(alias: string, reader: string | null | undefined): BoundSql | undefined {
  if (reader === null || reader === undefined) return undefined;
  return { sql: readableSql(alias, '?'), bindings: [membershipProbe(reader)] };
}

/** {@link readableBound} as ` and <condition>` to append to a `where`, or nothing. */
export function andReadable(alias: string, reader: string | null | undefined): BoundSql {
  const bound = readableBound(alias, reader);
  return bound ? { sql: ` and ${bound.sql}`, bindings: bound.bindings } : { sql: '', bindings: [] };
}
