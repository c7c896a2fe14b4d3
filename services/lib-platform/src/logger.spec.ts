import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from './logger.js';

describe('redactUrl', () => {
  it('cuts share tokens in paths to their first 6 characters', () => {
    const token = 'AbCdEf0123456789abcdefghijklmnopqrstuvwxyzQ';
    expect(redactUrl(`/shared/${token}`)).toBe('/shared/AbCdEf[redacted]');
    expect(redactUrl(`/shared/${token}/notes?x=1`)).toBe('/shared/AbCdEf[redacted]/notes?x=1');
    expect(redactUrl(`/review/${token}`)).toBe('/review/AbCdEf[redacted]');
    expect(redactUrl(`/share/${token}?token=t`)).toBe('/share/AbCdEf[redacted]?token=[redacted]');
    expect(redactUrl(`/SHARED/${token}`)).not.toContain(token);
    expect(redactUrl('/shared/abc')).toBe('/shared/abc');
    expect(redactUrl(`/media/sh/${token}${token}/proxy.mp4`)).toBe('/media/sh/AbCdEf[redacted]/proxy.mp4');
    expect(redactUrl(`/playlists/${token}/share`)).toBe(`/playlists/${token}/share`);
  });

  it('cuts launch tokens, however the path is spelled', () => {
    const token = 'LaUnCh0123456789abcdefghijklmnopqrstuvwxyz_-';
    expect(redactUrl(`/actions/launch/${token}`)).toBe('/actions/launch/LaUnCh[redacted]');
    expect(redactUrl(`/Actions/LAUNCH/${token}/?x=1`)).toBe('/Actions/LAUNCH/LaUnCh[redacted]/?x=1');
    // Spellings the router reads differently, or not at all (a 404 leaves the token live).
    for (const path of [`//actions/launch/${token}`, `/./actions//launch/${token}`, `/actions/%6caunch/${token}`, `/actions%2Flaunch%2F${token}`]) {
      expect(redactUrl(path)).toBe('/actions/launch/LaUnCh[redacted]');
    }
    expect(redactUrl(`/actions/launch/${token.slice(0, 8)}%${token.slice(8)}`)).not.toContain(token.slice(8));
    expect(redactUrl('/actions/execute')).toBe('/actions/execute');
    expect(redactUrl('/actions/list?project_id=p')).toBe('/actions/list?project_id=p');
  });

  it('hides token values in query strings', () => {
    expect(redactUrl('/events/ws?token=svc_abc&since=4')).toBe('/events/ws?token=[redacted]&since=4');
    expect(redactUrl('/x?since=1&access_token=eyJ.x.y')).toBe('/x?since=1&access_token=[redacted]');
    expect(redactUrl('/events?limit=5')).toBe('/events?limit=5');
    expect(redactUrl('/events')).toBe('/events');
  });

  it('compares parameter names decoded, as the server reads them', () => {
    expect(redactUrl('/events/ws?%74oken=svc_SECRET')).toBe('/events/ws?%74oken=[redacted]');
    expect(redactUrl('/x?TOKEN=abc&a=1#frag')).toBe('/x?TOKEN=[redacted]&a=1#frag');
    expect(redactUrl('/x?token')).toBe('/x?token=[redacted]');
    expect(redactUrl('/x?%zz=1&password=p')).toBe('/x?%zz=1&password=[redacted]');
  });
});

describe('createLogger', () => {
  it('writes JSON with the service name and redacts credentials', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger('unit', 'info', sink);
    log.info({ req: { headers: { authorization: 'Bearer secret' } }, password: 'hunter22' }, 'hello');
    const line = JSON.parse(lines[0]!);
    expect(line.service).toBe('unit');
    expect(line.msg).toBe('hello');
    expect(JSON.stringify(line)).not.toContain('secret');
    expect(JSON.stringify(line)).not.toContain('hunter22');
  });
});
