/**
 * Share links without PostgreSQL: the token and password secrets, and the rules of ShareLinks
 * over an in-memory store with a stand-in RecordService that records the Note it is asked for.
 */
import { AppError, type CallContext, type Principal } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import type { RecordService } from '../../core/domain/record.service.js';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import type { CreateInput, RecordView } from '../../kernel/domain/record.types.js';
import { MAX_VERIFYING_PER_LINK, ShareLinks } from './share.links.js';
import { isShareToken, newShareToken, sameDigest, SharePasswords, tokenDigest } from './share.secrets.js';
import type { ShareLinkStore } from './shares.ports.js';
import { type NewShareLink, type ShareLinkRow } from './shares.ports.js';

const PLAYLIST = '0190a0b0-0000-7000-8000-000000000101';
const V1 = '0190a0b0-0000-7000-8000-000000000201';
const V2 = '0190a0b0-0000-7000-8000-000000000202';
const OUTSIDE = '0190a0b0-0000-7000-8000-000000000203';
const PROJECT = '0190a0b0-0000-7000-8000-000000000001';

const record = (id: string, entityType: string, data: Record<string, unknown>, retired = false): StoredRecord => ({
  id,
  entityType,
  projectId: PROJECT,
  status: null,
  active: true,
  thumbnailId: null,
  createdBy: null,
  createdAt: '2026-01-01T00:00:00.000000Z',
  updatedAt: '2026-01-01T00:00:00.000000Z',
  data,
  retired,
});

class MemoryShareStore implements ShareLinkStore {
  rows = new Map<string, StoredRecord>([
    [
      PLAYLIST,
      record(PLAYLIST, 'Playlist', {
        name: 'Dailies',
        versions: [
          { type: 'Version', id: V2 },
          { type: 'Version', id: V1 },
        ],
      }),
    ],
    [V1, record(V1, 'Version', { code: 'v1' })],
    [V2, record(V2, 'Version', { code: 'v2' })],
    [OUTSIDE, record(OUTSIDE, 'Version', { code: 'secret' })],
  ]);
  links: ShareLinkRow[] = [];
  /** Readers (membershipOf's users) who may not read PROJECT: to them its records are not found. */
  hiddenFrom = new Set<string>();
  async find(id: string, reader?: string | null) {
    return reader && this.hiddenFrom.has(reader) ? undefined : this.rows.get(id);
  }
  async findLive(ids: readonly string[]) {
    return ids.flatMap((id) => (this.rows.get(id) && !this.rows.get(id)!.retired ? [this.rows.get(id)!] : []));
  }
  async notesLinkingAny() {
    return [];
  }
  async insertShareLink(l: NewShareLink) {
    const row: ShareLinkRow = { ...l, createdAt: new Date().toISOString(), revokedAt: null, expired: false };
    this.links.push(row);
    return row;
  }
  async shareLinksOf(playlistId: string) {
    return this.links.filter((l) => l.playlistId === playlistId).reverse();
  }
  async shareLinkByDigest(digest: Buffer) {
    return this.links.find((l) => l.tokenDigest.equals(digest));
  }
  async shareLinkById(id: string) {
    return this.links.find((l) => l.id === id);
  }
  async revokeShareLink(id: string) {
    const l = this.links.find((x) => x.id === id);
    if (l) l.revokedAt ??= new Date().toISOString();
    return l;
  }
}

/** Counts verifications; each one waits until `release` is called when `hold` is set. */
class CountingPasswords extends SharePasswords {
  verified = 0;
  running = 0;
  maxRunning = 0;
  hold: Promise<void> | undefined;
  override async verify(password: string, stored: string): Promise<boolean> {
    this.verified++;
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      if (this.hold) await this.hold;
      return await super.verify(password, stored);
    } finally {
      this.running--;
    }
  }
}

function setup() {
  const store = new MemoryShareStore();
  const created: { input: CreateInput; principal?: Principal }[] = [];
  const records = {
    async create(input: CreateInput, ctx: CallContext): Promise<RecordView> {
      created.push({ input, principal: ctx.principal });
      return { ...record('0190a0b0-0000-7000-8000-000000000999', 'Note', JSON.parse(input.dataJson!) as Record<string, unknown>), createdBy: null };
    },
  } as unknown as RecordService;
  const passwords = new CountingPasswords(16);
  const shares = new ShareLinks(store, records, passwords);
  return { store, created, shares, passwords };
}

