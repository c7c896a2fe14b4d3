import { AppError, type CallContext } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import type { Job, JobStore, MediaObjects, RepresentationReader } from './ports.js';
import { Reviewables } from './reviewables.js';

const VERSION = '0190a0b0-0000-7000-8000-000000000a01';
const REP = '0190a0b0-0000-7000-8000-000000000a02';
const MEMBER: CallContext = { requestId: 'r1', principal: { userId: '0190a0b0-0000-7000-8000-000000000001', role: 'Artist', authKind: 'token' } };
const OUTSIDER: CallContext = { requestId: 'r2', principal: { userId: '0190a0b0-0000-7000-8000-000000000002', role: 'Artist', authKind: 'token' } };

/**
 * The status of a Version's reviewable is read from its Representation as the caller, so records'
 * reader rule answers for it (docs/api-notes.md, "Restricted projects"): a caller records hides the
 * Representation's project from gets 404, like a Version that does not exist.
 */
describe('Reviewables.status', () => {
  const jobs = { latestForVersion: async (v: string) => (v === VERSION ? ({ representationId: REP } as Job) : undefined) } as unknown as JobStore;
  const asked: CallContext[] = [];
  const records: RepresentationReader = {
    getRepresentation: async (id, ctx) => {
      asked.push(ctx);
      if (id !== REP || ctx.principal?.userId !== MEMBER.principal!.userId) throw AppError.notFound(`Representation ${id} not found`);
      return { data: { transcode_status: 'done', attempts: 1 } };
    },
  };
  const reviewables = new Reviewables({ jobs, objects: {} as MediaObjects, records });

  it('reads the Representation with the caller’s context', async () => {
    expect(await reviewables.status(VERSION, MEMBER)).toMatchObject({ status: 'done', representationId: REP });
    expect(asked.at(-1)).toBe(MEMBER);
  });

  it('is 404 for a caller records does not let read it, as for a Version without uploads', async () => {
    await expect(reviewables.status(VERSION, OUTSIDER)).rejects.toMatchObject({ kind: 'not_found' });
    expect(asked.at(-1)).toBe(OUTSIDER);
    await expect(reviewables.status('0190a0b0-0000-7000-8000-000000000a09', MEMBER)).rejects.toMatchObject({ kind: 'not_found' });
  });
});
