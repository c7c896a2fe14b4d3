/**
 * What the schema service asks of records (docs/architecture.md, "Records obey the schema"): store each committed
 * snapshot, cascade a renamed code over every record in one transaction, and count how records use
 * each code. Only services call these (the gateway exposes none of them).
 */
import { AppError, type CallContext, type Problem } from '@reelbase/lib-platform';
import type { SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';
import { refuseInUse, removals } from './schema.removals.js';
import { RENAME_KINDS, type CodeRename, type RenameKind } from './schema.rename.js';
import type { SchemaAdminStore, SchemaUsage } from './core.ports.js';

function service(ctx: CallContext): void {
  if (!ctx.principal) throw new AppError('unauthenticated', 'schema calls need an acting principal');
  if (ctx.principal.authKind !== 'service') throw new AppError('forbidden', 'only services apply schema changes');
}

export class SchemaAdmin {
  constructor(private readonly store: SchemaAdminStore) {}

  /**
   * Stores `snapshotJson` as `version` unless records already holds that version or a newer one.
   * With `refuseRemovedInUse` (the schema service's deletes), the codes it takes away from the held
   * snapshot are counted under the schema lock, which every record write holds in shared mode while
   * it validates and commits: one still in use is 409 `code_in_use` and nothing is stored.
   */
  async applySchema(version: number, snapshotJson: string, ctx: CallContext, refuseRemovedInUse = false): Promise<boolean> {
    service(ctx);
    const problems: Problem[] = [];
    if (!Number.isSafeInteger(version) || version < 1) {
      problems.push({ loc: ['version'], msg: 'Input should be an integer of at least 1', type: 'greater_than_equal' });
    }
    let snapshot: SchemaSnapshot | undefined;
    try {
      snapshot = JSON.parse(snapshotJson) as SchemaSnapshot;
    } catch {
      problems.push({ loc: ['snapshot_json'], msg: 'Invalid JSON', type: 'json_invalid' });
    }
    if (snapshot !== undefined) {
      if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) {
        problems.push({ loc: ['snapshot_json'], msg: 'Input should be an object', type: 'dict_type' });
      } else {
        for (const key of ['entity_types', 'statuses', 'steps', 'priorities'] as const) {
          if (!Array.isArray(snapshot[key])) problems.push({ loc: ['snapshot_json', key], msg: 'Input should be a valid list', type: 'list_type' });
        }
      }
    }
    if (problems.length) throw AppError.invalid(problems);
    if (!refuseRemovedInUse) return this.store.applySchema(version, snapshotJson);
    const next = snapshot!;
    return this.store.applySchema(version, snapshotJson, async (held, countRemoved) => {
      const removed = held ? removals(held.snapshot, next) : [];
      if (removed.length > 0) refuseInUse(removed, await countRemoved(removed));
    });
  }

  /** Rewrites `rename.from` to `rename.to` wherever records store it; the number of records rewritten. */
  async applyRename(rename: CodeRename, ctx: CallContext): Promise<number> {
    service(ctx);
    const problems: Problem[] = [];
    const need = (name: keyof CodeRename, value: string) => {
      if (!value)
        problems.push({ loc: [name === 'journalId' ? 'journal_id' : name === 'entityType' ? 'entity_type' : name], msg: 'Field required', type: 'missing' });
    };
    if (!RENAME_KINDS.includes(rename.kind as RenameKind)) {
      problems.push({ loc: ['kind'], msg: `Input should be ${RENAME_KINDS.map((k) => `'${k}'`).join(', ')}`, type: 'literal_error' });
    }
    need('journalId', rename.journalId);
    need('from', rename.from);
    need('to', rename.to);
    if (rename.kind === 'option') {
      need('entityType', rename.entityType);
      need('field', rename.field);
    }
    if (problems.length) throw AppError.invalid(problems);
    if (rename.from === rename.to) return 0;
    return this.store.applyRename(rename);
  }

  async countUsage(ctx: CallContext): Promise<SchemaUsage> {
    service(ctx);
    return this.store.countUsage();
  }
}
