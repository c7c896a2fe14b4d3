/**
 * What the gateway and media-transcode both say of reviewables (docs/media.md; docs/api-notes.md,
 * "Media and reviewables"), written once.
 */

/** A reviewable's transcode status, as `GET /versions/{id}/reviewable` answers it. */
export const TRANSCODE_STATUSES = ['pending', 'processing', 'done', 'failed'] as const;
/** What a reviewable is once its source is probed. */
export const REVIEW_KINDS = ['video', 'image'] as const;
export type ReviewKind = (typeof REVIEW_KINDS)[number];
/** The largest reviewable accepted by default (`MEDIA_MAX_BYTES`, 8 GiB), in both services. */
export const MEDIA_MAX_BYTES_DEFAULT = 8 * 1024 ** 3;
