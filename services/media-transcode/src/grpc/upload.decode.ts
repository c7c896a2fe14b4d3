/**
 * The `UploadReviewable` request decoder. The generated one copies every `chunk` out of the
 * message gRPC received (`Buffer.from(reader.bytes())`), one more copy of every uploaded byte;
 * a message that is exactly one `chunk` field is decoded here as a view of the received buffer
 * instead. Anything else (the header, an unusual encoding) goes to the generated decoder.
 */
import { mediav1 } from '@reelbase/proto';

/** Field 2 (`chunk`), wire type 2 (length-delimited). */
const CHUNK_TAG = 18;

/** A base-128 varint at `pos`: [value, next position], or null when it does not fit. */
function varint(buf: Buffer, pos: number): [number, number] | null {
  let value = 0;
  let scale = 1;
  for (let i = pos; i < buf.length && i < pos + 5; i++) {
    const b = buf[i]!;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return [value, i + 1];
    scale *= 128;
  }
  return null;
}

export function decodeUploadRequest(buf: Buffer): mediav1.UploadReviewableRequest {
  if (buf[0] === CHUNK_TAG) {
    const len = varint(buf, 1);
    if (len && len[1] + len[0] === buf.length) return { payload: { $case: 'chunk', value: buf.subarray(len[1]) } };
  }
  return mediav1.UploadReviewableRequest.decode(buf);
}

/** The media service definition with the upload decoder above. */
export const mediaServiceDefinition: typeof mediav1.MediaServiceService = {
  ...mediav1.MediaServiceService,
  uploadReviewable: { ...mediav1.MediaServiceService.uploadReviewable, requestDeserialize: decodeUploadRequest },
};