const as = (role: Principal['role'], userId = '0190a0b0-0000-7000-8000-000000000002'): CallContext => ({
  requestId: 'r',
  principal: { userId, role, authKind: 'token' },
});

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('share secrets', () => {
  it('tokens carry 256 random bits as 43 base64url characters; only the digest is kept', () => {
    const a = newShareToken();
    const b = newShareToken();
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.token, 'base64url')).toHaveLength(32);
    expect(a.token).not.toBe(b.token);
    expect(a.digest).toHaveLength(32);
    expect(sameDigest(a.digest, tokenDigest(a.token))).toBe(true);
    expect(sameDigest(a.digest, b.digest)).toBe(false);
    expect(sameDigest(a.digest, a.digest.subarray(0, 16))).toBe(false);
    expect(a.prefix).toBe(a.token.slice(0, 6));
    expect(isShareToken(a.token)).toBe(true);
    for (const bad of ['', 'short', `${a.token}x`, `${a.token.slice(0, 42)}=`, `${a.token.slice(0, 42)}/`]) expect(isShareToken(bad)).toBe(false);
  });

  it('passwords are scrypt hashes with a salt per hash; malformed hashes never match', async () => {
    const pw = new SharePasswords(16);
    const h1 = await pw.hash('open sesame');
    const h2 = await pw.hash('open sesame');
    expect(h1).toMatch(/^scrypt\$16\$8\$1\$/);
    expect(h1).not.toBe(h2);
    expect(await pw.verify('open sesame', h1)).toBe(true);
    expect(await pw.verify('open sesame!', h1)).toBe(false);
    for (const bad of ['', 'plain', 'scrypt$3$8$1$AAAAAAAAAAA$x', h1.replace('$16$', '$4194304$'), h1.slice(0, -4)]) {
      expect(await pw.verify('open sesame', bad)).toBe(false);
    }
  });
});

