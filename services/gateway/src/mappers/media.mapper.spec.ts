import { AppError } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { mediaHeaders, reviewableJson, uploadJson } from './media.mapper.js';

const REP = { id: 'r', entityType: 'Representation', active: true, createdAt: 'a', updatedAt: 'b', dataJson: '{"name":"n"}' };
const INFO = { contentType: '', size: 3, etag: '"e"', rangeStart: 0, rangeEnd: 2 };

describe('media mapper', () => {
  it('answers an upload with its Representation and status (pending when unsaid); none is a 500', () => {
    expect(JSON.parse(uploadJson({ representation: REP, status: '' }))).toMatchObject({ representation: { id: 'r', data: { name: 'n' } }, status: 'pending' });
    expect(() => uploadJson({ status: 'pending' })).toThrow(AppError);
  });

  it('answers a reviewable with nulls for what is not there yet', () => {
    expect(reviewableJson({ status: 'processing', representationId: 'r', attempts: 1 })).toEqual({
      status: 'processing',
      review_kind: null,
      review_media_key: null,
      thumbnail_media_key: null,
      representation_id: 'r',
      attempts: 1,
      transcode_error: null,
    });
  });

  it('serves images and videos inline, anything else as an attachment named after the key', () => {
    expect(mediaHeaders('rv/0/proxy.mp4', { ...INFO, contentType: 'video/mp4' })['content-disposition']).toBeUndefined();
    const other = mediaHeaders('rv/0/original.exr', INFO);
    expect(other).toMatchObject({ 'content-type': 'application/octet-stream', etag: '"e"', 'x-content-type-options': 'nosniff' });
    expect(other['content-disposition']).toBe('attachment; filename="original.exr"');
  });
});
