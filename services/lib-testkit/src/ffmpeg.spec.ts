import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findFfmpeg, whichBinary } from './ffmpeg.js';

const dir = mkdtempSync(join(tmpdir(), 'ffmpeg-spec-'));
for (const name of ['ffmpeg', 'ffprobe']) {
  writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, name), 0o755);
}
writeFileSync(join(dir, 'not-executable'), '');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('findFfmpeg', () => {
  it('finds both binaries on PATH', () => {
    expect(findFfmpeg({ PATH: `/nonexistent:${dir}` })).toEqual({ ffmpeg: join(dir, 'ffmpeg'), ffprobe: join(dir, 'ffprobe') });
  });

  it('prefers FFMPEG_PATH and FFPROBE_PATH', () => {
    expect(findFfmpeg({ PATH: '', FFMPEG_PATH: join(dir, 'ffmpeg'), FFPROBE_PATH: join(dir, 'ffprobe') })).toEqual({
      ffmpeg: join(dir, 'ffmpeg'),
      ffprobe: join(dir, 'ffprobe'),
    });
  });

  it('is undefined when one is missing or not executable', () => {
    expect(findFfmpeg({ PATH: '/nonexistent' })).toBeUndefined();
    expect(findFfmpeg({ PATH: '', FFMPEG_PATH: join(dir, 'not-executable'), FFPROBE_PATH: join(dir, 'ffprobe') })).toBeUndefined();
    expect(whichBinary('not-executable', { PATH: dir })).toBeUndefined();
  });
});
