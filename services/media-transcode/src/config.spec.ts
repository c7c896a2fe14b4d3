import { describe, expect, it } from 'vitest';
import { ConfigError } from '@reelbase/lib-platform';
import { parseMediaApiConfig, parseMediaWorkerConfig } from './config.js';

const base = { INTERNAL_AUTH_SECRET: 'x'.repeat(32), S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY: 'a', S3_SECRET_KEY: 'b' };

describe('media-transcode configuration', () => {
  it('has the documented defaults', () => {
    const api = parseMediaApiConfig(base);
    expect(api.MEDIA_MAX_BYTES).toBe(8 * 1024 ** 3);
    expect(api.S3_BUCKET).toBe('reelbase-media');
    const worker = parseMediaWorkerConfig(base);
    expect(worker.TRANSCODE_MAX_ATTEMPTS).toBe(2);
    expect(worker.TRANSCODE_FAULT).toBeUndefined();
  });

  it('reports every problem at once', () => {
    try {
      parseMediaWorkerConfig({ INTERNAL_AUTH_SECRET: 'x'.repeat(32), S3_ENDPOINT: 'ftp://x', TRANSCODE_MAX_ATTEMPTS: '0', TRANSCODE_FAULT: 'explode' });
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const text = (err as ConfigError).problems.join('\n');
      for (const key of ['S3_ENDPOINT', 'S3_ACCESS_KEY', 'S3_SECRET_KEY', 'TRANSCODE_MAX_ATTEMPTS', 'TRANSCODE_FAULT']) expect(text).toContain(key);
    }
  });
});
