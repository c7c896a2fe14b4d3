/**
 * What ffprobe's JSON says about an uploaded original, turned into what the transcode needs
 * (kind, size, audio, duration) or a readable reason why it cannot be made reviewable.
 */
import type { mediaPolicy } from '@reelbase/lib-platform';
import { TranscodeFailure } from './transcode.failure.js';

/** The parts of `ffprobe -show_format -show_streams -print_format json` read here. */
export interface ProbeJson {
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    duration?: string;
    nb_frames?: string;
    disposition?: { attached_pic?: number };
  }[];
  format?: { format_name?: string; duration?: string; nb_streams?: number };
}

/** A source the transcode can work on. */
export interface ProbedSource {
  kind: mediaPolicy.ReviewKind;
  width: number;
  height: number;
  hasAudio: boolean;
  /** Seconds; 0 for an image. */
  durationS: number;
}

/** Container formats of single pictures (ffmpeg's image demuxers). */
const IMAGE_FORMAT =
  /(^|,)(image2|png_pipe|jpeg_pipe|webp_pipe|bmp_pipe|tiff_pipe|gif|gif_pipe|exr_pipe|dpx_pipe|psd_pipe|j2k_pipe|jpegxl_pipe|qoi_pipe|sgi_pipe|pam_pipe|ppm_pipe|pgm_pipe|pbm_pipe|targa|xbm_pipe|svg_pipe|hdr_pipe|pictor_pipe|phm_pipe|pfm_pipe|photocd_pipe|dds_pipe)(,|$)/;

/** Picture codecs without motion (a single frame in an image container). */
const IMAGE_CODECS = new Set([
  'mjpeg',
  'png',
  'webp',
  'bmp',
  'tiff',
  'gif',
  'exr',
  'dpx',
  'psd',
  'jpeg2000',
  'jpegxl',
  'targa',
  'sgi',
  'qoi',
  'ppm',
  'pgm',
  'pam',
]);

/** Largest picture side accepted (16K); larger claims are refused before decoding. */
export const MAX_SIDE = 16_384;

function formatDuration(s: number): string {
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.floor(s % 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${sec} s` : `${sec} s`;
}

/**
 * Classifies a probed original. Throws {@link TranscodeFailure} with a reason a user can act on:
 * no picture at all, absurd dimensions, or a duration beyond `maxDurationS`.
 */
export function interpretProbe(probe: ProbeJson, maxDurationS: number): ProbedSource {
  const streams = probe.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic) ?? streams.find((s) => s.codec_type === 'video');
  if (!video) {
    if (streams.some((s) => s.codec_type === 'audio')) throw new TranscodeFailure('the file has sound but no picture; upload a video or an image');
    throw new TranscodeFailure('the file contains no picture that can be decoded (not a video or image format ffmpeg reads)');
  }
  const width = video.width ?? 0;
  const height = video.height ?? 0;
  if (width <= 0 || height <= 0) throw new TranscodeFailure('the picture has no size: the file is damaged or not a supported video or image');
  if (width > MAX_SIDE || height > MAX_SIDE) throw new TranscodeFailure(`the picture is ${width}x${height}; at most ${MAX_SIDE} pixels per side are supported`);
  const formatName = probe.format?.format_name ?? '';
  const durations = [probe.format?.duration, video.duration].map((d) => Number(d)).filter((d) => Number.isFinite(d) && d > 0);
  const durationS = durations.length ? Math.max(...durations) : 0;
  const frames = Number(video.nb_frames);
  const isImage =
    IMAGE_FORMAT.test(formatName) || (IMAGE_CODECS.has(video.codec_name ?? '') && (frames === 1 || durationS === 0) && video.codec_name !== 'gif');
  if (isImage) return { kind: 'image', width, height, hasAudio: false, durationS: 0 };
  if (durationS > maxDurationS) {
    throw new TranscodeFailure(`the video claims to last ${formatDuration(durationS)}, longer than the ${formatDuration(maxDurationS)} a reviewable may last`);
  }
  return { kind: 'video', width, height, hasAudio: streams.some((s) => s.codec_type === 'audio'), durationS };
}
