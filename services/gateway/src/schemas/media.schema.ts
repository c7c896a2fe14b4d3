/**
 * Schemas of the reviewable and media routes (docs/api-notes.md, "Media and reviewables"; docs/media.md).
 */
import { mediaPolicy } from '@reelbase/lib-platform';
import { z } from 'zod';
import { Uuid } from './common.schema.js';
import { RecordOut } from './record.schema.js';

export const VersionPath = z.strictObject({ id: Uuid.describe('The Version.') });
export const KeyPath = z.strictObject({
  key: z.string().describe('A media key as answered by the reviewable routes, e.g. `rv/<32 hex digits>/proxy.mp4` (slashes unencoded).'),
});

export const ReviewableStatus = z.enum(mediaPolicy.TRANSCODE_STATUSES);

export const UploadOut = z
  .object({ representation: RecordOut, status: ReviewableStatus })
  .meta({ id: 'ReviewableUpload', description: 'The Representation created for the upload, and its transcode status (`pending`).' });

export const ReviewableOut = z
  .object({
    status: ReviewableStatus,
    review_kind: z.enum(mediaPolicy.REVIEW_KINDS).nullable(),
    review_media_key: z.string().nullable(),
    thumbnail_media_key: z.string().nullable(),
    representation_id: z.string(),
    attempts: z.number().int(),
    transcode_error: z.string().nullable(),
  })
  .meta({ id: 'Reviewable', description: 'The latest reviewable of a Version.' });
