import { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import { AppError, newId, type CallContext } from '@reelbase/lib-platform';
import type { mediav1, recordsv1 } from '@reelbase/proto';
import type { MediaPeer } from '../../src/clients/media.client.js';
import { now, type FakeState, type Track } from './fake.state.js';

/**
 * media-transcode in memory: an upload reads its whole stream (limits as MEDIA_MAX_BYTES in
 * the service are left to the gateway here), stores it and answers a pending Representation;
 * reads answer ranges like the service (range_end clamped, a start past the end refused with
 * `range_not_satisfiable` and the size).
 */
export function fakeMedia(state: FakeState, track: Track): MediaPeer {
  state.media ??= new Map();
  state.reviewables ??= new Map();
  state.uploads ??= [];
  return {
    async upload(header: mediav1.UploadHeader, body: Readable, ctx: CallContext) {
      track('media', 'uploadReviewable', header, ctx);
      if (state.uploadStallMs) await new Promise((r) => setTimeout(r, state.uploadStallMs));
      const parts: Buffer[] = [];
      for await (const chunk of body) parts.push(chunk as Buffer);
      const data = Buffer.concat(parts);
      const prefix = `rv/${randomBytes(16).toString('hex')}`;
      const ext = /\.([a-z0-9]{1,10})$/i.exec(header.fileName)?.[1]?.toLowerCase();
      state.media!.set(`${prefix}/original${ext ? `.${ext}` : ''}`, { contentType: header.contentType, data });
      state.uploads!.push({ header, bytes: data.length });
      const id = newId();
      const at = now();
      const representation: recordsv1.Record = {
        id,
        entityType: 'Representation',
        active: true,
        createdBy: ctx.principal?.userId,
        createdAt: at,
        updatedAt: at,
        dataJson: JSON.stringify({ version: { type: 'Version', id: header.versionId }, transcode_status: 'pending', attempts: 0 }),
      };
      state.reviewables!.set(header.versionId, { status: 'pending', representationId: id, attempts: 0 });
      return { representation, status: 'pending' };
    },
    async finishedOutputs(req: mediav1.FinishedOutputsRequest, ctx: CallContext) {
      track('media', 'finishedOutputs', req, ctx);
      return { outputs: req.versionIds.flatMap((id) => state.finished?.get(id) ?? []) };
    },
    async getReviewable(req: mediav1.GetReviewableRequest, ctx: CallContext) {
      track('media', 'getReviewable', req, ctx);
      const r = state.reviewables!.get(req.versionId);
      if (!r) throw AppError.notFound(`Version ${req.versionId} has no reviewable`);
      return r;
    },
    async read(req: mediav1.ReadMediaRequest, ctx: CallContext) {
      track('media', 'readMedia', req, ctx);
      const o = state.media!.get(req.key);
      if (!o) throw AppError.notFound('no media object with this key');
      const size = o.data.length;
      let start = 0;
      let end = size - 1;
      if (req.hasRange) {
        if (req.rangeStart >= size) {
          throw new AppError('bad_request', 'range not satisfiable', { code: 'range_not_satisfiable', extra: { size } });
        }
        start = req.rangeStart;
        end = Math.min(req.rangeEnd, size - 1);
      }
      const etag = `"${createHash('md5').update(o.data).digest('hex')}"`;
      return { info: { contentType: o.contentType, size, etag, rangeStart: start, rangeEnd: end }, body: Readable.from([o.data.subarray(start, end + 1)]) };
    },
  };
}
