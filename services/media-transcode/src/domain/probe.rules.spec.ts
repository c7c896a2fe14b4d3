import { describe, expect, it } from 'vitest';
import { interpretProbe, type ProbeJson } from './probe.rules.js';
import { TranscodeFailure } from './transcode.failure.js';

const video = (extra: Partial<NonNullable<ProbeJson['streams']>[number]> = {}) => ({
  codec_type: 'video',
  codec_name: 'h264',
  width: 1920,
  height: 1080,
  ...extra,
});

describe('interpretProbe', () => {
  it('reads a video with and without sound', () => {
    const withAudio = interpretProbe(
      { streams: [video(), { codec_type: 'audio', codec_name: 'aac' }], format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '12.5' } },
      3600,
    );
    expect(withAudio).toEqual({ kind: 'video', width: 1920, height: 1080, hasAudio: true, durationS: 12.5 });
    expect(interpretProbe({ streams: [video()], format: { format_name: 'matroska,webm', duration: '2' } }, 3600).hasAudio).toBe(false);
  });

  it('reads a still image in an image container or as a single picture', () => {
    expect(interpretProbe({ streams: [video({ codec_name: 'png', width: 800, height: 600 })], format: { format_name: 'png_pipe' } }, 3600).kind).toBe('image');
    expect(interpretProbe({ streams: [video({ codec_name: 'mjpeg', nb_frames: '1' })], format: { format_name: 'image2' } }, 3600).kind).toBe('image');
    // An MJPEG movie is a video.
    expect(interpretProbe({ streams: [video({ codec_name: 'mjpeg', nb_frames: '250' })], format: { format_name: 'avi', duration: '10' } }, 3600).kind).toBe(
      'video',
    );
  });

  it('prefers the real picture over cover art', () => {
    const r = interpretProbe(
      {
        streams: [video({ width: 300, height: 300, disposition: { attached_pic: 1 } }), video({ width: 640, height: 360 })],
        format: { format_name: 'mov', duration: '3' },
      },
      3600,
    );
    expect(r.width).toBe(640);
  });

  it('refuses sound only, no streams, no size, absurd sizes and claimed durations past the limit, with a readable reason', () => {
    const reason = (p: ProbeJson, max = 3600) => {
      try {
        interpretProbe(p, max);
      } catch (err) {
        expect(err).toBeInstanceOf(TranscodeFailure);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(reason({ streams: [{ codec_type: 'audio' }] })).toMatch(/sound but no picture/);
    expect(reason({ streams: [] })).toMatch(/no picture/);
    expect(reason({})).toMatch(/no picture/);
    expect(reason({ streams: [video({ width: 0, height: 0 })] })).toMatch(/no size/);
    expect(reason({ streams: [video({ width: 100_000, height: 10 })] })).toMatch(/at most 16384/);
    expect(reason({ streams: [video()], format: { format_name: 'mov', duration: '36000' } }, 600)).toBe(
      'the video claims to last 10 h 0 min, longer than the 10 min 0 s a reviewable may last',
    );
    expect(reason({ streams: [video({ duration: '7300' })], format: { format_name: 'mov', duration: '3' } }, 7200)).toMatch(/2 h 1 min/);
  });
});
