/**
 * The ffmpeg argument lists of a job, built once and kept here so they are reviewed together:
 * the original read as a local file with an allowed demuxer only ({@link INPUT}), bounded threads, a bounded duration,
 * no interactive input, and the contracted outputs (docs/media.md, "Outputs").
 */
import type { ProbedSource } from './probe.rules.js';

/** Widest proxy (contract: at most 1920 px wide). */
export const PROXY_MAX_WIDTH = 1920;
/** Widest thumbnail. */
export const THUMB_MAX_WIDTH = 640;
/** Widest web-size JPEG of an image reviewable. */
export const IMAGE_PROXY_MAX_WIDTH = 2048;

export interface PlanLimits {
  threads: number;
  /** Longest output in seconds (the proxy never runs past it whatever the header says). */
  maxDurationS: number;
}

const COMMON = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y'];

/**
 * The thread bound of a run (`TRANSCODE_THREADS`, the CPUs one run may keep busy): `-threads`
 * before the input bounds the decoder, `-filter_threads` the filter graph, and `-threads` again as
 * an output option the encoder. Without the last one libx264 takes 1.5 threads per core the
 * process can see — on a 64-core node, 96 threads for a pod given 2 CPUs. libx264 gets that same
 * 1.5 per CPU of the bound (frame threads wait on each other's reference rows, so it needs more
 * threads than cores to keep them busy): 3 for the default 2, as it would pick on a 2-core machine.
 */
const boundThreads = (limits: PlanLimits) => ['-filter_threads', String(limits.threads), '-threads', String(limits.threads)];
const encoderThreads = (limits: PlanLimits, perCpu = 1) => ['-threads', String(Math.ceil(limits.threads * perCpu))];
/** libx264's own threads per CPU. */
const X264_THREADS_PER_CPU = 1.5;
/**
 * The demuxers an original may be read with (ffmpeg's names; `mov` is mov/mp4/m4a/3gp/3g2/mj2,
 * `matroska` is Matroska and WebM): movie containers and single-picture formats, none of which
 * opens another file. Playlists and lists of files (`hls`, `dash`, `concat`, `ffmetadata`,
 * `subfile`, ...), `image2` sequences, `svg_pipe` (an SVG may name other files), `tty` text and
 * every other demuxer are refused: the probe fails and the upload ends `failed` (docs/media.md,
 * "ffmpeg, safely").
 */
export const INPUT_FORMATS = [
  'mov',
  'matroska',
  'avi',
  'mxf',
  'mpegts',
  'mpeg',
  'gif',
  'apng',
  'png_pipe',
  'jpeg_pipe',
  'tiff_pipe',
  'exr_pipe',
  'dpx_pipe',
  'bmp_pipe',
  'webp_pipe',
  'psd_pipe',
  'j2k_pipe',
  'jpegxl_pipe',
  'gif_pipe',
  'sgi_pipe',
  'qoi_pipe',
  'pam_pipe',
  'ppm_pipe',
  'pgm_pipe',
  'pbm_pipe',
  'hdr_pipe',
  'dds_pipe',
] as const;

/**
 * Options before the original's `-i` (ffprobe and every ffmpeg run): the `file` protocol alone
 * (no network, no `pipe`, no `subfile` or `concat` protocol) and only {@link INPUT_FORMATS}, so
 * nothing but the downloaded original, a plain local path, is ever opened.
 */
export const INPUT = ['-protocol_whitelist', 'file', '-format_whitelist', INPUT_FORMATS.join(',')];

/**
 * A scale filter that keeps the aspect ratio, never upscales, caps the width at `maxWidth`, and
 * makes both sides even (yuv420p and H.264 need even dimensions): odd sources lose one pixel.
 */
export function scaleFilter(maxWidth: number): string {
  return `scale=w='min(${maxWidth},trunc(iw/2)*2)':h=-2:flags=bicubic,setsar=1`;
}

/** Where in the source the thumbnail frame is taken: a second in (past fades from black), or the first frame of a clip under 2 s. */
export function thumbnailSeekS(source: ProbedSource): number {
  return source.kind === 'video' && source.durationS >= 2 ? 1 : 0;
}

/**
 * ffmpeg arguments of one frame as a JPEG (`seekS` into the source), at most `maxWidth` wide, at
 * JPEG quality `quality` (2 best): the thumbnail, and an image's proxy.
 */
function jpegFrameArgs(input: string, output: string, limits: PlanLimits, o: { seekS: number; maxWidth: number; quality: number }): string[] {
  return [
    ...COMMON,
    ...boundThreads(limits),
    ...(o.seekS > 0 ? ['-ss', o.seekS.toFixed(3)] : []),
    ...INPUT,
    '-i',
    input,
    '-map',
    '0:v:0',
    '-frames:v',
    '1',
    '-vf',
    `${scaleFilter(o.maxWidth)},format=yuvj420p`,
    '-q:v',
    String(o.quality),
    '-f',
    'image2',
    '-c:v',
    'mjpeg',
    ...encoderThreads(limits),
    output,
  ];
}

/** ffmpeg arguments of the thumbnail JPEG. */
export function thumbnailArgs(input: string, output: string, source: ProbedSource, limits: PlanLimits): string[] {
  return jpegFrameArgs(input, output, limits, { seekS: thumbnailSeekS(source), maxWidth: THUMB_MAX_WIDTH, quality: 3 });
}

/**
 * ffmpeg arguments of the proxy: an H.264/AAC MP4 (yuv420p, faststart, even sides, <= 1920 wide,
 * a silent stereo track when the source has no sound) for a video; a web-size JPEG for an image.
 */
export function proxyArgs(input: string, output: string, source: ProbedSource, limits: PlanLimits, opts: { realtime?: boolean } = {}): string[] {
  if (source.kind === 'image') return jpegFrameArgs(input, output, limits, { seekS: 0, maxWidth: IMAGE_PROXY_MAX_WIDTH, quality: 2 });
  const audioIn = source.hasAudio ? [] : ['-f', 'lavfi', '-i', 'anullsrc=channel_layout=stereo:sample_rate=48000'];
  return [
    ...COMMON,
    ...boundThreads(limits),
    ...(opts.realtime ? ['-re'] : []),
    ...INPUT,
    '-i',
    input,
    ...audioIn,
    '-map',
    '0:v:0',
    '-map',
    source.hasAudio ? '0:a:0' : '1:a:0',
    '-vf',
    scaleFilter(PROXY_MAX_WIDTH),
    '-c:v',
    'libx264',
    ...encoderThreads(limits, X264_THREADS_PER_CPU),
    '-preset',
    'veryfast',
    '-crf',
    '23',
    '-pix_fmt',
    'yuv420p',
    '-profile:v',
    'high',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-ac',
    '2',
    '-ar',
    '48000',
    // The silent track is endless: stop with the picture. A header's duration claim is capped too.
    '-shortest',
    '-t',
    String(limits.maxDurationS),
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    output,
  ];
}
