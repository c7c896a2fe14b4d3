import { describe, expect, it } from 'vitest';
import { AppError, type Principal } from '@reelbase/lib-platform';
import {
  assertAgentPool,
  assertFarmWriter,
  assertJobManager,
  checkChunkPage,
  checkCreateJob,
  checkOutput,
  checkReport,
  encodeChunkCursor,
  leaseDigest,
  LIMITS,
  newLease,
  nextStatus,
} from './farm.rules.js';
import { farmRecordWriteRefusal } from '../../kernel/domain/farm.guard.js';

const P = '0190c3a2-0000-7000-8000-000000000001';
const who = (role: string, userId = 'u1'): Principal => ({ role, userId, authKind: 'token' }) as Principal;
const caught = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('did not throw');
};

describe('farm rules', () => {
  it('fills defaults and derives chunks and counters', () => {
    const j = checkCreateJob({ projectId: P, name: 'comp', kind: 'render', frames: '1001-1100', dependsOn: [] });
    expect(j).toMatchObject({ pool: 'default', priority: 50, chunkSize: 10, maxAttempts: 3 });
    expect(j.chunks).toHaveLength(10);
    expect(j.data).toMatchObject({ chunks_total: 10, chunks_done: 0, chunks_failed: 0, progress: 0, frames: '1001-1100' });
    expect(checkCreateJob({ projectId: P, name: 'x', kind: 'k', dependsOn: [] }).chunks).toEqual([null]);
  });

  it('reports every problem of a create at once', () => {
    const err = caught(() =>
      checkCreateJob({
        projectId: 'p',
        name: ' ',
        kind: 'k',
        priority: -1,
        chunkSize: 10_001,
        maxAttempts: 0,
        frames: '1-2',
        dependsOn: ['nope'],
        payloadJson: '[]',
      }),
    );
    expect(err.problems.map((p) => p.loc.join('.')).sort()).toEqual([
      'chunk_size',
      'depends_on.0',
      'max_attempts',
      'name',
      'payload',
      'priority',
      'project_id',
    ]);
    expect(caught(() => checkCreateJob({ projectId: P, name: 'x', kind: 'k', frames: '3-1', dependsOn: [] })).problems[0]!.loc).toEqual(['frames']);
  });

  it('roles: Viewers never write; job changes need the submitter or Admin, Supervisor, Coordinator', () => {
    expect(() => assertFarmWriter(who('Viewer'), 'x')).toThrow(AppError);
    expect(() => assertFarmWriter(who('Artist'), 'x')).not.toThrow();
    expect(() => assertJobManager(who('Artist', 'u1'), 'u1')).not.toThrow();
    expect(caught(() => assertJobManager(who('Artist', 'u1'), 'u2')).kind).toBe('forbidden');
    for (const r of ['Admin', 'Supervisor', 'Coordinator']) expect(() => assertJobManager(who(r), 'someone')).not.toThrow();
  });

  it('an agent key with pools claims only from them (403 naming them); any other caller from any pool', () => {
    const agent = (pools?: string[]): Principal => ({ ...who('Artist'), authKind: 'api_key', scope: 'agent', ...(pools ? { pools } : {}) });
    expect(() => assertAgentPool(agent(['gpu', 'cpu']), 'gpu')).not.toThrow();
    const refused = caught(() => assertAgentPool(agent(['gpu', 'cpu']), 'default'));
    expect(refused.kind).toBe('forbidden');
    expect(refused.message).toBe('this agent key claims only from the pools "gpu", "cpu", not "default"');
    expect(caught(() => assertAgentPool(agent(['gpu']), 'GPU')).message).toBe('this agent key claims only from the pool "gpu", not "GPU"');
    expect(() => assertAgentPool(agent(), 'anything')).not.toThrow();
    expect(() => assertAgentPool(who('Artist'), 'anything')).not.toThrow();
    // Pools without the agent scope are not a key's pools (auth never issues them).
    expect(() => assertAgentPool({ ...who('Artist'), pools: ['gpu'] }, 'default')).not.toThrow();
  });

  it('transitions', () => {
    expect(nextStatus('pause', 'running', true)).toBe('paused');
    expect(nextStatus('resume', 'paused', false)).toBe('queued');
    expect(nextStatus('resume', 'paused', true)).toBe('running');
    expect(nextStatus('retry', 'failed', true)).toBe('running');
    expect(nextStatus('cancel', 'failed', true)).toBe('cancelled');
    for (const [a, s] of [
      ['pause', 'done'],
      ['resume', 'running'],
      ['retry', 'running'],
      ['cancel', 'cancelled'],
    ] as const) {
      expect(caught(() => nextStatus(a, s, true)).code, `${a} ${s}`).toBe('transition_not_allowed');
    }
  });

  it('reports, leases and the generic routes', () => {
    expect(checkReport({ status: 'running', progress: 20 }, 'queued')).toEqual({ status: 'running', data: { progress: 20 } });
    expect(checkReport({}, 'queued').status).toBe('queued');
    expect(caught(() => checkReport({ status: 'nope', progress: 101 }, 'queued')).problems).toHaveLength(2);
    const a = newLease();
    const b = newLease();
    expect(a.token).not.toBe(b.token);
    expect(Buffer.from(a.token.slice(6), 'base64url')).toHaveLength(24);
    expect(leaseDigest(a.token).equals(a.digest)).toBe(true);
    expect(farmRecordWriteRefusal('create', false, {})).toMatch(/POST \/farm\/jobs/);
    expect(farmRecordWriteRefusal('update', true, {})).toMatch(/status/);
    expect(farmRecordWriteRefusal('update', false, { chunks_done: 1, progress: 2 })).toMatch(/chunks_done, progress/);
    expect(farmRecordWriteRefusal('update', false, { name: 'x', custom: 1 })).toBeUndefined();
  });

  it('bounds: 100,000 frames and 10,000 chunks a job', () => {
    expect(checkCreateJob({ projectId: P, name: 'x', kind: 'k', frames: '1-100000', chunkSize: 10, dependsOn: [] }).chunks).toHaveLength(10_000);
    for (const [frames, chunkSize] of [
      ['1-1000000', 10],
      ['1-100001', 100],
      ['1-10001', 1],
    ] as const) {
      const problems = caught(() => checkCreateJob({ projectId: P, name: 'x', kind: 'k', frames, chunkSize, dependsOn: [] })).problems;
      expect(
        problems.map((p) => [p.loc, p.type]),
        frames,
      ).toEqual([[['frames'], 'frames']]);
    }
  });

  it('an output is kept compact and at most 64 KiB; a larger one is 422 too_large at output', () => {
    expect(checkOutput(undefined)).toBeNull();
    expect(checkOutput('{ "files" : [ "a.exr" ] }')).toBe('{"files":["a.exr"]}');
    const largest = JSON.stringify({ log: 'x'.repeat(LIMITS.outputBytes - 10) });
    expect(Buffer.byteLength(largest)).toBe(LIMITS.outputBytes);
    expect(checkOutput(largest)).toBe(largest);
    // Bytes, not characters: 'é' is two of them.
    for (const bad of [JSON.stringify({ log: 'x'.repeat(LIMITS.outputBytes - 9) }), JSON.stringify('é'.repeat(LIMITS.outputBytes / 2))]) {
      expect(caught(() => checkOutput(bad)).problems).toEqual([{ loc: ['output'], msg: expect.stringMatching(/at most 65536 bytes/), type: 'too_large' }]);
    }
    expect(caught(() => checkOutput('{')).problems[0]).toMatchObject({ loc: ['output'], type: 'json_invalid' });
  });

  it('a chunk page: limit 1..500 (100), and a cursor this list wrote', () => {
    expect(checkChunkPage(undefined, undefined)).toEqual({ limit: 100, afterIndex: -1 });
    expect(checkChunkPage(500, encodeChunkCursor(41))).toEqual({ limit: 500, afterIndex: 41 });
    const bad = caught(() => checkChunkPage(501, Buffer.from('[1]').toString('base64url'))).problems;
    expect(bad.map((p) => p.loc)).toEqual([['limit'], ['cursor']]);
    expect(caught(() => checkChunkPage(0, 'not-a-cursor')).problems).toHaveLength(2);
  });
});
