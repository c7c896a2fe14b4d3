/**
 * Site sync's vocabulary (docs/sitesync.md): sites, the state of one representation on one site,
 * and the limits of the routes that read and move them.
 */

export const SITE_KINDS = ['studio', 'remote', 'cloud'] as const;
export type SiteKind = (typeof SITE_KINDS)[number];

export const STATE_STATUSES = ['queued', 'in_progress', 'synced', 'failed', 'paused', 'removed'] as const;
export type StateStatus = (typeof STATE_STATUSES)[number];

/** What an agent holding the lease may report. */
export const REPORT_STATUSES = ['in_progress', 'synced', 'failed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/** What a person (or script) may set by PATCH. */
export const PATCH_STATUSES = ['paused', 'queued', 'removed'] as const;
export type PatchStatus = (typeof PATCH_STATUSES)[number];

/** The 5th lost or failed attempt leaves a state `failed`. */
export const MAX_ATTEMPTS = 5;

/** A site code: lower-case letters, digits, `_` and `-`, at most 64 characters. */
export const SITE_CODE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const SITE_NAME_MAX = 200;
export const SITE_ROOT_MAX = 4096;
export const AGENT_MAX = 200;
export const ERROR_MAX = 10_000;

export const REQUEST_IDS = { min: 1, max: 1000 } as const;
export const PRIORITY = { min: 0, max: 100, default: 50 } as const;
export const CLAIM_LIMIT = { min: 1, max: 100, default: 10 } as const;
export const LEASE_SECONDS = { min: 10, max: 3600, default: 300 } as const;
export const PAGE_LIMIT = { min: 1, max: 1000, default: 100 } as const;

/** A lease token: `ssl_` and 32 random bytes in base64url (256 bits). */
export const LEASE_TOKEN = /^ssl_[A-Za-z0-9_-]{43}$/;

export interface Site {
  /** The site's identity in the event log (entity_id of its events). */
  id: string;
  code: string;
  name: string;
  kind: SiteKind;
  root: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface SiteInput {
  code: string;
  name: string;
  kind: string;
  root?: string | null;
}

/** One representation on one site. */
export interface SiteState {
  representationId: string;
  site: string;
  projectId: string | null;
  status: StateStatus;
  priority: number;
  progress: number;
  size: number | null;
  totalSize: number | null;
  attempts: number;
  error: string | null;
  agent: string | null;
  /** Set while a claim holds the state. */
  leaseExpiresAt: string | null;
  updatedAt: string;
}

export interface StateFilter {
  projectId?: string;
  site?: string;
  status?: StateStatus;
  representationId?: string;
}

/** Where a state page goes on: after this key, in (representation_id, site) order. */
export interface StateKey {
  representationId: string;
  site: string;
}

export type StatusCounts = Record<StateStatus, number>;
