import { describe, expect, it } from 'vitest';
import { natsNames } from './subjects.js';

describe('natsNames', () => {
  it('uses the stream and subject names without a prefix', () => {
    const n = natsNames();
    expect(n.eventsStream).toBe('EVENTS');
    expect(n.eventSubject('Shot', 'create')).toBe('events.Shot.create');
    expect(n.eventSubject('Schema.Status', 'update')).toBe('events.Schema.Status.update');
  });

  it('prefixes every name so runs never collide', () => {
    const n = natsNames('t42_');
    expect(n.eventsStream).toBe('t42_EVENTS');
    expect(n.eventsSubjects).toBe('t42_events.>');
    expect(n.eventSubject('Shot', 'delete')).toBe('t42_events.Shot.delete');
    expect(n.liveEvents).toBe('t42_live.events.>');
    expect(n.liveEvent('Shot')).toBe('t42_live.events.Shot');
    expect(n.liveEvent('Schema.Status')).toBe('t42_live.events.Schema.Status');
    expect(n.transcodeStream).toBe('t42_TRANSCODE');
    expect(n.transcodeSubject).toBe('t42_media.transcode');
    expect(n.transcodeConsumer).toBe('t42_transcode-workers');
  });

  it('announces a row whose type could not be a subject under live.events._ instead of failing', () => {
    for (const t of ['Sh*t', 'a b', 'a..b', '.Shot', '>']) expect(natsNames().liveEvent(t)).toBe('live.events._');
  });

  it('refuses wildcards and spaces in subject tokens', () => {
    expect(() => natsNames().eventSubject('Sh*t', 'create')).toThrow();
    expect(() => natsNames().eventSubject('Shot', 'a b')).toThrow();
  });
});
