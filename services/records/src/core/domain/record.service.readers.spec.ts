/**
 * The record service and restricted projects, against the in-memory store (whose reader rule is the
 * SQL one's over its rows): for a user who is not a member, a restricted project and every record in
 * it do not exist — reads and writes naming one are 404, a create into it is 404 as a read of that
 * Project is, a batch fails at that request's index — while a member, an Admin and a service see and
 * write everything, and open projects are unchanged. Against PostgreSQL:
 * test/restricted.readers.int.spec.ts.
 */
import type { CallContext } from '@reelbase/lib-platform';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordService } from './record.service.js';
import { admin, ctxOf, failure, newRecordService } from '../../../test/record.service.memory.js';

const MEMBER = '0190a000-0000-7000-8000-0000000000d1';
const OUTSIDER = '0190a000-0000-7000-8000-0000000000d2';
const member = ctxOf('Artist', MEMBER);
const outsider = ctxOf('Artist', OUTSIDER);
const service: CallContext = { requestId: 'r', principal: { userId: '', role: 'Service', authKind: 'service' } };

let records: RecordService;
let open: string;
let secret: string;
let shot: string;

beforeEach(async () => {
  ({ service: records, projectId: open } = await newRecordService());
  const restricted = { code: 'S', restricted: true, members: [{ type: 'User', id: MEMBER }] };
  secret = (await records.create({ entityType: 'Project', dataJson: JSON.stringify(restricted) }, admin)).id;
  shot = (await records.create({ entityType: 'Shot', projectId: secret, dataJson: '{"code":"sh010"}' }, member)).id;
});

describe('a user who is not a member of a restricted project', () => {
  it('does not find its records, nor the Project record itself', async () => {
    expect((await failure(records.get('Shot', shot, outsider))).message).toBe(`Shot ${shot} not found`);
    expect((await failure(records.get('Project', secret, outsider))).kind).toBe('not_found');
  });

  it('updates, retires and revives none of them: 404, nothing written', async () => {
    expect((await failure(records.update({ entityType: 'Shot', id: shot, status: 'ip' }, outsider))).kind).toBe('not_found');
    expect((await failure(records.retire('Shot', shot, undefined, outsider))).kind).toBe('not_found');
    await records.retire('Shot', shot, undefined, member);
    expect((await failure(records.revive('Shot', shot, outsider))).kind).toBe('not_found');
    await records.revive('Shot', shot, member);
    expect((await records.get('Shot', shot, member)).status).toBeNull();
  });

  it('creates nothing in it: 404 as a read of the Project, where a missing project is the body’s 422', async () => {
    const err = await failure(records.create({ entityType: 'Shot', projectId: secret, dataJson: '{"code":"x"}' }, outsider));
    expect(err).toMatchObject({ kind: 'not_found', message: `Project ${secret} not found` });
    const missing = await failure(records.create({ entityType: 'Shot', projectId: OUTSIDER, dataJson: '{"code":"x"}' }, outsider));
    expect(missing.kind).toBe('invalid');
  });

  it('moves no record into it', async () => {
    const mine = await records.create({ entityType: 'Shot', projectId: open, dataJson: '{"code":"o"}' }, outsider);
    expect(await failure(records.update({ entityType: 'Shot', id: mine.id, projectId: secret }, outsider))).toMatchObject({
      kind: 'not_found',
      message: `Project ${secret} not found`,
    });
    expect((await records.get('Shot', mine.id, outsider)).projectId).toBe(open);
  });

  it('fails a batch at the request naming it, with its index, and writes nothing of the batch', async () => {
    const requests = [
      { request_type: 'create', entity_type: 'Shot', project_id: open, data: { code: 'ok' } },
      { request_type: 'update', entity_type: 'Shot', entity_id: shot, data: { code: 'x' } },
    ];
    const err = await failure(records.batch(JSON.stringify(requests), outsider));
    expect(err).toMatchObject({ kind: 'not_found', extra: { index: 1 } });
    const into = [{ request_type: 'create', entity_type: 'Shot', project_id: secret, data: { code: 'x' } }];
    expect(await failure(records.batch(JSON.stringify(into), outsider))).toMatchObject({ kind: 'not_found', extra: { index: 0 } });
    const retire = [{ request_type: 'delete', entity_type: 'Shot', entity_id: shot }];
    expect(await failure(records.batch(JSON.stringify(retire), outsider))).toMatchObject({ kind: 'not_found', extra: { index: 0 } });
    expect((await records.get('Shot', shot, member)).data).toEqual({ code: 'sh010' });
  });

  it('still reads and writes open projects and studio-wide records as before', async () => {
    const s = await records.create({ entityType: 'Shot', projectId: open, dataJson: '{"code":"o"}' }, outsider);
    expect((await records.update({ entityType: 'Shot', id: s.id, status: 'ip' }, outsider)).status).toBe('ip');
    expect((await records.get('Project', open, outsider)).id).toBe(open);
    const batch = [{ request_type: 'create', entity_type: 'Shot', project_id: open, data: { code: 'b' } }];
    expect(JSON.parse(await records.batch(JSON.stringify(batch), outsider))).toMatchObject({ results: [{ project_id: open }] });
  });
});

describe('members, Admins and services', () => {
  it('read and write everything in it', async () => {
    for (const ctx of [member, admin, service]) {
      expect((await records.get('Shot', shot, ctx)).id).toBe(shot);
      expect((await records.get('Project', secret, ctx)).id).toBe(secret);
    }
    await records.update({ entityType: 'Shot', id: shot, status: 'fin' }, admin);
    const created = await records.create({ entityType: 'Asset', projectId: secret, dataJson: '{"code":"a"}' }, member);
    const batch = [{ request_type: 'update', entity_type: 'Asset', entity_id: created.id, data: { code: 'b' } }];
    expect(JSON.parse(await records.batch(JSON.stringify(batch), member))).toMatchObject({ results: [{ data: { code: 'b' } }] });
  });

  it('lose it with their membership: the next call of a removed member is a 404', async () => {
    await records.update({ entityType: 'Project', id: secret, dataJson: JSON.stringify({ members: [] }) }, admin);
    expect((await failure(records.get('Shot', shot, member))).kind).toBe('not_found');
    await records.update({ entityType: 'Project', id: secret, dataJson: JSON.stringify({ restricted: false }) }, admin);
    expect((await records.get('Shot', shot, outsider)).id).toBe(shot);
  });
});
