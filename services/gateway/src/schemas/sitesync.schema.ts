/**
 * Schemas of the site sync routes (docs/api-notes.md, "Site sync"; docs/sitesync.md): sites,
 * requests, state pages and summaries, agents' claims and reports.
 */
import { sitesyncPolicy as P } from '@reelbase/lib-platform';
import { z } from 'zod';
import { boundedInt, queryInt, rangeText, Uuid } from './common.schema.js';

const STATUSES = P.STATE_STATUSES;

export const SiteCode = z.string().regex(P.SITE_CODE).describe('A site code: lower-case letters, digits, `_` and `-`, 1..64 characters.');
export const SiteKind = z.enum(P.SITE_KINDS);
export const StateStatus = z.enum(STATUSES);
const Priority = z.number().int().min(P.PRIORITY.min).max(P.PRIORITY.max);

export const SitePath = z.strictObject({ code: SiteCode });
export const StatePath = z.strictObject({ representation_id: Uuid, site: SiteCode });

export const SitePut = z
  .strictObject({
    name: z.string().min(1).max(P.SITE_NAME_MAX),
    kind: SiteKind,
    root: z
      .string()
      .max(P.SITE_ROOT_MAX)
      .nullable()
      .optional()
      .describe("Where the site keeps files (a path or URL prefix, for the agents' use); absent: none."),
  })
  .meta({ id: 'SitePut', description: 'Body of PUT /sitesync/sites/{code}: the whole site (a later PUT replaces it).' });

export const SiteOut = z
  .object({
    id: Uuid.describe('The entity_id of the SiteSync events about the site itself.'),
    code: z.string(),
    name: z.string(),
    kind: SiteKind,
    root: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'SyncSite' });

export const SiteList = z.object({ items: z.array(SiteOut) }).meta({ id: 'SyncSiteList', description: 'By code.' });

export const SyncRequestBody = z
  .strictObject({
    representation_ids: z.array(Uuid).min(P.REQUEST_IDS.min).max(P.REQUEST_IDS.max).describe('Representations to bring to the site (repeats count once).'),
    site: SiteCode,
    priority: Priority.default(P.PRIORITY.default).describe(`${rangeText(P.PRIORITY)}; higher is claimed first.`),
  })
  .meta({ id: 'SyncRequest' });

export const SyncRequestOut = z
  .object({
    queued: z.number().int().describe('States created or queued again (from failed, paused or removed).'),
    unchanged: z.number().int().describe('States already queued, in progress or synced there: left as they are.'),
  })
  .meta({ id: 'SyncRequestResult' });

export const StateOut = z
  .object({
    representation_id: Uuid,
    site: z.string(),
    project_id: Uuid.nullable().describe("The Representation's project."),
    status: StateStatus,
    priority: z.number().int(),
    progress: z.number().describe('0..1.'),
    size: z.number().int().nullable().describe('Bytes on the site so far, as last reported.'),
    total_size: z.number().int().nullable(),
    attempts: z.number().int().describe(`Lost or failed attempts since the state was last requested; the ${P.MAX_ATTEMPTS}th leaves it failed.`),
    error: z.string().nullable(),
    agent: z.string().nullable().describe('The agent that holds (or last held) the state.'),
    lease_expires_at: z.string().nullable().describe('While in_progress: when the lease runs out unless reported on.'),
    updated_at: z.string(),
  })
  .meta({ id: 'SyncState' });

export const StatesQuery = z.strictObject({
  project_id: Uuid.optional(),
  site: SiteCode.optional(),
  status: StateStatus.optional(),
  representation_id: Uuid.optional(),
  limit: queryInt(P.PAGE_LIMIT).describe(`${rangeText(P.PAGE_LIMIT)}.`),
  cursor: z.string().min(1).max(512).optional().describe('The `next_cursor` of the previous page (same filters).'),
});

export const StatePage = z
  .object({
    items: z.array(StateOut),
    next_cursor: z.string().nullable().describe('Opaque; null on the last page. Pages are in (representation_id, site) order, stable under inserts.'),
  })
  .meta({ id: 'SyncStatePage' });

export const SummaryQuery = z.strictObject({ project_id: Uuid.optional(), site: SiteCode.optional() });

export const SummaryOut = z
  .object({ counts: z.object(Object.fromEntries(STATUSES.map((s) => [s, z.number().int()])) as Record<(typeof STATUSES)[number], z.ZodNumber>) })
  .meta({ id: 'SyncSummary', description: 'States per status (every status listed, 0 included).' });

export const ClaimBody = z
  .strictObject({
    site: SiteCode,
    agent: z.string().min(1).max(P.AGENT_MAX).describe("The agent's name (a host, a process): shown as the state's `agent`."),
    limit: boundedInt(P.CLAIM_LIMIT).describe(`${rangeText(P.CLAIM_LIMIT)}.`),
    lease_seconds: boundedInt(P.LEASE_SECONDS).describe(`${rangeText(P.LEASE_SECONDS)}: how long each claim holds without a report.`),
  })
  .meta({ id: 'SyncClaim' });

export const ClaimedOut = StateOut.extend({
  lease: z.string().describe('The opaque token of this claim (256 random bits): send it with every report on the state.'),
}).meta({ id: 'SyncClaimed' });

export const ClaimOut = z.object({ items: z.array(ClaimedOut) }).meta({ id: 'SyncClaimResult', description: 'Empty when nothing is due.' });

export const ReportBody = z
  .strictObject({
    lease: z.string().min(1).max(256),
    status: z.enum(P.REPORT_STATUSES),
    progress: z.number().min(0).max(1).optional(),
    size: z.number().int().min(0).optional(),
    total_size: z.number().int().min(0).optional(),
    error: z.string().max(P.ERROR_MAX).optional().describe('Why it failed (kept on the state).'),
  })
  .meta({ id: 'SyncReport' });

export const StatePatch = z
  .strictObject({
    status: z.enum(P.PATCH_STATUSES),
    priority: Priority.optional(),
  })
  .meta({ id: 'SyncStatePatch' });
