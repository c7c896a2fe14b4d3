import { describe, expect, it } from 'vitest';
import { createWebhookRequest, updateWebhookRequest } from './notifier.mapper.js';

describe('notifier mapper: webhook bodies', () => {
  it('a create without filters takes every type and action', () => {
    expect(createWebhookRequest({ url: 'https://x.test/h', kind: 'webhook' })).toEqual({
      url: 'https://x.test/h',
      kind: 'webhook',
      secret: undefined,
      entityTypes: [],
      actions: [],
      active: undefined,
    });
  });

  it('a change keeps absent keys, clears the secret on null and wraps the lists it sets', () => {
    expect(updateWebhookRequest('w', { secret: null, actions: ['create'] })).toEqual({
      id: 'w',
      url: undefined,
      kind: undefined,
      secret: undefined,
      clearSecret: true,
      entityTypes: undefined,
      actions: { values: ['create'] },
      active: undefined,
    });
  });
});
