import type { farmv1, recordsv1 } from '@reelbase/proto';
import { describe, expect, it } from 'vitest';
import { FarmClaim, FarmJobCreate } from '../schemas/farm.schema.js';
import { chunkAndJobJson, chunkObject, chunkPageJson, claimedJson, claimRequest, completeChunkRequest, createJobRequest } from './farm.mapper.js';

const JOB: recordsv1.Record = {
  id: '0190a0b0-0000-7000-8000-0000000000f1',
  entityType: 'FarmJob',
  active: true,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000000Z',
  dataJson: '{"name":"r"}',
};
const CHUNK: farmv1.FarmChunk = {
  id: 'c1',
  jobId: JOB.id,
  index: 0,
  frames: '1-10',
  state: 'leased',
  attempt: 1,
  leaseExpiresAt: 'soon',
  outputJson: '{"ok":true}',
};

describe('farm mapper', () => {
  it('maps a job body to CreateJob with its defaults and the payload as JSON text', () => {
    const body = FarmJobCreate.parse({ project_id: JOB.id, name: 'n', kind: 'render', payload: { scene: 's' } });
    expect(createJobRequest(body)).toMatchObject({
      projectId: JOB.id,
      pool: 'default',
      priority: 50,
      chunkSize: 10,
      maxAttempts: 3,
      dependsOn: [],
      payloadJson: '{"scene":"s"}',
    });
    expect(claimRequest(FarmClaim.parse({ pool: 'p', worker: 'w' }))).toEqual({ pool: 'p', worker: 'w', kinds: [], leaseSeconds: 300 });
    expect(completeChunkRequest('c1', { lease: 'l' })).toEqual({ chunkId: 'c1', lease: 'l', outputJson: undefined });
  });

  it('answers chunks with nulls for absent values, the output parsed, and leases only in a claim', () => {
    expect(chunkObject({ ...CHUNK, frames: undefined, outputJson: undefined })).toEqual({
      id: 'c1',
      job_id: JOB.id,
      index: 0,
      frames: null,
      state: 'leased',
      attempt: 1,
      lease_expires_at: 'soon',
      progress: null,
      worker: null,
      error: null,
    });
    expect(JSON.parse(chunkAndJobJson({ chunk: CHUNK, job: JOB }))).toMatchObject({
      chunk: { output: { ok: true } },
      job: { id: JOB.id, data: { name: 'r' } },
    });
    expect(claimedJson({ lease: 'L' })).toBeUndefined();
    expect(JSON.parse(claimedJson({ chunk: CHUNK, job: JOB, lease: 'L' })!).chunk).toEqual({
      id: 'c1',
      index: 0,
      frames: '1-10',
      attempt: 1,
      lease: 'L',
      lease_expires_at: 'soon',
    });
    expect(chunkPageJson({ chunks: [], nextCursor: undefined })).toEqual({ items: [], next_cursor: null });
  });
});
