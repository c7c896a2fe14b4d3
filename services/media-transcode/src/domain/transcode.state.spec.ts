import { describe, expect, it } from 'vitest';
import type { Job, JobOutputs, JobStore, RepresentationFields, RepresentationWriter } from './ports.js';
import { pendingCopy, TranscodeState } from './transcode.state.js';

const ctx = { requestId: 't' };
const outputs: JobOutputs = { reviewKind: 'video', proxyKey: 'rv/a/proxy.mp4', thumbnailKey: 'rv/b/thumb.jpg' };
const files = { proxy: { key: 'rv/a/proxy.mp4', size: 10 } };

function job(over: Partial<Job> = {}): Job {
  return {
    id: 'j1',
    representationId: 'r1',
    versionId: 'v1',
    projectId: null,
    originalKey: 'rv/c/original.mp4',
    originalSize: 10,
    contentType: 'video/mp4',
    fileName: 'a.mp4',
    state: 'processing',
    publishedAt: null,
    createdAt: new Date(0).toISOString(),
    outputs: null,
    files: null,
    error: null,
    ...over,
  };
}

/** The jobs table and records, as one ordered log of writes; `failCopies` makes every Representation update fail. */
function world(opts: { attempts?: number; newerDone?: boolean; failCopies?: boolean } = {}) {
  const log: string[] = [];
  const copies: RepresentationFields[] = [];
  /** The states marked copied on the job row, each with how many copies were sent by then. */
  const marks: string[] = [];
  const jobs = {
    markCopied: (id: string, state: string) => (marks.push(`${id} ${state} after ${copies.length}`), Promise.resolve()),
    finish: (id: string, state: string, error?: string | null) => (log.push(`job ${id} ${state} ${error ?? ''}`.trim()), Promise.resolve()),
    finishDone: (id: string, o: JobOutputs) => (log.push(`job ${id} done ${o.proxyKey}`), Promise.resolve()),
    attempts: () => Promise.resolve({ count: opts.attempts ?? 0, lastError: null }),
    newerDoneExists: () => Promise.resolve(opts.newerDone ?? false),
  } as unknown as JobStore;
  const records: RepresentationWriter = {
    updateRepresentation: (id, patch) => {
      if (opts.failCopies) return Promise.reject(new Error('records is down'));
      log.push(`copy ${id} ${patch.transcode_status ?? '-'}`);
      copies.push(patch);
      return Promise.resolve();
    },
    setVersionThumbnail: (v, r) => (log.push(`thumbnail ${v} ${r}`), Promise.resolve()),
  };
  return { log, copies, marks, state: new TranscodeState({ jobs, records }) };
}

describe('TranscodeState: the job row owns the state, the Representation gets a copy', () => {
  it('a new Representation starts pending with no attempts', () => {
    expect(pendingCopy()).toEqual({ transcode_status: 'pending', attempts: 0 });
  });

  it('done: the job row first, then the copy with the outputs and files, then the Version thumbnail', async () => {
    const { log, copies, state } = world();
    await state.jobDone(job(), outputs, files);
    await state.copyDone(job(), outputs, files, ctx);
    expect(log).toEqual(['job j1 done rv/a/proxy.mp4', 'copy r1 done', 'thumbnail v1 r1']);
    expect(copies[0]).toEqual({
      transcode_status: 'done',
      review_kind: 'video',
      review_media_key: 'rv/a/proxy.mp4',
      thumbnail_media_key: 'rv/b/thumb.jpg',
      transcode_error: null,
      files,
    });
  });

  it('a later done upload keeps the Version thumbnail', async () => {
    const { log, state } = world({ newerDone: true });
    await state.copyDone(job(), outputs, files, ctx);
    expect(log).toEqual(['copy r1 done']);
  });

  it('failed: the job row keeps the reason before the copy is sent; a copy that fails leaves the row failed', async () => {
    const ok = world();
    await ok.state.failed(job(), 'the file is empty (0 bytes)', 2, ctx);
    expect(ok.log).toEqual(['job j1 failed the file is empty (0 bytes)', 'copy r1 failed']);
    expect(ok.copies[0]).toEqual({ transcode_status: 'failed', transcode_error: 'the file is empty (0 bytes)', attempts: 2 });

    const down = world({ failCopies: true });
    await expect(down.state.failed(job(), 'bad', 1, ctx)).rejects.toThrow('records is down');
    expect(down.log).toEqual(['job j1 failed bad']);
  });

  it('resend: a finished job whose copy still shows another state sends the copy again, from the row', async () => {
    const done = world();
    expect(await done.state.resend(job({ state: 'done', outputs, files }), 'processing', ctx)).toBe(true);
    expect(done.log).toEqual(['copy r1 done', 'thumbnail v1 r1']);
    expect(done.copies[0]).toMatchObject({ transcode_status: 'done', review_media_key: 'rv/a/proxy.mp4', files });

    const failed = world({ attempts: 2 });
    expect(await failed.state.resend(job({ state: 'failed', error: 'no picture' }), 'processing', ctx)).toBe(true);
    expect(failed.copies).toEqual([{ transcode_status: 'failed', transcode_error: 'no picture', attempts: 2 }]);
  });

  it('resend: nothing when the copy already agrees, or the row has nothing to copy', async () => {
    const w = world();
    expect(await w.state.resend(job({ state: 'done', outputs, files }), 'done', ctx)).toBe(false);
    expect(await w.state.resend(job({ state: 'failed', error: 'x' }), 'failed', ctx)).toBe(false);
    // Failed because its Representation was deleted: no reason, nothing to show it on.
    expect(await w.state.resend(job({ state: 'failed', error: null }), undefined, ctx)).toBe(false);
    expect(w.log).toEqual([]);
  });

  it('every copy of a finished state that is sent is marked on the job row after it, so the sweeper leaves the job', async () => {
    const w = world({ attempts: 1 });
    await w.state.copyDone(job(), outputs, files, ctx);
    await w.state.failed(job({ id: 'j2' }), 'bad', 1, ctx);
    await w.state.resend(job({ id: 'j3', state: 'done', outputs, files }), 'processing', ctx);
    await w.state.resend(job({ id: 'j4', state: 'failed', error: 'x' }), 'processing', ctx);
    // A copy that arrived but was not marked is marked by the next delivery, without a send.
    await w.state.resend(job({ id: 'j5', state: 'done', outputs, files }), 'done', ctx);
    expect(w.marks).toEqual(['j1 done after 1', 'j2 failed after 2', 'j3 done after 3', 'j4 failed after 4', 'j5 done after 4']);
    await w.state.representationGone(job({ id: 'j6' }));
    expect(w.log.at(-1)).toBe('job j6 failed');
    expect(w.marks.at(-1)).toBe('j6 failed after 4');
  });

  it('a copy that could not be sent is not marked (the sweeper publishes the job again)', async () => {
    const down = world({ failCopies: true });
    await expect(down.state.copyDone(job(), outputs, files, ctx)).rejects.toThrow('records is down');
    await expect(down.state.failed(job(), 'bad', 1, ctx)).rejects.toThrow('records is down');
    await expect(down.state.resend(job({ state: 'done', outputs, files }), 'processing', ctx)).rejects.toThrow('records is down');
    expect(down.marks).toEqual([]);
  });
});
