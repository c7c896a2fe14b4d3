import { describe, expect, it } from 'vitest';
import type { Principal } from '../context.js';
import {
  AUTHOR_REFUSED,
  fieldWriteRefusal,
  GUEST_FIELDS_REFUSED,
  GUEST_NOTE_NOT_EDITABLE,
  GUEST_NOTE_RETIRE_REFUSED,
  isGuestNote,
  mayChangeSharedPlaylist,
  MEDIA_FIELDS_REFUSED,
  MEDIA_SERVICE,
  NOTE_NOT_YOURS,
  noteChangeRefusal,
  REPRESENTATION_MEDIA_FIELDS,
} from './review-write.policy.js';

const ME = '0190a000-0000-7000-8000-0000000000c1';
const OTHER = '0190a000-0000-7000-8000-0000000000c2';
const person = (role: Principal['role'], userId = ME, authKind: Principal['authKind'] = 'token'): Principal => ({ userId, role, authKind });
const service: Principal = { userId: '', role: 'Service', authKind: 'service' };
const guest: Principal = { userId: '', role: 'Guest', authKind: 'guest', guestName: 'Client' };
const ROLES = ['Admin', 'Supervisor', 'Coordinator', 'Artist', 'Viewer'] as const;
const user = (id: string) => ({ type: 'User', id });

describe('Representation transcode fields', () => {
  it('are refused for every person, API keys included, and for services other than media', () => {
    for (const field of REPRESENTATION_MEDIA_FIELDS) {
      for (const p of [...ROLES.map((r) => person(r)), person('Admin', ME, 'api_key'), service, guest]) {
        expect(fieldWriteRefusal(p, 'Representation', { [field]: null }), `${p.role} ${field}`).toBe(MEDIA_FIELDS_REFUSED);
      }
    }
  });

  it('are written through the media service, for itself or for the uploader; name, version and files stay open', () => {
    const data = { transcode_status: 'pending', attempts: 0, review_media_key: 'rv/x/proxy.mp4' };
    expect(fieldWriteRefusal({ ...service, via: MEDIA_SERVICE }, 'Representation', data)).toBeUndefined();
    expect(fieldWriteRefusal({ ...person('Viewer'), via: MEDIA_SERVICE }, 'Representation', data)).toBeUndefined();
    expect(fieldWriteRefusal({ ...person('Admin'), via: 'records' }, 'Representation', data)).toBe(MEDIA_FIELDS_REFUSED);
    for (const r of ROLES)
      expect(fieldWriteRefusal(person(r), 'Representation', { name: 'n', version: { type: 'Version', id: OTHER }, files: {} })).toBeUndefined();
    // Another type may have a field of the same name.
    expect(fieldWriteRefusal(person('Artist'), 'Asset', { transcode_status: 'x', verdict: 'y', author: user(OTHER) })).toBeUndefined();
  });
});

describe('Note fields', () => {
  it('verdict and guest_name: only a share link guest writes them', () => {
    for (const data of [{ verdict: 'approve' }, { guest_name: 'Client' }, { verdict: null }]) {
      for (const p of [...ROLES.map((r) => person(r)), service]) expect(fieldWriteRefusal(p, 'Note', data)).toBe(GUEST_FIELDS_REFUSED);
      expect(fieldWriteRefusal(guest, 'Note', data)).toBeUndefined();
    }
  });

  it('author: a person names only themself (any case, link or bare id); a guest nobody; a service anybody', () => {
    for (const r of ROLES) {
      expect(fieldWriteRefusal(person(r), 'Note', { author: user(OTHER) })).toBe(AUTHOR_REFUSED);
      expect(fieldWriteRefusal(person(r), 'Note', { author: user(ME.toUpperCase()) })).toBeUndefined();
    }
    expect(fieldWriteRefusal(person('Artist'), 'Note', { author: ME })).toBeUndefined();
    expect(fieldWriteRefusal(person('Artist'), 'Note', { author: { type: 'Asset', id: ME } })).toBe(AUTHOR_REFUSED);
    expect(fieldWriteRefusal(person('Artist'), 'Note', { author: { id: ME } })).toBe(AUTHOR_REFUSED);
    expect(fieldWriteRefusal(person('Artist', ''), 'Note', { author: user('') })).toBe(AUTHOR_REFUSED);
    expect(fieldWriteRefusal(person('Artist'), 'Note', { author: null })).toBeUndefined();
    expect(fieldWriteRefusal(guest, 'Note', { author: user(OTHER) })).toBe(AUTHOR_REFUSED);
    expect(fieldWriteRefusal(service, 'Note', { author: user(OTHER) })).toBeUndefined();
  });
});

describe('who changes a stored Note', () => {
  const mine = { author: user(ME) };
  const theGuests = { guest_name: 'Client', author: undefined };

  it('its author, Admin or Supervisor edit and retire it; nobody else', () => {
    for (const change of ['update', 'retire'] as const) {
      expect(noteChangeRefusal(person('Viewer'), change, mine)).toBeUndefined();
      for (const r of ['Admin', 'Supervisor'] as const) expect(noteChangeRefusal(person(r, OTHER), change, mine)).toBeUndefined();
      for (const r of ['Coordinator', 'Artist', 'Viewer'] as const) expect(noteChangeRefusal(person(r, OTHER), change, mine)).toBe(NOTE_NOT_YOURS);
      expect(noteChangeRefusal(guest, change, mine)).toBe(NOTE_NOT_YOURS);
      expect(noteChangeRefusal(service, change, mine)).toBeUndefined();
      // A note without author (written by a service): Admin and Supervisor only.
      expect(noteChangeRefusal(person('Artist', ''), change, { author: null })).toBe(NOTE_NOT_YOURS);
      expect(noteChangeRefusal(person('Supervisor'), change, { author: null })).toBeUndefined();
    }
  });

  it("a guest's note: never edited; retired by Admin, Supervisor and Coordinator", () => {
    expect(isGuestNote(theGuests)).toBe(true);
    expect(isGuestNote({ author: user(ME), guest_name: 'x' })).toBe(false);
    expect(isGuestNote({ author: null, guest_name: '' })).toBe(false);
    for (const p of [...ROLES.map((r) => person(r)), service, guest]) expect(noteChangeRefusal(p, 'update', theGuests)).toBe(GUEST_NOTE_NOT_EDITABLE);
    for (const r of ['Admin', 'Supervisor', 'Coordinator'] as const) expect(noteChangeRefusal(person(r), 'retire', theGuests)).toBeUndefined();
    for (const p of [person('Artist'), person('Viewer'), guest]) expect(noteChangeRefusal(p, 'retire', theGuests)).toBe(GUEST_NOTE_RETIRE_REFUSED);
  });
});

describe('shared Playlists', () => {
  it('change their versions only for Admin, Supervisor, Coordinator and services on their own', () => {
    expect(ROLES.filter((r) => mayChangeSharedPlaylist(person(r)))).toEqual(['Admin', 'Supervisor', 'Coordinator']);
    expect(mayChangeSharedPlaylist(service)).toBe(true);
    expect(mayChangeSharedPlaylist(guest)).toBe(false);
  });
});
