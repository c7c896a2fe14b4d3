/**
 * Share links (docs/review.md): one playlist opened to guests holding a token. Records keeps the
 * links beside the records they expose, so a guest's note is an ordinary Note write through
 * RecordService (its event, its notifications) with the guest as the acting principal.
 *
 * Managing links names a Playlist: a manager who may not read its project (membershipOf) finds no
 * such Playlist, and no link of it (docs/api-notes.md, "Restricted projects"). Guests are not
 * filtered: a link reaches exactly its playlist.
 */
import { AppError, canonicalUuid, isUuid, newId, sharePolicy, type CallContext, type Principal, type Problem } from '@reelbase/lib-platform';
import type { RecordService } from '../../core/domain/record.service.js';
import { toView, type StoredRecord } from '../../kernel/domain/record.ports.js';
import type { RecordView } from '../../kernel/domain/record.types.js';
import { isShareToken, newShareToken, sameDigest, tokenDigest, type SharePasswords } from './share.secrets.js';
import type { NewShareLink, ShareLinkRow, ShareLinkStore } from './shares.ports.js';
import { membershipOf } from '../../kernel/domain/project.readers.js';

/** Verdicts, the longest guest name, comment and password, verifications at once per link (lib-platform policy/share.policy.ts). */
export const { VERDICTS, GUEST_NAME_MAX, COMMENT_MAX, SHARE_PASSWORD_MAX, MAX_VERIFYING_PER_LINK } = sharePolicy;
/** The roles that manage share links. */
const MANAGERS: ReadonlySet<string> = new Set(['Admin', 'Supervisor', 'Coordinator', 'Service']);

/** A version as a guest sees it; its media come from the media service (docs/review.md). */
export interface SharedVersion {
  id: string;
  code: string;
  status: string | null;
  notes: RecordView[];
}

export interface OpenedShare {
  /** The link's id: what a guest session and the guests' media keys are bound to. */
  linkId: string;
  hasPassword: boolean;
  playlistId: string;
  playlistName: string;
  versions: SharedVersion[];
  canComment: boolean;
  expiresAt: string | null;
}

export interface CreateShareInput {
  playlistId: string;
  expiresAt?: string;
  canComment: boolean;
  password?: string;
}

/** How a guest proves a link's password: the password itself, or a session the gateway verified. */
export interface GuestProof {
  password?: string;
  /** The link id of a verified guest session: the password is not asked again for that link. */
  sessionLinkId?: string;
}

export interface GuestNoteInput extends GuestProof {
  token: string;
  versionId: string;
  comment: string;
  verdict?: string;
  guestName: string;
}

/** One answer for every link a guest may not open: whether it never existed, was revoked or ran out is not told. */
const linkNotFound = () => AppError.notFound('this share link does not exist, was revoked or has expired');

const passwordRequired = () => new AppError('unauthenticated', 'this share link needs its password (header x-share-password)', { code: 'password_required' });

