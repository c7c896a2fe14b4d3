/**
 * The {@link RecordsPort} over lib-platform's {@link RecordsClient}, acting as the schema service
 * itself (systemContext): snapshots, rename cascades, usage counts and project overrides.
 */
import { AppError, systemContext, type RecordsClient } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import type { ProjectOverrides } from '../domain/catalog.js';
import type { JournalEntry, RecordsPort } from '../domain/ports.js';
import type { SchemaUsage } from '../domain/schema.types.js';

/** A cascade rewrites every record holding the code in one transaction: allow it time. */
const RENAME_DEADLINE_MS = 300_000;

const counts = (v: unknown): Record<string, number> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number'))
    : {};

export class SchemaRecords implements RecordsPort {
  constructor(private readonly records: RecordsClient) {}

  async applySchema(version: number, snapshotJson: string, opts: { refuseRemovedInUse?: boolean } = {}): Promise<void> {
    await this.records.applySchema({ version, snapshotJson, refuseRemovedInUse: opts.refuseRemovedInUse || undefined }, systemContext());
  }

  async applyRename(entry: JournalEntry): Promise<number> {
    return this.records.applyRename(
      { journalId: entry.id, kind: entry.kind, entityType: entry.entityType, field: entry.field, from: entry.from, to: entry.to },
      systemContext(),
      { deadlineMs: RENAME_DEADLINE_MS },
    );
  }

  async countUsage(): Promise<SchemaUsage> {
    const usageJson = await this.records.countUsage(systemContext(), { deadlineMs: 60_000 });
    let raw: Record<string, unknown> = {};
    try {
      raw = JSON.parse(usageJson || '{}') as Record<string, unknown>;
    } catch {
      throw new AppError('internal', 'records answered usage that is not JSON');
    }
    const usage: SchemaUsage = {
      entity_types: counts(raw.entity_types),
      fields: counts(raw.fields),
      statuses: counts(raw.statuses),
      steps: counts(raw.steps),
      priorities: counts(raw.priorities),
    };
    if (raw.options !== undefined) usage.options = counts(raw.options);
    if (raw.status_types !== undefined) usage.status_types = counts(raw.status_types);
    return usage;
  }

  async projectOverrides(projectId: string): Promise<ProjectOverrides | null> {
    let record: recordsv1.Record;
    try {
      record = await this.records.get('Project', projectId, systemContext());
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') throw AppError.notFound(`project ${projectId} does not exist`);
      throw err;
    }
    const data = JSON.parse(record.dataJson || '{}') as Record<string, unknown>;
    const o = data.overrides;
    return typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as ProjectOverrides) : null;
  }
}
