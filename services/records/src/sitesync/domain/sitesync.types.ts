/**
 * Site sync's vocabulary (docs/sitesync.md): sites, the state of one representation on one site,
 * and the limits of the routes that read and move them (written once for the gateway and records:
 * lib-platform policy/sitesync.policy.ts).
 */
import { sitesyncPolicy } from '@reelbase/lib-platform';

export const { SITE_KINDS, STATE_STATUSES, REPORT_STATUSES, PATCH_STATUSES, MAX_ATTEMPTS, SITE_CODE, SITE_NAME_MAX, SITE_ROOT_MAX, AGENT_MAX, ERROR_MAX } =
  sitesyncPolicy;
export const { REQUEST_IDS, PRIORITY, CLAIM_LIMIT, LEASE_SECONDS, PAGE_LIMIT } = sitesyncPolicy;

export type SiteKind = (typeof SITE_KINDS)[number];
export type StateStatus = (typeof STATE_STATUSES)[number];
export type ReportStatus = (typeof REPORT_STATUSES)[number];
export type PatchStatus = (typeof PATCH_STATUSES)[number];

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
