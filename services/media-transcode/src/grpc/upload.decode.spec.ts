import { describe, expect, it } from 'vitest';
import { mediav1 } from '@reelbase/proto';
import { decodeUploadRequest } from './upload.decode.js';

const encode = (m: mediav1.UploadReviewableRequest) => Buffer.from(mediav1.UploadReviewableRequest.encode(m).finish());

describe('decodeUploadRequest', () => {
  it('decodes a chunk as a view of the received buffer, equal to the generated decoder', () => {
    for (const size of [0, 1, 127, 128, 16_383, 16_384, 65_536, 300_000]) {
      const data = Buffer.alloc(size, 7);
      if (size > 0) data[size - 1] = 9;
      const wire = encode({ payload: { $case: 'chunk', value: data } });
      const got = decodeUploadRequest(wire);
      expect(got).toEqual(mediav1.UploadReviewableRequest.decode(wire));
      if (got.payload?.$case !== 'chunk') throw new Error('not a chunk');
      expect(Buffer.compare(got.payload.value, data)).toBe(0);
      if (size > 0) expect(got.payload.value.buffer).toBe(wire.buffer);
    }
  });

  it('leaves the header and anything unusual to the generated decoder', () => {
    const header = encode({ payload: { $case: 'header', value: { versionId: 'v', fileName: 'a.mov', contentType: 'video/quicktime', declaredSize: 5 } } });
    expect(decodeUploadRequest(header)).toEqual(mediav1.UploadReviewableRequest.decode(header));
    // A chunk followed by an unknown field: not the whole message, so the generated decoder reads it.
    const odd = Buffer.concat([encode({ payload: { $case: 'chunk', value: Buffer.from('abc') } }), Buffer.from([0x18, 0x01])]);
    expect(decodeUploadRequest(odd)).toEqual(mediav1.UploadReviewableRequest.decode(odd));
    // A truncated length prefix.
    expect(() => decodeUploadRequest(Buffer.from([0x12, 0xff]))).toThrow();
  });
});