describe('ShareLinks', () => {
  it('only Admin, Supervisor and Coordinator manage links; a playlist must be live', async () => {
    const { shares } = setup();
    for (const role of ['Artist', 'Viewer', 'Guest'] as const)
      expect((await refusal(shares.create({ playlistId: PLAYLIST, canComment: true }, as(role)))).kind).toBe('forbidden');
    expect((await refusal(shares.list(PLAYLIST, as('Artist')))).kind).toBe('forbidden');
    expect((await refusal(shares.create({ playlistId: V1, canComment: true }, as('Admin')))).kind).toBe('not_found');
    const past = await refusal(shares.create({ playlistId: PLAYLIST, canComment: true, expiresAt: '2001-01-01T00:00:00Z' }, as('Coordinator')));
    expect(past.problems.map((p) => p.loc)).toEqual([['expires_at']]);
    const { link, token } = await shares.create({ playlistId: PLAYLIST, canComment: true, password: 'pw' }, as('Supervisor'));
    expect(link.passwordHash).toMatch(/^scrypt\$/);
    expect(link.tokenDigest.equals(tokenDigest(token))).toBe(true);
  });

  it('a guest opens a live link in playlist order; revoked, expired and unknown links are one not_found; passwords are password_required', async () => {
    const { shares, store } = setup();
    const { token } = await shares.create({ playlistId: PLAYLIST, canComment: true }, as('Admin'));
    const opened = await shares.open(token, {});
    expect(opened.versions.map((v) => v.code)).toEqual(['v2', 'v1']);
    // The media are not taken from Representation records (the gateway asks the media service).
    expect(opened.versions[0]).not.toHaveProperty('reviewMediaKey');
    expect(opened).toMatchObject({ linkId: store.links[0]!.id, hasPassword: false });

    const locked = await shares.create({ playlistId: PLAYLIST, canComment: true, password: 'pw' }, as('Admin'));
    expect((await refusal(shares.open(locked.token, {}))).code).toBe('password_required');
    expect((await refusal(shares.open(locked.token, { password: 'nope' }))).code).toBe('password_required');
    expect((await shares.open(locked.token, { password: 'pw' })).playlistName).toBe('Dailies');

    store.links[0]!.expired = true;
    expect((await refusal(shares.open(token, {}))).kind).toBe('not_found');
    await shares.revoke(locked.link.id, as('Coordinator'));
    expect((await refusal(shares.open(locked.token, { password: 'pw' }))).kind).toBe('not_found');
    expect((await refusal(shares.open(newShareToken().token, {}))).kind).toBe('not_found');
    expect((await refusal(shares.open('not a token', {}))).kind).toBe('not_found');
  });

  it('a guest note is a Note create by the guest principal, scoped to the playlist and to can_comment', async () => {
    const { shares, created } = setup();
    const { token } = await shares.create({ playlistId: PLAYLIST, canComment: true }, as('Admin'));
    const note = { token, versionId: V1.toUpperCase(), comment: 'Nice', verdict: 'approve', guestName: '  Carla ' };
    await shares.guestNote(note, 'req-1');
    expect(created).toHaveLength(1);
    expect(created[0]!.principal).toEqual({ userId: '', role: 'Guest', authKind: 'guest', guestName: 'Carla' });
    expect(created[0]!.input).toMatchObject({ entityType: 'Note', projectId: PROJECT });
    expect(JSON.parse(created[0]!.input.dataJson!)).toEqual({ content: 'Nice', links: [{ type: 'Version', id: V1 }], guest_name: 'Carla', verdict: 'approve' });

    expect((await refusal(shares.guestNote({ ...note, versionId: OUTSIDE }, 'r'))).kind).toBe('forbidden');
    const bad = await refusal(shares.guestNote({ ...note, verdict: 'maybe', comment: ' ', guestName: '' }, 'r'));
    expect(bad.problems.map((p) => p.loc[0]).sort()).toEqual(['comment', 'guest_name', 'verdict']);
    const readOnly = await shares.create({ playlistId: PLAYLIST, canComment: false }, as('Admin'));
    expect((await refusal(shares.guestNote({ ...note, token: readOnly.token }, 'r'))).kind).toBe('forbidden');
    expect(created).toHaveLength(1);
  });

  it('a verified session of the link stands in for its password (no scrypt); one of another link does not', async () => {
    const { shares, passwords } = setup();
    const locked = await shares.create({ playlistId: PLAYLIST, canComment: true, password: 'pw' }, as('Admin'));
    const other = await shares.create({ playlistId: PLAYLIST, canComment: true, password: 'pw' }, as('Admin'));
    expect((await shares.open(locked.token, { sessionLinkId: locked.link.id })).hasPassword).toBe(true);
    expect(passwords.verified).toBe(0);
    expect((await refusal(shares.open(locked.token, { sessionLinkId: other.link.id }))).code).toBe('password_required');
    await shares.guestNote({ token: locked.token, sessionLinkId: locked.link.id, versionId: V1, comment: 'ok', guestName: 'C' }, 'r');
    expect(passwords.verified).toBe(0);
    await shares.revoke(locked.link.id, as('Admin'));
    expect((await refusal(shares.open(locked.token, { sessionLinkId: locked.link.id }))).kind).toBe('not_found');
  });

  it(`at most ${MAX_VERIFYING_PER_LINK} password verifications of one link run at once; more are 429 before scrypt`, async () => {
    const { shares, passwords } = setup();
    const locked = await shares.create({ playlistId: PLAYLIST, canComment: true, password: 'pw' }, as('Admin'));
    const other = await shares.create({ playlistId: PLAYLIST, canComment: true, password: 'pw' }, as('Admin'));
    let release!: () => void;
    passwords.hold = new Promise<void>((r) => (release = r));
    const guesses = Array.from({ length: 10 }, (_, i) =>
      shares.open(locked.token, { password: `guess-${i}` }).then(
        () => 'opened',
        (e: AppError) => e.code,
      ),
    );
    // Another link is not held up by this one's flood.
    const elsewhere = shares.open(other.token, { password: 'pw' }).then(() => 'opened');
    await new Promise((r) => setTimeout(r, 20));
    release();
    const outcomes = await Promise.all(guesses);
    expect(outcomes.filter((o) => o === 'rate_limited')).toHaveLength(10 - MAX_VERIFYING_PER_LINK);
    expect(outcomes.filter((o) => o === 'password_required')).toHaveLength(MAX_VERIFYING_PER_LINK);
    expect(await elsewhere).toBe('opened');
    expect(passwords.maxRunning).toBeLessThanOrEqual(MAX_VERIFYING_PER_LINK + 1);
    expect(passwords.verified).toBe(MAX_VERIFYING_PER_LINK + 1);
    // Once they are done, the link verifies again.
    expect((await shares.open(locked.token, { password: 'pw' })).playlistName).toBe('Dailies');
  });

  it('check answers the playlist of a live link and not_found once it is revoked or expired', async () => {
    const { shares, store } = setup();
    const a = await shares.create({ playlistId: PLAYLIST, canComment: true }, as('Admin'));
    const b = await shares.create({ playlistId: PLAYLIST, canComment: true }, as('Admin'));
    expect(await shares.check(a.link.id)).toBe(PLAYLIST);
    await shares.revoke(a.link.id, as('Admin'));
    expect((await refusal(shares.check(a.link.id))).kind).toBe('not_found');
    store.links.find((l) => l.id === b.link.id)!.expired = true;
    expect((await refusal(shares.check(b.link.id))).kind).toBe('not_found');
    expect((await refusal(shares.check('not-an-id'))).kind).toBe('not_found');
  });

  it('a manager who may not read the playlist’s project finds neither it nor its links (404); Admins and guests are not filtered', async () => {
    const { store, shares } = setup();
    const outsider = as('Coordinator', '0190a0b0-0000-7000-8000-0000000000ee');
    const { token, link } = await shares.create({ playlistId: PLAYLIST, canComment: true }, as('Coordinator'));
    store.hiddenFrom.add(outsider.principal!.userId);
    for (const p of [shares.create({ playlistId: PLAYLIST, canComment: false }, outsider), shares.list(PLAYLIST, outsider), shares.revoke(token, outsider)]) {
      expect((await refusal(p)).kind).toBe('not_found');
    }
    expect(store.links).toHaveLength(1);
    expect(store.links[0]!.revokedAt).toBeNull();
    store.hiddenFrom.add('0190a0b0-0000-7000-8000-000000000002');
    expect(await shares.list(PLAYLIST, as('Admin'))).toHaveLength(1);
    expect((await shares.open(token, {})).playlistId).toBe(PLAYLIST);
    expect(await shares.check(link.id)).toBe(PLAYLIST);
  });
});
