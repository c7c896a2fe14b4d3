import { describe, expect, it } from 'vitest';
import { canonicalLinks, canonicalUuid, isLink } from './uuid.policy.js';

const ID = '0190a000-0000-7000-8000-0000000000ab';
const UP = ID.toUpperCase();

describe('canonical ids', () => {
  it('lower-cases UUIDs and leaves everything else', () => {
    expect(canonicalUuid(UP)).toBe(ID);
    expect(canonicalUuid('Not-A-UUID')).toBe('Not-A-UUID');
    expect(canonicalUuid(null)).toBeNull();
    expect(canonicalUuid(undefined)).toBeUndefined();
  });

  it('recognises links by an entity type code and a UUID id', () => {
    expect(isLink({ type: 'User', id: UP })).toBe(true);
    expect(isLink({ type: 'user', id: UP })).toBe(false);
    expect(isLink({ type: 'User', id: 'abc' })).toBe(false);
    expect(isLink([{ type: 'User', id: UP }])).toBe(false);
  });

  it('lower-cases the id of every link at any depth, and nothing else', () => {
    const data = {
      user: { type: 'User', id: UP },
      versions: [{ type: 'Version', id: UP, name: 'v1' }, 'TEXT'],
      meta: { nested: { link: { type: 'Shot', id: UP } }, code: UP, other: { type: 'lower', id: UP } },
    };
    expect(canonicalLinks(data)).toEqual({
      user: { type: 'User', id: ID },
      versions: [{ type: 'Version', id: ID, name: 'v1' }, 'TEXT'],
      meta: { nested: { link: { type: 'Shot', id: ID } }, code: UP, other: { type: 'lower', id: UP } },
    });
    expect(data.user.id).toBe(UP);
  });

  it('returns the same object when nothing changes', () => {
    const data = { user: { type: 'User', id: ID }, list: [1, { a: 'b' }] };
    expect(canonicalLinks(data)).toBe(data);
  });
});
