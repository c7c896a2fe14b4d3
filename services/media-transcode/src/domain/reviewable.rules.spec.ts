import { describe, expect, it } from 'vitest';
import { decideDelivery, storedContentType } from './reviewable.rules.js';
import { reasonFromStderr } from './transcode.failure.js';

describe('decideDelivery', () => {
  it('skips finished reviewables', () => {
    expect(decideDelivery('done', 1, 2, null)).toEqual({ action: 'skip', why: 'already done' });
    expect(decideDelivery('failed', 2, 2, 'x')).toMatchObject({ action: 'skip' });
  });

  it('runs the next attempt while attempts remain', () => {
    expect(decideDelivery('pending', 0, 2, null)).toEqual({ action: 'run', attempt: 1 });
    expect(decideDelivery('processing', 1, 2, null)).toEqual({ action: 'run', attempt: 2 });
  });

  it('gives up after the set attempts with the last reason, or says the worker stopped', () => {
    expect(decideDelivery('processing', 2, 2, 'the file is empty (0 bytes)')).toEqual({ action: 'give_up', reason: 'the file is empty (0 bytes)' });
    expect(decideDelivery('processing', 2, 2, null)).toEqual({
      action: 'give_up',
      reason: 'the transcode was interrupted 2 times (the worker stopped before it finished)',
    });
  });
});

describe('storedContentType', () => {
  it('keeps plain media types and refuses anything else', () => {
    expect(storedContentType('video/QuickTime')).toBe('video/quicktime');
    expect(storedContentType('image/png; charset=binary')).toBe('image/png');
    expect(storedContentType('text/html')).toBe('application/octet-stream');
    expect(storedContentType('video/mp4\r\nX-Evil: 1')).toBe('application/octet-stream');
    expect(storedContentType('')).toBe('application/octet-stream');
  });
});

describe('reasonFromStderr', () => {
  it('turns ffmpeg complaints into sentences', () => {
    expect(reasonFromStderr('ffprobe', '[mov,mp4 @ 0x55] moov atom not found\nin.mp4: Invalid data found when processing input')).toMatch(/incomplete/);
    expect(reasonFromStderr('ffprobe', 'in.mov: Invalid data found when processing input')).toMatch(/not a video or image/);
    expect(reasonFromStderr('ffmpeg', 'something nobody expected')).toMatch(/could not be converted/);
  });
});
