import { describe, expect, it } from 'vitest';
import { guestNoteRequest, shareCreatedJson, sharedJson, shareLinkJson } from './share.mapper.js';

const LINK = { id: 'l', playlistId: 'p', tokenPrefix: 'abcdef', canComment: true, hasPassword: false, createdAt: 't' };

describe('share mapper', () => {
  it('answers links with nulls for absent values, and a new link with its token and url', () => {
    expect(shareLinkJson(LINK)).toEqual({
      id: 'l',
      playlist_id: 'p',
      token_prefix: 'abcdef',
      expires_at: null,
      can_comment: true,
      has_password: false,
      created_by: null,
      created_at: 't',
      revoked_at: null,
    });
    expect(shareCreatedJson({ link: LINK, token: 'T' }, 'https://x/review/T')).toEqual({
      id: 'l',
      token: 'T',
      url: 'https://x/review/T',
      playlist_id: 'p',
      expires_at: null,
      can_comment: true,
      has_password: false,
    });
  });

  it('gives each shared version its guest media, and maps a guest note with its proof', () => {
    const opened = {
      playlistId: 'p',
      playlistName: 'P',
      versions: [
        { id: 'v', code: 'V', notes: [] },
        { id: 'w', code: 'W', notes: [] },
      ],
      canComment: true,
      linkId: 'l',
      hasPassword: false,
    };
    const out = sharedJson(opened, new Map([['v', { kind: 'video', proxy: 'sh/1', thumbnail: 'sh/2' }]]), 'then', { studio_name: null });
    expect(out.versions).toEqual([
      { id: 'v', code: 'V', status: null, review_kind: 'video', review_media_key: 'sh/1', thumbnail_media_key: 'sh/2', notes: [] },
      { id: 'w', code: 'W', status: null, review_kind: null, review_media_key: null, thumbnail_media_key: null, notes: [] },
    ]);
    expect(out).toMatchObject({ playlist: { id: 'p', name: 'P' }, expires_at: null, media_expires_at: 'then', branding: { studio_name: null } });
    expect(guestNoteRequest('T', { sessionLinkId: 'l' }, { version_id: 'v', comment: 'c', guest_name: 'g' })).toEqual({
      token: 'T',
      sessionLinkId: 'l',
      versionId: 'v',
      comment: 'c',
      verdict: undefined,
      guestName: 'g',
    });
  });
});
