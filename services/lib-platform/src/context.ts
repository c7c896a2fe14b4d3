/**
 * Who is acting and under which request id. The gateway resolves the principal once; every
 * internal gRPC call carries it in metadata so `created_by` and event `actor` come from it,
 * signed by the caller (grpc/internal.auth.ts) so no one else can claim a principal.
 */
import { Metadata } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';

/** The five studio roles (docs/api-notes.md, "Roles and who may write"). */
export const ROLES = ['Admin', 'Supervisor', 'Coordinator', 'Artist', 'Viewer'] as const;
export type Role = (typeof ROLES)[number];

/** How the caller proved who they are. `service` is a service acting on its own behalf. */
export type AuthKind = 'token' | 'api_key' | 'service' | 'guest';

export interface Principal {
  /** The User record's id; empty for guests and services. */
  userId: string;
  role: Role | 'Service' | 'Guest';
  authKind: AuthKind;
  apiKeyId?: string;
  /** Display name given by a share-link guest. */
  guestName?: string;
  /**
   * The service that makes this call, for itself or for the person above, when it is not the
   * gateway relaying a request: the media service says so when it writes the transcode fields
   * of a Representation (policy/review-write.policy.ts). Signed with the rest of the principal.
   */
  via?: string;
  /**
   * `agent` for an API key created with `"scope": "agent"` (docs/api-notes.md, "Restricted
   * projects"): it calls only the farm and sitesync agent routes.
   */
  scope?: 'agent';
  /** The farm pools an agent key may claim from; absent: any pool. */
  pools?: readonly string[];
}

export interface CallContext {
  requestId: string;
  principal?: Principal;
}

const MD = {
  requestId: 'x-request-id',
  user: 'x-principal-user',
  role: 'x-principal-role',
  kind: 'x-principal-kind',
  apiKey: 'x-principal-api-key',
  guest: 'x-principal-guest',
  via: 'x-principal-via',
  scope: 'x-principal-scope',
  pools: 'x-principal-pools',
} as const;

/**
 * The metadata a call's context travels in. Services accept it only from callers that
 * prove they are ours (grpc/internal.auth.ts signs and checks exactly these keys).
 */
export const PRINCIPAL_METADATA_KEYS: readonly string[] = Object.values(MD);

/** A context for work a service starts itself (start-up jobs, relays); `via` names the service when a rule needs it. */
export function systemContext(requestId: string = randomUUID(), via?: string): CallContext {
  return { requestId, principal: { userId: '', role: 'Service', authKind: 'service', ...(via ? { via } : {}) } };
}

/** `ctx` as a call that the service `via` makes on its principal's behalf. */
export function viaService(ctx: CallContext, via: string): CallContext {
  return ctx.principal ? { ...ctx, principal: { ...ctx.principal, via } } : ctx;
}

/** Encodes `ctx` as gRPC metadata. */
export function toMetadata(ctx: CallContext): Metadata {
  const md = new Metadata();
  md.set(MD.requestId, ctx.requestId);
  const p = ctx.principal;
  if (p) {
    md.set(MD.user, p.userId);
    md.set(MD.role, p.role);
    md.set(MD.kind, p.authKind);
    if (p.apiKeyId) md.set(MD.apiKey, p.apiKeyId);
    if (p.guestName) md.set(MD.guest, encodeURIComponent(p.guestName));
    if (p.via) md.set(MD.via, p.via);
    if (p.scope) md.set(MD.scope, p.scope);
    if (p.pools) md.set(MD.pools, JSON.stringify(p.pools));
  }
  return md;
}

const one = (md: Metadata, key: string): string | undefined => {
  const v = md.get(key)[0];
  return v === undefined ? undefined : String(v);
};

/** The guest name as sent; a value that is not valid percent-encoding is taken as is. */
function decodeGuest(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Decodes the context of an incoming call; a missing request id gets a fresh one. */
export function fromMetadata(md: Metadata): CallContext {
  const requestId = one(md, MD.requestId) ?? randomUUID();
  const kind = one(md, MD.kind) as AuthKind | undefined;
  if (!kind) return { requestId };
  const guest = one(md, MD.guest);
  const via = one(md, MD.via);
  const scope = one(md, MD.scope);
  const pools = decodePools(one(md, MD.pools));
  return {
    requestId,
    principal: {
      userId: one(md, MD.user) ?? '',
      role: (one(md, MD.role) ?? 'Viewer') as Principal['role'],
      authKind: kind,
      apiKeyId: one(md, MD.apiKey),
      guestName: guest === undefined ? undefined : decodeGuest(guest),
      ...(via === undefined ? {} : { via }),
      ...(scope === 'agent' ? { scope } : {}),
      ...(pools ? { pools } : {}),
    },
  };
}

/** The pools as sent (a JSON list of strings); anything else is no list at all. */
function decodePools(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
  } catch {
    return undefined;
  }
}
