/**
 * Frame lists of farm jobs (docs/farm.md, "Jobs and chunks"): `1001-1100`, `1-10,20-40x2`, `7`.
 * A list is expanded in order (ranges ascending, `xN` steps) and cut into chunks of `chunkSize`
 * consecutive frames of that list; each chunk's frames are written back compactly (`1001-1010`,
 * `20,22,24`).
 */
import { farmPolicy } from '@reelbase/lib-platform';

/**
 * Most frames one job may list once expanded, and most chunks it may be cut into (docs/farm.md,
 * "Bounds"): a job's chunks are inserted in its create's transaction, and its frames are held in
 * memory while they are cut.
 */
export const MAX_FRAMES = farmPolicy.LIMITS.frames;
export const MAX_CHUNKS = farmPolicy.LIMITS.chunks;
/** Largest frame number. */
export const MAX_FRAME = 100_000_000;

/** Why a frame list is refused: a sentence for the 422's `msg`. */
export class FramesError extends Error {}

const ITEM = /^(\d{1,9})(?:-(\d{1,9})(?:x(\d{1,9}))?)?$/;

/** Expands a frame list; throws FramesError for anything malformed, empty, duplicated or too long. */
export function expandFrames(spec: string): number[] {
  const text = spec.replace(/\s+/g, '');
  if (text === '') throw new FramesError('a frame list cannot be empty');
  const frames: number[] = [];
  const seen = new Set<number>();
  for (const item of text.split(',')) {
    const m = ITEM.exec(item);
    if (!m) throw new FramesError(`'${item.slice(0, 40)}' is not a frame, a range 'A-B' or a stepped range 'A-BxN'`);
    const start = Number(m[1]);
    const end = m[2] === undefined ? start : Number(m[2]);
    const step = m[3] === undefined ? 1 : Number(m[3]);
    if (end > MAX_FRAME || start > MAX_FRAME) throw new FramesError(`frame numbers go up to ${MAX_FRAME}`);
    if (end < start) throw new FramesError(`the range '${item}' ends before it starts`);
    if (step < 1) throw new FramesError(`the step of '${item}' must be at least 1`);
    if (frames.length + Math.floor((end - start) / step) + 1 > MAX_FRAMES) throw new FramesError(`a job lists at most ${MAX_FRAMES} frames`);
    for (let f = start; f <= end; f += step) {
      if (seen.has(f)) throw new FramesError(`frame ${f} is listed twice`);
      seen.add(f);
      frames.push(f);
    }
  }
  return frames;
}

/** `frames` written compactly: runs of consecutive frames as `A-B`, every other frame alone, in list order. */
export function compactFrames(frames: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < frames.length) {
    let j = i;
    while (j + 1 < frames.length && frames[j + 1] === frames[j]! + 1) j += 1;
    parts.push(j > i ? `${frames[i]}-${frames[j]}` : String(frames[i]));
    i = j + 1;
  }
  return parts.join(',');
}

/** The chunks of a job: each chunk's compact frames, or one chunk without frames (null). */
export function chunkFrames(spec: string | undefined, chunkSize: number): (string | null)[] {
  if (spec === undefined) return [null];
  const frames = expandFrames(spec);
  const count = Math.ceil(frames.length / chunkSize);
  if (count > MAX_CHUNKS) throw new FramesError(`${frames.length} frames in chunks of ${chunkSize} make ${count} chunks; a job has at most ${MAX_CHUNKS}`);
  const chunks: string[] = [];
  for (let i = 0; i < frames.length; i += chunkSize) chunks.push(compactFrames(frames.slice(i, i + chunkSize)));
  return chunks;
}
