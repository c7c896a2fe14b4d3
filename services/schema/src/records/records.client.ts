/**
 * The {@link RecordsPort} over records' gRPC API, acting as the schema service itself
 * (systemContext): snapshots, rename cascades, usage counts and project overrides.
 */
import { AppError, createGrpcClient, systemContext, type GrpcClient, type Metrics } from '@reelbase/lib-platform';
import { recordsv1 } from '@reelbase/proto';
import type { ProjectOverrides } from '../domain/catalog.js';
import type { JournalEntry, RecordsPort } from '../domain/ports.js';
import type { SchemaUsage } from '../domain/schema.types.js';

/** A cascade rewrites every record holding the code in one transaction: allow it time. */
const RENAME_DEADLINE_MS = 300_000;

const counts = (v: unknown): Record<string, number> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number'))
    : {};

export class RecordsClient implements RecordsPort {
  private readonly client: GrpcClient<recordsv1.RecordsServiceClient>;

  constructor(address: string, internalAuthSecret: string, metrics?: Metrics, deadlineMs = 10_000) {
    this.client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address,
      internalAuthSecret,
      deadlineMs,
      metrics,
    });
  }

  async applySchema(version: number, snapshotJson: string, opts: { refuseRemovedInUse?: boolean } = {}): Promise<void> {
    await this.client.call.applySchema({ version, snapshotJson, refuseRemovedInUse: opts.refuseRemovedInUse || undefined }, systemContext());
  }

  async applyRename(entry: JournalEntry): Promise<number> {
    const res = await this.client.call.applyRename(
      { journalId: entry.id, kind: entry.kind, entityType: entry.entityType, field: entry.field, from: entry.from, to: entry.to },
      systemContext(),
      { deadlineMs: RENAME_DEADLINE_MS },
    );
    return Number(res.rewritten);
  }

  async countUsage(): Promise<SchemaUsage> {
    const res = await this.client.call.countUsage({}, systemContext(), { deadlineMs: 60_000 });
    let raw: Record<string, unknown> = {};
    try {
      raw = JSON.parse(res.usageJson || '{}') as Record<string, unknown>;
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
    let record: recordsv1.Record | undefined;
    try {
      record = (await this.client.call.getRecord({ entityType: 'Project', id: projectId }, systemContext())).record;
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') throw AppError.notFound(`project ${projectId} does not exist`);
      throw err;
    }
    const data = JSON.parse(record?.dataJson || '{}') as Record<string, unknown>;
    const o = data.overrides;
    return typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as ProjectOverrides) : null;
  }

  close(): void {
    this.client.close();
  }
}
