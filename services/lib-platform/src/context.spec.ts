import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { fromMetadata, systemContext, toMetadata, viaService, type CallContext } from './context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('toMetadata / fromMetadata', () => {
  it('round-trips a full context, including a non-ASCII guest name', () => {
    const ctx: CallContext = {
      requestId: 'req-123',
      principal: { userId: 'u-1', role: 'Guest', authKind: 'guest', apiKeyId: 'key-9', guestName: 'Zoë Müller 50% / ünïcödé ✓' },
    };
    const md = toMetadata(ctx);
    // Header values must stay ASCII on the wire.
    expect(String(md.get('x-principal-guest')[0])).toMatch(/^[\x20-\x7e]+$/);
    expect(fromMetadata(md)).toEqual(ctx);
  });

  it('round-trips a token principal with no optional fields', () => {
    const ctx: CallContext = { requestId: 'r', principal: { userId: 'u-2', role: 'Artist', authKind: 'token' } };
    const back = fromMetadata(toMetadata(ctx));
    expect(back).toEqual(ctx);
    expect(back.principal!.guestName).toBeUndefined();
    expect(back.principal!.apiKeyId).toBeUndefined();
  });

  it('carries the service a call is made through: for its own work or for a person', () => {
    const own = systemContext('job', 'media-transcode');
    expect(own.principal).toEqual({ userId: '', role: 'Service', authKind: 'service', via: 'media-transcode' });
    expect(fromMetadata(toMetadata(own))).toEqual(own);
    const person: CallContext = { requestId: 'up', principal: { userId: 'u-3', role: 'Viewer', authKind: 'token' } };
    const relayed = viaService(person, 'media-transcode');
    expect(fromMetadata(toMetadata(relayed)).principal).toEqual({ userId: 'u-3', role: 'Viewer', authKind: 'token', via: 'media-transcode' });
    expect(person.principal!.via).toBeUndefined();
    expect(fromMetadata(toMetadata(person)).principal!.via).toBeUndefined();
    expect(viaService({ requestId: 'anon' }, 'media-transcode')).toEqual({ requestId: 'anon' });
  });

  it('generates a request id when none was sent', () => {
    const a = fromMetadata(new Metadata());
    const b = fromMetadata(new Metadata());
    expect(a.requestId).toMatch(UUID);
    expect(b.requestId).toMatch(UUID);
    expect(a.requestId).not.toBe(b.requestId);
  });

  it('has no principal when the auth kind is absent', () => {
    const md = new Metadata();
    md.set('x-request-id', 'r-7');
    md.set('x-principal-user', 'u-1');
    md.set('x-principal-role', 'Admin');
    const ctx = fromMetadata(md);
    expect(ctx).toEqual({ requestId: 'r-7' });
    expect(ctx.principal).toBeUndefined();
    expect(fromMetadata(toMetadata({ requestId: 'r-8' }))).toEqual({ requestId: 'r-8' });
  });

  it('systemContext acts as a service', () => {
    expect(systemContext('boot')).toEqual({ requestId: 'boot', principal: { userId: '', role: 'Service', authKind: 'service' } });
    expect(systemContext().requestId).toMatch(UUID);
  });

  it('takes a guest name that is not valid percent-encoding as sent instead of failing the call', () => {
    const md = new Metadata();
    md.set('x-request-id', 'r-9');
    md.set('x-principal-kind', 'guest');
    md.set('x-principal-guest', '100%');
    expect(fromMetadata(md).principal?.guestName).toBe('100%');
  });
});
