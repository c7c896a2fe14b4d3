import { describe, expect, it } from 'vitest';
import { mediav1 } from '@reelbase/proto';
import { encodeChunkMessage } from './media.client.js';

describe('encodeChunkMessage', () => {
  it('encodes pieces as one chunk message, byte for byte what the generated encoder makes of them', () => {
    for (const sizes of [[0], [1], [127], [128], [16_383, 1], [65_536, 65_536, 65_536, 65_536], [100, 300_000, 7], [2_097_152]]) {
      const pieces = sizes.map((n, i) => Buffer.alloc(n, i + 1));
      const size = sizes.reduce((a, b) => a + b, 0);
      const whole = Buffer.concat(pieces);
      const expected = Buffer.from(mediav1.UploadReviewableRequest.encode({ payload: { $case: 'chunk', value: whole } }).finish());
      const got = encodeChunkMessage(pieces, size);
      expect(Buffer.compare(got, expected)).toBe(0);
      const back = mediav1.UploadReviewableRequest.decode(got);
      if (back.payload?.$case !== 'chunk') throw new Error('not a chunk');
      expect(Buffer.compare(back.payload.value, whole)).toBe(0);
    }
  });
});
