import { describe, expect, it } from 'vitest';
import { changeInfos, changeJson, changesRequest } from './sync.mapper.js';

const EVENT = { id: 7, entityType: 'Shot', entityId: 's', action: 'update', createdAt: 't', changesJson: '{}' };

describe('sync mapper', () => {
  it('asks about the events of a log page and answers each as a change', () => {
    expect(changesRequest([EVENT] as never, 'sg')).toEqual({ events: [{ eventId: 7, entityId: 's', createdAt: 't', entityType: 'Shot' }], source: 'sg' });
    const [info] = changeInfos({ json: '{"items":[{"event_id":7,"is_record":true,"record":null,"external_ids":{"sg":"1"},"echo":false}]}' });
    expect(changeJson(EVENT as never, info!)).toEqual({ event_id: 7, action: 'update', entity_type: 'Shot', id: 's', record: null, external_ids: { sg: '1' } });
  });
});
