/**
 * media-transcode's gRPC messages in their client form (docs/api-notes.md, "Media and
 * reviewables"; docs/media.md): an upload's answer, a reviewable's status, and the headers of a
 * stored object.
 */
import { AppError, type mediaPolicy } from '@reelbase/lib-platform';
import type { mediav1 } from '@reelbase/proto';
import type { z } from 'zod';
import type { ReviewableOut, ReviewableStatus } from '../schemas/media.schema.js';
import { recordJson } from './record.mapper.js';

/** The answer of an upload (`ReviewableUpload`) as JSON text: the Representation as records wrote it, and its status. */
export function uploadJson(out: mediav1.UploadReviewableResponse): string {
  if (!out.representation) throw new AppError('internal', 'media-transcode answered without the representation');
  return `{"representation":${recordJson(out.representation)},"status":${JSON.stringify(out.status || 'pending')}}`;
}

/** The latest reviewable of a Version (`Reviewable`). */
export function reviewableJson(r: mediav1.GetReviewableResponse): z.input<typeof ReviewableOut> {
  return {
    status: r.status as z.infer<typeof ReviewableStatus>,
    review_kind: (r.reviewKind ?? null) as mediaPolicy.ReviewKind | null,
    review_media_key: r.reviewMediaKey ?? null,
    thumbnail_media_key: r.thumbnailMediaKey ?? null,
    representation_id: r.representationId,
    attempts: r.attempts,
    transcode_error: r.transcodeError ?? null,
  };
}

/** The headers every answer of the stored object `key` carries, and the disposition of a type that is not an image or a video. */
export function mediaHeaders(key: string, info: mediav1.MediaInfo): Record<string, string> {
  const type = info.contentType || 'application/octet-stream';
  const headers: Record<string, string> = {
    'content-type': type,
    etag: info.etag,
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
    // Keys never change what they hold (a new upload gets a new random key).
    'cache-control': 'private, max-age=86400, immutable',
    // A stored file is never a page of this origin: no scripts, no plugins, even opened directly.
    'content-security-policy': "default-src 'none'; sandbox",
  };
  if (!/^(image|video)\//i.test(type)) headers['content-disposition'] = `attachment; filename="${key.slice(key.lastIndexOf('/') + 1)}"`;
  return headers;
}
