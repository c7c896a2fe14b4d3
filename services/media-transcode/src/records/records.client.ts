/**
 * The records calls of media-transcode, over lib-platform's {@link RecordsClient}: reading a
 * Version, creating the Representation as the uploading principal, and every state change as an
 * UpdateRecord (so each one is an event). Every write says it is made through the media service
 * (`Principal.via`, the client's `via`), the only writer of a Representation's transcode fields
 * (docs/api-notes.md, "Roles and who may write").
 */
import { MEDIA_SERVICE, RecordsClient, type CallContext, type RecordsClientOptions } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import type { MediaRecordsPort, RepresentationData } from '../domain/ports.js';

/** The records client of media-transcode: every write goes through the media service. */
export function mediaRecordsClient(opts: Omit<RecordsClientOptions, 'via'>): RecordsClient {
  return new RecordsClient({ ...opts, via: MEDIA_SERVICE });
}

/** The records port (`MediaRecordsPort`) on lib-platform's {@link RecordsClient}. */
export class MediaRecords implements MediaRecordsPort<recordsv1.Record> {
  constructor(private readonly records: RecordsClient) {}

  /** The Version (not_found when it does not exist or is retired). */
  async getVersion(id: string, ctx: CallContext): Promise<recordsv1.Record> {
    return this.records.get('Version', id, ctx);
  }

  async getRepresentation(id: string, ctx: CallContext): Promise<{ record: recordsv1.Record; data: RepresentationData }> {
    const record = await this.records.get('Representation', id, ctx);
    return { record, data: JSON.parse(record.dataJson || '{}') as RepresentationData };
  }

  async createRepresentation(projectId: string | undefined, data: RepresentationData, ctx: CallContext): Promise<recordsv1.Record> {
    return this.records.create({ entityType: 'Representation', projectId, dataJson: JSON.stringify(data) }, ctx);
  }

  /**
   * The Representation an upload of `originalKey` created for `versionId`, if any (the sweeper's
   * look-up for an upload whose process stopped before its job was queued).
   */
  async findUpload(versionId: string, originalKey: string, ctx: CallContext): Promise<recordsv1.Record | undefined> {
    const res = await this.records.query(
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
    return this.records.update({ entityType: 'Representation', id, dataJson: JSON.stringify(patch) }, ctx);
  }

  /** Points the Version's `thumbnail_id` (a uuid column) at the Representation whose thumbnail it shows. */
  async setVersionThumbnail(versionId: string, representationId: string, ctx: CallContext): Promise<void> {
    await this.records.update({ entityType: 'Version', id: versionId, thumbnailId: { value: representationId } }, ctx);
  }
}
