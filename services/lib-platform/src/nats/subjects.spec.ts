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
    expect(n.liveEvents).toBe('t42_live.events');
    expect(n.transcodeStream).toBe('t42_TRANSCODE');
    expect(n.transcodeSubject).toBe('t42_media.transcode');
    expect(n.transcodeConsumer).toBe('t42_transcode-workers');
  });

  it('refuses wildcards and spaces in subject tokens', () => {
    expect(() => natsNames().eventSubject('Sh*t', 'create')).toThrow();
    expect(() => natsNames().eventSubject('Shot', 'a b')).toThrow();
  });
});
