import { addonsCodec } from '@reelbase/lib-platform';
import { addonsv1 } from '@reelbase/proto';
import { describe, expect, it } from 'vitest';
import { addonBodyRequest, addonText, addonTypedBodyRequest } from './addons.mapper.js';

const P = '0190a0b0-0000-7000-8000-0000000000b1';

const wire = (m: addonsv1.AddonJson): addonsv1.AddonJson => addonsv1.AddonJson.decode(addonsv1.AddonJson.encode(m).finish());
const wireBody = (m: addonsv1.AddonBody): addonsv1.AddonBody => addonsv1.AddonBody.decode(addonsv1.AddonBody.encode(m).finish());

const SCHEMA = { type: 'object', properties: { fps: { type: 'integer', minimum: 1, maximum: 120 }, codec: { enum: ['prores', 'h264'] } }, required: ['fps'] };

describe('addons mapper: requests', () => {
  it('a version and a settings layer go as JSON text only (free-form documents)', () => {
    const version = { title: 'Publish', settings_schema: SCHEMA, defaults: { fps: 24 } };
    expect(addonBodyRequest({ name: 'publish', version: '1.2.0' }, version)).toEqual({ name: 'publish', version: '1.2.0', bodyJson: JSON.stringify(version) });
    expect(addonBodyRequest({ name: 'publish', projectId: P }, { fps: 25 })).toEqual({ name: 'publish', version: '', projectId: P, bodyJson: '{"fps":25}' });
  });

  it('PATCH and pin go typed and as the deprecated body_json; the service reads the same body back', () => {
    const patch = wireBody(addonTypedBodyRequest('production', { name: 'publish' }, { production_version: '2.0.0' }));
    expect(patch).toMatchObject({ name: 'publish', version: '', bodyJson: '{"production_version":"2.0.0"}', productionVersion: '2.0.0' });
    expect(addonsCodec.addonBodyFromProto('production', patch)).toEqual({ production_version: '2.0.0' });
    const pin = wireBody(addonTypedBodyRequest('pin', { name: 'publish', projectId: P }, { version: '1.0.0' }));
    expect(pin).toMatchObject({ projectId: P, bodyJson: '{"version":"1.0.0"}', pin: { version: '1.0.0' } });
    expect(addonsCodec.addonBodyFromProto('pin', pin)).toEqual({ version: '1.0.0' });
    const unpin = wireBody(addonTypedBodyRequest('pin', { name: 'publish', projectId: P }, { version: null }));
    expect(unpin.bodyJson).toBe('{"version":null}');
    expect(addonsCodec.addonBodyFromProto('pin', unpin)).toEqual({ version: null });
  });

  it('a request of the previous release (no typed fields) reads as absent, so the JSON is used', () => {
    const old = wireBody({ name: 'publish', version: '', bodyJson: '{"version":null}' });
    expect(addonsCodec.addonBodyFromProto('pin', old)).toBeUndefined();
    expect(addonsCodec.addonBodyFromProto('production', old)).toBeUndefined();
  });
});

describe('addons mapper: answers', () => {
  it.each([
    ['addons', { items: [{ name: 'publish', title: 'Publish', versions: ['1.0.0', '2.0.0'], production_version: '2.0.0' }] }],
    ['addon', { name: 'publish', title: 'Publish', versions: ['1.0.0'], production_version: '1.0.0' }],
    [
      'version',
      { name: 'publish', version: '1.0.0', title: 'Publish', settings_schema: SCHEMA, defaults: { fps: 24, nested: { a: [1, null] } }, created_at: 't' },
    ],
    ['deleted', { name: 'publish', version: '1.0.0', deleted: true }],
    ['overrides', { name: 'publish', project_id: null, version: '1.0.0', overrides: { fps: 25 } }],
    ['overrides', { name: 'publish', project_id: P, version: '1.0.0', overrides: {} }],
    ['pin', { name: 'publish', project_id: P, version: '1.0.0' }],
    ['pin', { name: 'publish', project_id: P, version: null }],
    [
      'settings',
      { name: 'publish', version: '1.0.0', settings: { fps: 25, codec: 'prores' }, sources: { '/fps': 'project', '/codec': 'studio' }, ignored: ['/legacy'] },
    ],
  ] as const)('reads a %s answer from its typed message', (kind, json) => {
    const res = wire({ json: JSON.stringify(json), answer: addonsCodec.addonAnswerToProto(kind, json) });
    expect(res.answer?.$case).toBe(kind);
    expect(JSON.parse(addonText({ ...res, json: '{"stale":true}' }))).toEqual(json);
  });

  it('passes the deprecated json on when a service of the previous release sent no typed answer', () => {
    expect(addonText({ json: '{"rpc":"listAddons"}' })).toBe('{"rpc":"listAddons"}');
    expect(addonText({ json: '' })).toBe('{}');
  });
});
