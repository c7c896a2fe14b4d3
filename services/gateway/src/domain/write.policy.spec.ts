import { AppError } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import type { AuthedPrincipal } from './authed.principal.js';
import { assertMayWrite, type WriteOp } from './write.policy.js';

const ME = '0190a000-0000-7000-8000-0000000000c1';
const OTHER = '0190a000-0000-7000-8000-0000000000c2';
const as = (role: AuthedPrincipal['role']): AuthedPrincipal => ({ userId: ME, role, authKind: 'token', email: 'x@studio.test' });
const ROLES = ['Admin', 'Supervisor', 'Coordinator', 'Artist', 'Viewer'] as const;

function refusal(p: AuthedPrincipal, type: string, op: WriteOp, body: unknown): string | undefined {
  try {
    assertMayWrite(p, type, op, body);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('forbidden');
    return (err as AppError).message;
  }
}

describe('assertMayWrite: fields no person writes', () => {
  it('refuses a Representation transcode field for every role, before validation, and lets every role publish', () => {
    for (const role of ROLES) {
      for (const op of ['create', 'update'] as const) {
        expect(refusal(as(role), 'Representation', op, { data: { review_media_key: 'rv/x/original.mov' } })).toMatch(/media service/);
        expect(refusal(as(role), 'Representation', op, { data: { transcode_status: 'failed' }, nope: 1 })).toMatch(/media service/);
        expect(refusal(as(role), 'Representation', op, { data: { name: 'n', version: { type: 'Version', id: OTHER }, files: {} } })).toBeUndefined();
      }
    }
  });

  it('refuses verdict, guest_name and another author on Notes for every role', () => {
    for (const role of ROLES) {
      expect(refusal(as(role), 'Note', 'create', { data: { content: 'x', verdict: 'approve' } })).toMatch(/share link/);
      expect(refusal(as(role), 'Note', 'update', { data: { guest_name: 'Client' } })).toMatch(/share link/);
      expect(refusal(as(role), 'Note', 'create', { data: { author: { type: 'User', id: OTHER } } })).toMatch(/author/);
      expect(refusal(as(role), 'Note', 'create', { data: { content: 'x', author: { type: 'User', id: ME } } })).toBeUndefined();
    }
  });

  it('still applies the role rules first, and leaves malformed bodies to validation', () => {
    expect(refusal(as('Viewer'), 'Shot', 'create', { data: { code: 'x' } })).toMatch(/Viewer/);
    expect(refusal(as('Artist'), 'Note', 'create', 'not an object')).toBeUndefined();
    expect(refusal(as('Artist'), 'Note', 'create', { data: [1] })).toBeUndefined();
    expect(refusal(as('Artist'), 'Note', 'delete', undefined)).toBeUndefined();
  });
});
