import { describe, expect, it } from 'vitest';
import { apiKeyListJson, issuedKeyJson, registeredJson } from './auth.mapper.js';

describe('auth mapper', () => {
  it('answers a later registration without a token, and a first one with it', () => {
    const user = JSON.stringify({ id: 'u', entity_type: 'User', created_at: 'a', updated_at: 'b', data: {} });
    expect(registeredJson({ userJson: user })).toMatchObject({
      user: { id: 'u', project_id: null },
      access_token: null,
      token_type: 'bearer',
      expires_in: null,
    });
    expect(registeredJson({ userJson: user, accessToken: 't', expiresIn: 60 })).toMatchObject({ access_token: 't', expires_in: 60 });
  });

  it('answers API keys without their secret, absent times as null', () => {
    expect(apiKeyListJson({ items: [{ id: 'k', userId: 'u', name: 'n', prefix: 'svc_ab', createdAt: 'a' }] })).toEqual({
      items: [{ id: 'k', user_id: 'u', name: 'n', prefix: 'svc_ab', created_at: 'a', last_used_at: null, expires_at: null, scope: null, pools: null }],
    });
    expect(issuedKeyJson({ token: 'svc_new' }, 'asked')).toEqual({
      id: undefined,
      name: 'asked',
      token: 'svc_new',
      created_at: undefined,
      expires_at: null,
      scope: null,
      pools: null,
    });
  });

  it("answers an agent key's scope and pools; no pools is null (any pool)", () => {
    const key = { id: 'k', userId: 'u', name: 'n', prefix: 'svc_ab', createdAt: 'a' };
    const listed = apiKeyListJson({
      items: [
        { ...key, access: { scope: 'agent', pools: ['gpu', 'cpu'] } },
        { ...key, access: { scope: 'agent', pools: [] } },
      ],
    });
    expect(listed.items.map((k) => [k.scope, k.pools])).toEqual([
      ['agent', ['gpu', 'cpu']],
      ['agent', null],
    ]);
    expect(issuedKeyJson({ token: 'svc_new', key: { ...key, access: { scope: 'agent', pools: ['gpu'] } } }, 'n')).toMatchObject({
      scope: 'agent',
      pools: ['gpu'],
    });
  });
});