/** The `{type, id}` links of a multi_link value, ids lower-cased. */
function linkIds(value: unknown, type: string): string[] {
  if (!Array.isArray(value)) return [];
  const ids: string[] = [];
  for (const v of value) {
    if (v && typeof v === 'object' && (v as { type?: unknown }).type === type) {
      const id = (v as { id?: unknown }).id;
      if (typeof id === 'string' && isUuid(id)) ids.push(id.toLowerCase());
    }
  }
  return [...new Set(ids)];
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export class ShareLinks {
  /** Password verifications running per link id. */
  private readonly verifying = new Map<string, number>();

  constructor(
    private readonly store: ShareLinkStore,
    private readonly records: RecordService,
    private readonly passwords: SharePasswords,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new link for a live Playlist; the token is answered once. */
  async create(input: CreateShareInput, ctx: CallContext): Promise<{ link: ShareLinkRow; token: string }> {
    const principal = this.manager(ctx);
    const problems: Problem[] = [];
    let expiresAt: string | null = null;
    if (input.expiresAt !== undefined) {
      const at = Date.parse(input.expiresAt);
      if (Number.isNaN(at)) problems.push({ loc: ['expires_at'], msg: 'Input should be a valid datetime', type: 'datetime_parsing' });
      else if (at <= this.now()) problems.push({ loc: ['expires_at'], msg: 'expires_at must lie in the future', type: 'datetime_future' });
      else expiresAt = new Date(at).toISOString();
    }
    if (input.password !== undefined && (input.password.length === 0 || input.password.length > SHARE_PASSWORD_MAX)) {
      problems.push({ loc: ['password'], msg: `a password has 1 to ${SHARE_PASSWORD_MAX} characters`, type: 'string_length' });
    }
    if (problems.length) throw AppError.invalid(problems);
    const playlist = await this.playlist(input.playlistId, membershipOf(principal));
    const { token, digest, prefix } = newShareToken();
    const link = await this.store.insertShareLink({
      id: newId(),
      playlistId: playlist.id,
      tokenDigest: digest,
      tokenPrefix: prefix,
      passwordHash: input.password === undefined ? null : await this.passwords.hash(input.password),
      expiresAt,
      canComment: input.canComment,
      createdBy: principal.userId || null,
    });
    return { link, token };
  }

  /** Every link of a live Playlist, newest first (revoked and expired ones too). */
  async list(playlistId: string, ctx: CallContext): Promise<ShareLinkRow[]> {
    const principal = this.manager(ctx);
    const playlist = await this.playlist(playlistId, membershipOf(principal));
    return this.store.shareLinksOf(playlist.id);
  }

  /** Revokes the link named by its token or its id; effective for the next guest request. */
  async revoke(tokenOrId: string, ctx: CallContext): Promise<ShareLinkRow> {
    const reader = membershipOf(this.manager(ctx));
    const link = isUuid(tokenOrId) ? await this.store.shareLinkById(tokenOrId.toLowerCase()) : await this.byToken(tokenOrId);
    // A link of a playlist the manager may not read is as unknown to them as one that never was.
    if (!link || (reader !== null && !(await this.store.find(link.playlistId, reader)))) throw AppError.notFound('no share link with this token or id');
    const revoked = await this.store.revokeShareLink(link.id);
    if (!revoked) throw AppError.notFound('no share link with this token or id');
    return revoked;
  }

  /**
   * The playlist as the guest sees it: each live version with its notes. The versions' media are
   * added by the gateway from the media service's finished jobs, never from Representation records.
   */
  async open(token: string, proof: GuestProof): Promise<OpenedShare> {
    const link = await this.usable(token, proof);
    const playlist = await this.store.find(link.playlistId);
    if (!playlist || playlist.retired || playlist.entityType !== 'Playlist') throw linkNotFound();
    const order = linkIds(playlist.data.versions, 'Version');
    const live = new Map((await this.store.findLive(order)).filter((r) => r.entityType === 'Version').map((r) => [r.id, r]));
    const ids = order.filter((id) => live.has(id));
    const notes = await this.store.notesLinkingAny('Version', ids);
    const versions = ids.map((id): SharedVersion => {
      const v = live.get(id)!;
      return { id, code: text(v.data.code) ?? '', status: v.status, notes: notes.filter((n) => linkIds(n.data.links, 'Version').includes(id)).map(toView) };
    });
    return {
      linkId: link.id,
      hasPassword: link.passwordHash !== null,
      playlistId: playlist.id,
      playlistName: text(playlist.data.name) ?? '',
      versions,
      canComment: link.canComment,
      expiresAt: link.expiresAt,
    };
  }

  /**
   * The playlist of a live link, by the link's id (a guest's media read, docs/review.md): not
   * found when the link is unknown, revoked or expired, or its playlist retired.
   */
  async check(linkId: string): Promise<string> {
    const link = isUuid(linkId) ? await this.store.shareLinkById(linkId.toLowerCase()) : undefined;
    if (!link || link.revokedAt !== null || link.expired) throw linkNotFound();
    const playlist = await this.store.find(link.playlistId);
    if (!playlist || playlist.retired || playlist.entityType !== 'Playlist') throw linkNotFound();
    return playlist.id;
  }

  /**
   * A guest's Note on one version of the shared playlist: written through RecordService with the
   * guest as principal (author empty, `guest_name` set), so it is validated, stored and announced
   * like any Note.
   */
  async guestNote(input: GuestNoteInput, requestId: string): Promise<RecordView> {
    const problems: Problem[] = [];
    const guestName = input.guestName.trim();
    if (guestName.length === 0 || guestName.length > GUEST_NAME_MAX) {
      problems.push({ loc: ['guest_name'], msg: `a name has 1 to ${GUEST_NAME_MAX} characters`, type: 'string_length' });
    }
    if (input.comment.trim().length === 0 || input.comment.length > COMMENT_MAX) {
      problems.push({ loc: ['comment'], msg: `a comment has 1 to ${COMMENT_MAX} characters`, type: 'string_length' });
    }
    if (input.verdict !== undefined && !(VERDICTS as readonly string[]).includes(input.verdict)) {
      problems.push({ loc: ['verdict'], msg: "Input should be 'approve' or 'needs-changes'", type: 'enum' });
    }
    if (!isUuid(input.versionId)) problems.push({ loc: ['version_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
    if (problems.length) throw AppError.invalid(problems);

    const link = await this.usable(input.token, input);
    const playlist = await this.store.find(link.playlistId);
    if (!playlist || playlist.retired || playlist.entityType !== 'Playlist') throw linkNotFound();
    if (!link.canComment) throw new AppError('forbidden', 'this share link does not allow comments');
    const versionId = canonicalUuid(input.versionId)!;
    if (!linkIds(playlist.data.versions, 'Version').includes(versionId)) {
      throw new AppError('forbidden', 'this version is not part of the shared playlist');
    }
    const data: Record<string, unknown> = { content: input.comment, links: [{ type: 'Version', id: versionId }], guest_name: guestName };
    if (input.verdict !== undefined) data.verdict = input.verdict;
    const guest: Principal = { userId: '', role: 'Guest', authKind: 'guest', guestName };
    try {
      return await this.records.create(
        { entityType: 'Note', projectId: playlist.projectId ?? undefined, dataJson: JSON.stringify(data) },
        { requestId, principal: guest },
      );
    } catch (err) {
      // The version was retired since it was put in the playlist: it is no longer shared.
      if (err instanceof AppError && err.kind === 'invalid' && err.problems.some((p) => p.type === 'link_not_found' && p.loc.includes('links'))) {
        throw new AppError('forbidden', 'this version is not part of the shared playlist');
      }
      throw err;
    }
  }

  /**
   * The link behind `token` when it is live and the password (if any) matches, or a verified
   * session names this very link.
   */
  private async usable(token: string, { password, sessionLinkId }: GuestProof): Promise<ShareLinkRow> {
    const link = await this.byToken(token);
    if (!link || link.revokedAt !== null || link.expired) throw linkNotFound();
    if (link.passwordHash !== null && sessionLinkId !== link.id) {
      if (password === undefined || password.length === 0 || password.length > SHARE_PASSWORD_MAX) throw passwordRequired();
      if (!(await this.verifyBounded(link.id, password, link.passwordHash))) throw passwordRequired();
    }
    return link;
  }

  /**
   * Verifies a password with at most MAX_VERIFYING_PER_LINK verifications of one link running at
   * once: a flood of guesses at one link cannot keep this service's cores busy with scrypt.
   */
  private async verifyBounded(linkId: string, password: string, hash: string): Promise<boolean> {
    const running = this.verifying.get(linkId) ?? 0;
    if (running >= MAX_VERIFYING_PER_LINK) {
      throw new AppError('rate_limited', 'this share link is checking other passwords; try again shortly', { retryAfter: 1 });
    }
    this.verifying.set(linkId, running + 1);
    try {
      return await this.passwords.verify(password, hash);
    } finally {
      const left = (this.verifying.get(linkId) ?? 1) - 1;
      if (left > 0) this.verifying.set(linkId, left);
      else this.verifying.delete(linkId);
    }
  }

  /** Looked up by digest; the stored digest is compared again in constant time. */
  private async byToken(token: string): Promise<ShareLinkRow | undefined> {
    if (!isShareToken(token)) return undefined;
    const digest = tokenDigest(token);
    const link = await this.store.shareLinkByDigest(digest);
    return link && sameDigest(link.tokenDigest, digest) ? link : undefined;
  }

  private async playlist(id: string, reader: string | null): Promise<StoredRecord> {
    const row = isUuid(id) ? await this.store.find(id.toLowerCase(), reader) : undefined;
    if (!row || row.retired || row.entityType !== 'Playlist') throw AppError.notFound(`Playlist ${id} not found`);
    return row;
  }

  private manager(ctx: CallContext): Principal {
    const p = ctx.principal;
    if (!p) throw new AppError('unauthenticated', 'share links need an acting principal');
    if (!MANAGERS.has(p.role)) throw new AppError('forbidden', 'only an Admin, Supervisor or Coordinator may manage share links');
    return p;
  }
}
