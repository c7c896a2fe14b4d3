/**
 * records in memory: record writes over `state.records` (ETags from the update time), the work
 * views, queries, timesheets and share links; and site sync, which records serves, with canned
 * answers.
 */
import { AppError, ifMatchHolds, newId, type CallContext } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import { knownUser, liveRecord, now, type FakeState, type Track } from './fake.state.js';

export type FakeRecords = ReturnType<typeof fakeRecords>;

export function fakeRecords(state: FakeState, track: Track) {
  const shares = () => (state.shares ??= new Map());
  const usableShare = (token: string, password: string | undefined, sessionLinkId?: string) => {
    const share = shares().get(token);
    if (!share || share.link.revokedAt) throw AppError.notFound('this share link does not exist, was revoked or has expired');
    if (share.password !== undefined && sessionLinkId !== share.link.id && share.password !== password) {
      throw new AppError('unauthenticated', 'this share link needs its password', { code: 'password_required' });
    }
    return share;
  };
  const records = {
    createRecord: async (req: recordsv1.CreateRecordRequest, ctx: CallContext) => {
      track('records', 'createRecord', req, ctx);
      const data = JSON.parse(req.dataJson) as Record<string, unknown>;
      if ('bad_field' in data) throw AppError.invalid([{ loc: ['body', 'data', 'bad_field'], msg: 'unknown field', type: 'value_error' }]);
      const t = now();
      const record: recordsv1.Record = {
        id: req.id ?? newId(),
        entityType: req.entityType,
        projectId: req.projectId,
        status: req.status,
        active: req.active ?? true,
        thumbnailId: req.thumbnailId,
        createdBy: ctx.principal?.userId,
        createdAt: t,
        updatedAt: t,
        dataJson: req.dataJson,
      };
      state.records.set(record.id, record);
      return { record };
    },
    getRecord: async (req: recordsv1.GetRecordRequest, ctx: CallContext) => {
      track('records', 'getRecord', req, ctx);
      return { record: liveRecord(state, req.entityType, req.id) };
    },
    updateRecord: async (req: recordsv1.UpdateRecordRequest, ctx: CallContext) => {
      track('records', 'updateRecord', req, ctx);
      const r = liveRecord(state, req.entityType, req.id);
      if (!ifMatchHolds(req.ifMatch, r.updatedAt)) throw AppError.conflict('stale_write', 'the record changed since it was read');
      const data = { ...(JSON.parse(r.dataJson) as Record<string, unknown>), ...(req.dataJson ? (JSON.parse(req.dataJson) as Record<string, unknown>) : {}) };
      const next = { ...r, dataJson: JSON.stringify(data), updatedAt: now() };
      if (req.status) next.status = req.status.value;
      state.records.set(r.id, next);
      return { record: next };
    },
    retireRecord: async (req: recordsv1.RetireRecordRequest, ctx: CallContext) => {
      track('records', 'retireRecord', req, ctx);
      const r = liveRecord(state, req.entityType, req.id);
      if (!ifMatchHolds(req.ifMatch, r.updatedAt)) throw AppError.conflict('stale_write', 'the record changed since it was read');
      const next = { ...r, active: false };
      state.records.set(r.id, next);
      return { record: next };
    },
    reviveRecord: async (req: recordsv1.ReviveRecordRequest, ctx: CallContext) => {
      track('records', 'reviveRecord', req, ctx);
      const r = state.records.get(req.id);
      if (!r) throw AppError.notFound('not found');
      const next = { ...r, active: true };
      state.records.set(r.id, next);
      return { record: next };
    },
    // The work views over the in-memory records (live = `active` here); a user is known when
    // it is one of USERS or a stored User.
    listNotes: async (req: recordsv1.ListNotesRequest, ctx: CallContext) => {
      track('records', 'listNotes', req, ctx);
      liveRecord(state, req.entityType, req.recordId);
      const names = (r: recordsv1.Record) =>
        ((JSON.parse(r.dataJson) as { links?: { type: string; id: string }[] }).links ?? []).some((l) => l.type === req.entityType && l.id === req.recordId);
      return { notes: [...state.records.values()].filter((r) => r.entityType === 'Note' && r.active && names(r)) };
    },
    listUserTasks: async (req: recordsv1.ListUserTasksRequest, ctx: CallContext) => {
      track('records', 'listUserTasks', req, ctx);
      knownUser(state, req.userId);
      const assigned = (r: recordsv1.Record) => ((JSON.parse(r.dataJson) as { assignees?: { id: string }[] }).assignees ?? []).some((a) => a.id === req.userId);
      return { tasks: [...state.records.values()].filter((r) => r.entityType === 'Task' && r.active && assigned(r)) };
    },
    // Queries: every live record of the type in one page; a filter naming the field `nope` is refused
    // the way records locates problems (inside `filters`, without the `body` head).
    queryRecords: async (req: recordsv1.QueryRecordsRequest, ctx: CallContext) => {
      track('records', 'queryRecords', req, ctx);
      if (req.filtersJson?.includes('"nope"')) throw AppError.invalid([{ loc: ['filters', 0, 0], msg: 'Shot has no field nope', type: 'unknown_field' }]);
      // A filter naming `slow` runs past records' QUERY_TIMEOUT_MS.
      if (req.filtersJson?.includes('"slow"'))
        throw new AppError('unavailable', 'the query ran longer than 4000 ms and was cancelled: narrow its filter or page with a smaller limit', {
          code: 'query_timeout',
        });
      const items = [...state.records.values()].filter((r) => r.entityType === req.entityType && r.active);
      return { items, nextCursor: req.cursor ? undefined : 'next-page', total: req.includeTotal ? items.length : undefined };
    },
    // Every stored Project whose data says restricted (retired ones too), with the ids its members list.
    listRestrictedProjects: async (req: recordsv1.ListRestrictedProjectsRequest, ctx: CallContext) => {
      track('records', 'listRestrictedProjects', req, ctx);
      const projects = [...state.records.values()].flatMap((r) => {
        const d = JSON.parse(r.dataJson) as { restricted?: boolean; members?: { id: string }[] };
        return r.entityType === 'Project' && d.restricted === true ? [{ id: r.id, memberIds: (d.members ?? []).map((m) => m.id) }] : [];
      });
      return { projects };
    },
    getTimesheet: async (req: recordsv1.GetTimesheetRequest, ctx: CallContext) => {
      track('records', 'getTimesheet', req, ctx);
      knownUser(state, req.userId);
      const timeLogs = [...state.records.values()].filter((r) => {
        const d = JSON.parse(r.dataJson) as { user?: { id: string }; date?: string };
        return r.entityType === 'TimeLog' && r.active && d.user?.id === req.userId && d.date !== undefined && d.date >= req.from && d.date <= req.to;
      });
      const totalMinutes = timeLogs.reduce((n, r) => n + Number((JSON.parse(r.dataJson) as { minutes?: number }).minutes ?? 0), 0);
      return { timeLogs, totalMinutes };
    },
    // Share links over the in-memory records: token `share-<n>`; a link's password is kept as given.
    createShareLink: async (req: recordsv1.CreateShareLinkRequest, ctx: CallContext) => {
      track('records', 'createShareLink', req, ctx);
      liveRecord(state, 'Playlist', req.playlistId);
      const token = `share-${shares().size + 1}`;
      const link: recordsv1.ShareLink = {
        id: newId(),
        playlistId: req.playlistId,
        tokenPrefix: token.slice(0, 6),
        expiresAt: req.expiresAt,
        canComment: req.canComment,
        hasPassword: req.password !== undefined,
        createdBy: ctx.principal?.userId,
        createdAt: now(),
      };
      shares().set(token, { link, password: req.password });
      return { link, token };
    },
    listShareLinks: async (req: recordsv1.ListShareLinksRequest, ctx: CallContext) => {
      track('records', 'listShareLinks', req, ctx);
      liveRecord(state, 'Playlist', req.playlistId);
      return { links: [...shares().values()].filter((s) => s.link.playlistId === req.playlistId).map((s) => s.link) };
    },
    revokeShareLink: async (req: recordsv1.RevokeShareLinkRequest, ctx: CallContext) => {
      track('records', 'revokeShareLink', req, ctx);
      const share = shares().get(req.token) ?? [...shares().values()].find((s) => s.link.id === req.token);
      if (!share) throw AppError.notFound('no share link with this token or id');
      share.link.revokedAt ??= now();
      return { link: share.link };
    },
    openShare: async (req: recordsv1.OpenShareRequest, ctx: CallContext) => {
      track('records', 'openShare', req, ctx);
      if (state.shareVerifyMs && req.password !== undefined) await new Promise((r) => setTimeout(r, state.shareVerifyMs));
      const share = usableShare(req.token, req.password, req.sessionLinkId);
      const playlist = liveRecord(state, 'Playlist', share.link.playlistId);
      const data = JSON.parse(playlist.dataJson) as { name?: string; versions?: { id: string }[] };
      const versions = (data.versions ?? []).flatMap((v) => {
        const r = state.records.get(v.id);
        if (!r?.active) return [];
        return [{ id: r.id, code: String((JSON.parse(r.dataJson) as { code?: string }).code ?? ''), status: r.status, notes: [] }];
      });
      return {
        linkId: share.link.id,
        hasPassword: share.link.hasPassword,
        playlistId: playlist.id,
        playlistName: data.name ?? '',
        versions,
        canComment: share.link.canComment,
        expiresAt: share.link.expiresAt,
      };
    },
    checkShareLink: async (req: recordsv1.CheckShareLinkRequest, ctx: CallContext) => {
      track('records', 'checkShareLink', req, ctx);
      const share = [...shares().values()].find((s) => s.link.id === req.linkId);
      if (!share || share.link.revokedAt) throw AppError.notFound('this share link does not exist, was revoked or has expired');
      return { playlistId: share.link.playlistId };
    },
    createGuestNote: async (req: recordsv1.CreateGuestNoteRequest, ctx: CallContext) => {
      track('records', 'createGuestNote', req, ctx);
      const share = usableShare(req.token, req.password, req.sessionLinkId);
      if (!share.link.canComment) throw new AppError('forbidden', 'this share link does not allow comments');
      const data = { content: req.comment, links: [{ type: 'Version', id: req.versionId }], guest_name: req.guestName, verdict: req.verdict };
      const note: recordsv1.Record = { id: newId(), entityType: 'Note', active: true, createdAt: now(), updatedAt: now(), dataJson: JSON.stringify(data) };
      state.records.set(note.id, note);
      return { note };
    },
  };
  return records;
}

/** A service of records answering canned answers (`answers()`: method → answer; unlisted: `{}`), every call tracked. */
function canned(track: Track, answers: () => Map<string, unknown> | undefined) {
  return new Proxy(
    {},
    {
      get: (_t, method: string) => async (req: unknown, ctx: CallContext) => {
        track('records', method, req, ctx);
        return answers()?.get(method) ?? {};
      },
    },
  );
}

/** Site sync (served by records): canned answers, so the routes' mapping and checks can be seen. */
export function fakeSitesync(state: FakeState, track: Track) {
  return canned(track, () => state.sitesyncAnswers);
}

/** The farm (served by records): canned answers, as site sync's. */
export function fakeFarm(state: FakeState, track: Track) {
  return canned(track, () => state.farmAnswers);
}
