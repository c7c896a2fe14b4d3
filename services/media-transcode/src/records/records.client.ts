/**
 * The records calls of media-transcode: reading a Version, creating the Representation as the
 * uploading principal, and every state change as an UpdateRecord (so each one is an event).
 * Every write says it is made through the media service (`Principal.via`), the only writer of a
 * Representation's transcode fields (docs/api-notes.md, "Roles and who may write").
 */
import { createGrpcClient, MEDIA_SERVICE, viaService, type CallContext, type GrpcClient, type Metrics } from '@reelbase/lib-platform';
import { recordsv1 } from '@reelbase/proto';

/** The Representation's `data` as media-transcode writes it (contract §1, Representation). */
export interface RepresentationData {
  name?: string;
  version?: { type: 'Version'; id: string };
  files?: Record<string, unknown>;
  transcode_status?: string;
  transcode_error?: string | null;
  review_kind?: string | null;
  review_media_key?: string | null;
  thumbnail_media_key?: string | null;
  attempts?: number;
}

/** A write as the media service makes it: for itself (a job) or for the uploading person. */
const viaMedia = (ctx: CallContext): CallContext => viaService(ctx, MEDIA_SERVICE);

export interface RecordsClientOptions {
  address: string;
  internalAuthSecret: string;
  deadlineMs: number;
  metrics?: Metrics;
}

export class MediaRecords {
  private readonly client: GrpcClient<recordsv1.RecordsServiceClient>;

  constructor(private readonly opts: RecordsClientOptions) {
    this.client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address: opts.address,
      internalAuthSecret: opts.internalAuthSecret,
      deadlineMs: opts.deadlineMs,
      metrics: opts.metrics,
    });
  }

  /** The Version (not_found when it does not exist or is retired). */
  async getVersion(id: string, ctx: CallContext): Promise<recordsv1.Record> {
    return (await this.client.call.getRecord({ entityType: 'Version', id }, ctx)).record!;
  }

  async getRepresentation(id: string, ctx: CallContext): Promise<{ record: recordsv1.Record; data: RepresentationData }> {
    const record = (await this.client.call.getRecord({ entityType: 'Representation', id }, ctx)).record!;
    return { record, data: JSON.parse(record.dataJson || '{}') as RepresentationData };
  }

  async createRepresentation(projectId: string | undefined, data: RepresentationData, ctx: CallContext): Promise<recordsv1.Record> {
    const res = await this.client.call.createRecord({ entityType: 'Representation', projectId, dataJson: JSON.stringify(data) }, viaMedia(ctx));
    return res.record!;
  }

  /**
   * The Representation an upload of `originalKey` created for `versionId`, if any (the sweeper's
   * look-up for an upload whose process stopped before its job was queued).
   */
  async findUpload(versionId: string, originalKey: string, ctx: CallContext): Promise<recordsv1.Record | undefined> {
    const res = await this.client.call.queryRecords(
      {
        entityType: 'Representation',
        filtersJson: JSON.stringify([['version', 'is', { type: 'Version', id: versionId }]]),
        order: [{ field: 'created_at', direction: 'desc' }],
        limit: 1000,
        includeTotal: false,
        includeRetired: false,
        answerJson: false,
      },
      ctx,
    );
    return res.items.find((r) => {
      const files = (JSON.parse(r.dataJson || '{}') as RepresentationData).files as { original?: { key?: string } } | undefined;
      return files?.original?.key === originalKey;
    });
  }

  /** One state change of a Representation (merged key by key). */
  async updateRepresentation(id: string, patch: RepresentationData, ctx: CallContext): Promise<recordsv1.Record> {
    const res = await this.client.call.updateRecord({ entityType: 'Representation', id, dataJson: JSON.stringify(patch) }, viaMedia(ctx));
    return res.record!;
  }

  /** Points the Version's `thumbnail_id` (a uuid column) at the Representation whose thumbnail it shows. */
  async setVersionThumbnail(versionId: string, representationId: string, ctx: CallContext): Promise<void> {
    await this.client.call.updateRecord({ entityType: 'Version', id: versionId, thumbnailId: { value: representationId } }, viaMedia(ctx));
  }

  close(): void {
    this.client.close();
  }
}
