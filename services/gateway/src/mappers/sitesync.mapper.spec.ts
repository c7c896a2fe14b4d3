import type { sitesyncv1 } from '@reelbase/proto';
import { describe, expect, it } from 'vitest';
import { ClaimBody, SitePut } from '../schemas/sitesync.schema.js';
import { claimedStatesJson, claimStatesRequest, putSiteRequest, reportStateRequest, siteJson, summaryJson } from './sitesync.mapper.js';

const STATE: sitesyncv1.SiteState = { representationId: 'r', site: 'paris', status: 'in_progress', priority: 50, progress: 0.5, attempts: 0, updatedAt: 't' };

describe('site sync mapper', () => {
  it('maps bodies to requests (a null root is none, the claim defaults applied)', () => {
    expect(putSiteRequest('paris', SitePut.parse({ name: 'Paris', kind: 'studio', root: null }))).toEqual({
      code: 'paris',
      name: 'Paris',
      kind: 'studio',
      root: undefined,
    });
    expect(claimStatesRequest(ClaimBody.parse({ site: 'paris', agent: 'a' }))).toEqual({ site: 'paris', agent: 'a', limit: 10, leaseSeconds: 300 });
    expect(reportStateRequest({ representation_id: 'r', site: 'paris' }, { lease: 'l', status: 'synced', total_size: 3 })).toMatchObject({
      representationId: 'r',
      site: 'paris',
      totalSize: 3,
    });
  });

  it('answers sites, states, claims and summaries in their client form', () => {
    expect(siteJson({ id: 'i', code: 'c', name: 'n', kind: 'cloud', createdAt: 'a', updatedAt: 'b' })).toEqual({
      id: 'i',
      code: 'c',
      name: 'n',
      kind: 'cloud',
      root: null,
      created_at: 'a',
      updated_at: 'b',
    });
    expect(claimedStatesJson({ items: [{ state: STATE, lease: 'L' }] }).items[0]).toMatchObject({
      representation_id: 'r',
      project_id: null,
      size: null,
      lease: 'L',
    });
    expect(summaryJson({ counts: [{ status: 'queued', count: 2 }] })).toEqual({ counts: { queued: 2 } });
  });
});
