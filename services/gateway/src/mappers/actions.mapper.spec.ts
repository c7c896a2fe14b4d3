import { actionsCodec } from '@reelbase/lib-platform';
import { actionsv1 } from '@reelbase/proto';
import { describe, expect, it } from 'vitest';
import {
  actionListText,
  customActionsRequest,
  customActionsText,
  executeActionRequest,
  executeAnswer,
  launchPayloadText,
  launcherUri,
  listActionsRequest,
} from './actions.mapper.js';

const P = '0190a0b0-0000-7000-8000-0000000000b1';
const R = '0190a0b0-0000-7000-8000-0000000000c1';

const wire = <T>(fns: { encode(m: T): { finish(): Uint8Array }; decode(b: Uint8Array): T }, m: T): T => fns.decode(fns.encode(m).finish());

const PAYLOAD = {
  app: 'maya',
  variant: '2025',
  label: 'Maya 2025',
  executables: { linux: '/usr/autodesk/maya2025/bin/maya', windows: 'C:/maya.exe' },
  args: ['-proj', '/shows'],
  environment: { MAYA_MODULE_PATH: '/a:/b', STUDIO: 'x' },
  tools: [{ tool: 'mtoa', label: 'Arnold', version: '5.4' }],
  context: {
    project: { id: P, code: 'demo', name: null },
    entity: { type: 'Shot', id: R, code: 'sh010' },
    task: { id: R, name: 'anim', step: null },
  },
};

describe('actions mapper: requests', () => {
  it('lists and executes with the selection of the body', () => {
    const body = { project_id: P, entity_type: 'Shot', entity_ids: [R] };
    expect(listActionsRequest(body)).toEqual({ projectId: P, entityType: 'Shot', entityIds: [R] });
    expect(executeActionRequest({ ...body, action_id: 'launch:maya' })).toEqual({ actionId: 'launch:maya', projectId: P, entityType: 'Shot', entityIds: [R] });
  });

  it('sends the custom action list typed and as the deprecated body_json, and the service reads the same body back', () => {
    const body = {
      actions: [
        { id: 'publish', label: 'Publish', url: 'https://h.example.com/p', entity_types: ['Shot'], roles: ['Admin'], secret: 's'.repeat(16), icon: 'i' },
        { id: 'nosecret', label: 'No secret', url: 'https://h.example.com/n', entity_types: ['Shot', 'Asset'], secret: null, icon: null },
        { id: 'keep', label: 'Keep', url: 'https://h.example.com/k', entity_types: ['Task'] },
      ],
    };
    const req = wire(actionsv1.PutCustomActionsRequest, customActionsRequest(body));
    expect(JSON.parse(req.bodyJson)).toEqual(body);
    expect(req.body?.actions.map((a) => a.secretChange?.$case)).toEqual(['secret', 'noSecret', undefined]);
    // A null icon and an absent one are stored alike (null).
    const { icon: _null, ...second } = body.actions[1]!;
    expect(actionsCodec.customActionListFromProto(req.body!)).toEqual({ actions: [body.actions[0], second, body.actions[2]] });
  });
});

describe('actions mapper: answers', () => {
  it('reads the actions list, launch and webhook executes from their typed answers', () => {
    const items = [
      { id: 'launch:maya', kind: 'launch', label: 'Maya', app: 'maya', variant: '2025', group: 'maya', order: 0 },
      { id: 'publish', kind: 'webhook', label: 'Publish', icon: 'i', order: 1 },
    ];
    const list = wire(actionsv1.ListActionsResponse, { json: '', items: items.map(actionsCodec.actionItemToProto) });
    expect(JSON.parse(actionListText(list))).toEqual({ items });
    const launch = { kind: 'launch', token: 'tok', expires_at: '2026-01-01T00:10:00.000000Z' };
    expect(executeAnswer(wire(actionsv1.ExecuteActionResponse, { json: '', result: actionsCodec.executeResultToProto(launch) }))).toEqual(launch);
    const hook = { kind: 'webhook', delivery_id: R };
    expect(executeAnswer(wire(actionsv1.ExecuteActionResponse, { json: '', result: actionsCodec.executeResultToProto(hook) }))).toEqual(hook);
  });

  it.each([
    ['its code', { type: 'Shot', id: R, code: 'sh010' }],
    ['its name', { type: 'Shot', id: R, name: 'Shot ten' }],
    ['a null name (neither code nor name)', { type: 'Shot', id: R, name: null }],
    ['nothing (a link alone)', { type: 'Shot', id: R }],
  ])('reads a launch payload whose entity is named by %s', (_what, entity) => {
    const payload = { ...PAYLOAD, context: { ...PAYLOAD.context, entity } };
    const res = wire(actionsv1.TakeLaunchResponse, { json: '', payload: actionsCodec.launchPayloadToProto(payload) });
    expect(JSON.parse(launchPayloadText(res))).toEqual(payload);
  });

  it('reads a launch payload without executables, variant or task', () => {
    const { executables: _e, ...rest } = PAYLOAD;
    const payload = { ...rest, variant: null, context: { project: PAYLOAD.context.project, entity: PAYLOAD.context.entity } };
    const res = wire(actionsv1.TakeLaunchResponse, { json: '', payload: actionsCodec.launchPayloadToProto(payload) });
    expect(JSON.parse(launchPayloadText(res))).toEqual(payload);
  });

  it('reads custom actions: roles null for every role, icon null, has_secret', () => {
    const actions = [
      { id: 'a', label: 'A', url: 'https://h.example.com/a', entity_types: ['Shot'], roles: null, icon: null, has_secret: false },
      { id: 'b', label: 'B', url: 'https://h.example.com/b', entity_types: ['Shot'], roles: ['Admin', 'Artist'], icon: 'b.png', has_secret: true },
    ];
    const res = wire(actionsv1.GetCustomActionsResponse, { json: '', actions: actions.map(actionsCodec.customActionViewToProto) });
    expect(JSON.parse(customActionsText(res))).toEqual({ actions });
  });

  it('passes the deprecated json on when a service of the previous release sent no typed answer', () => {
    expect(actionListText({ json: '{"items":[]}', items: [] })).toBe('{"items":[]}');
    expect(executeAnswer({ json: '{"kind":"webhook","delivery_id":"d"}' })).toEqual({ kind: 'webhook', delivery_id: 'd' });
    expect(launchPayloadText({ json: '{"app":"maya"}' })).toBe('{"app":"maya"}');
    expect(customActionsText({ json: '{"actions":[]}', actions: [] })).toBe('{"actions":[]}');
  });

  it('builds the launcher URI with the origin and token encoded', () => {
    expect(launcherUri('https://rb.example.com:8443', 'tok/en+1')).toBe(
      'reelbase-launcher://launch?server=https%3A%2F%2Frb.example.com%3A8443&token=tok%2Fen%2B1',
    );
  });
});
