import { SCHEMA_OPERATIONS } from '@reelbase/lib-platform';
import { schemav1 } from '@reelbase/proto';
import { describe, expect, it } from 'vitest';
import type { SchemaService } from '../domain/schema.service.js';
import { schemaHandlers } from './schema.handler.js';

const ADMIN = { requestId: 'r', principal: { userId: '0190a0b0-0000-7000-8000-000000000001', role: 'Admin' } } as never;

/** A service that answers with what it was asked. */
function recorder(): SchemaService {
  const answer =
    (what: string) =>
    async (...args: unknown[]) => ({ what, args });
  return {
    change: async (name: string, _ctx: unknown, r: unknown) => ({ what: 'change', name, r }),
    getSchema: answer('getSchema'),
    getUsage: answer('getUsage'),
    getBranding: answer('getBranding'),
    getTools: answer('getTools'),
    getApplications: answer('getApplications'),
    getActiveTools: answer('getActiveTools'),
  } as unknown as SchemaService;
}

describe('schemaHandlers', () => {
  it('has one handler per RPC of the proto service, and no other', () => {
    const handlers = schemaHandlers({ service: recorder() });
    const rpcs = Object.keys(schemav1.SchemaServiceService);
    expect(Object.keys(handlers).sort()).toEqual(rpcs.sort());
    expect(Object.keys(SCHEMA_OPERATIONS).sort()).toEqual(rpcs.sort());
  });

  it('sends a change to SchemaService.change with its name and the request codes', async () => {
    const h = schemaHandlers({ service: recorder() }) as unknown as Record<string, (b: unknown, ctx: unknown) => Promise<schemav1.JsonResult>>;
    const out = await h.deleteField!({ bodyJson: '', code: '', subCode: 'lens', entityCode: 'Shot' }, ADMIN);
    expect(JSON.parse(out.json)).toEqual({ what: 'change', name: 'deleteField', r: { body: '', code: '', fieldCode: 'lens', entityCode: 'Shot' } });
  });

  it('sends a read to its method (a catalog read with its query)', async () => {
    const h = schemaHandlers({ service: recorder() }) as unknown as Record<string, (b: unknown, ctx: unknown) => Promise<schemav1.JsonResult>>;
    expect(JSON.parse((await h.getSchema!({}, ADMIN)).json)).toEqual({ what: 'getSchema', args: [] });
    const apps = await h.getApplications!({ projectId: 'p', step: 's' }, ADMIN);
    expect(JSON.parse(apps.json)).toEqual({ what: 'getApplications', args: ['p', 's'] });
  });
});
