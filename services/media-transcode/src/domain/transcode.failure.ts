/**
 * A transcode that cannot succeed for a reason about the file itself, phrased for the user who
 * uploaded it (it becomes the Representation's `transcode_error`, never an ffmpeg dump).
 */
export class TranscodeFailure extends Error {
  override readonly name = 'TranscodeFailure';
}

/** Known ffmpeg/ffprobe complaints and the reason shown instead. First match wins. */
const REASONS: [RegExp, string][] = [
  [
    /\[(hls|applehttp|dash|concat|ffmetadata|webm_dash_manifest|image2|image2pipe|tee|subfile)\s@[^\]]*\] Format not on whitelist/i,
    'the file is a playlist or a list of other files, not a video or image; upload the media itself',
  ],
  [/Format not on whitelist|Protocol '[^']*' not on whitelist/i, 'the file is not a video or image format that review uploads accept'],
  [/moov atom not found/i, 'the MP4/MOV file is incomplete (its index is missing: the upload or the render was cut short)'],
  [/Invalid data found when processing input/i, 'the file is not a video or image format that can be decoded'],
  [/could not find codec parameters|unspecified size/i, 'the video stream cannot be decoded (unknown or damaged codec data)'],
  [/(decoding|decoder).*(not found|unsupported)|Decoder \(codec .*\) not found/i, 'the video uses a codec that is not supported'],
  [/Output file is empty|does not contain any stream|Output file #0 does not contain any stream/i, 'no picture could be decoded from the file'],
  [/(truncat|End of file|partial file|stream ends prematurely)/i, 'the file is truncated: it ends before the picture data does'],
  [/Error while decoding|corrupt|error reading header|invalid NAL/i, 'the picture data is damaged and cannot be decoded'],
  [/Cannot allocate memory/i, 'the picture is too large to decode'],
];

/** A readable reason for a failed ffmpeg/ffprobe run from the tail of its stderr. */
export function reasonFromStderr(tool: 'ffmpeg' | 'ffprobe', stderr: string): string {
  for (const [pattern, reason] of REASONS) if (pattern.test(stderr)) return reason;
  return tool === 'ffprobe'
    ? 'the file is not a video or image format that can be decoded'
    : 'the file could not be converted (the picture data cannot be decoded)';
}
