/**
 * Routes that declare their roles (`allow`, domain/role.rule.ts): every route the OpenAPI document
 * lists with `x-roles` refuses every other role with 403 before its input is looked at, and lets
 * its roles through to validation.
 */
import { AppError, ROLES, type Role } from '@reelbase/lib-platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';
import type { AuthedPrincipal } from '../domain/authed.principal.js';
import { assertAllowed, refusalOf, type RoleRule } from '../domain/role.rule.js';
import { ADMIN, MANAGERS, NOT_VIEWER } from '../routes/route.roles.js';

const TOKEN: Record<Role, string> = {
  Admin: 'admin-token',
  Supervisor: 'supervisor-token',
  Coordinator: 'coordinator-token',
  Artist: 'artist-token',
  Viewer: 'viewer-token',
};

const person = (role: Role): AuthedPrincipal => ({ userId: '0190a0b0-0000-7000-8000-000000000001', role, authKind: 'token', email: 'x@example.com' });

describe('a role rule', () => {
  it('words its refusal by the one role left out, or by the roles let in', () => {
    expect(refusalOf({ roles: NOT_VIEWER, to: 'submit farm jobs' })).toBe('a Viewer may not submit farm jobs');
    expect(refusalOf({ roles: ADMIN, to: 'manage webhooks' })).toBe('only an Admin may manage webhooks');
    expect(refusalOf({ roles: MANAGERS, to: 'manage share links' })).toBe('only an Admin, Supervisor or Coordinator may manage share links');
    expect(refusalOf({ roles: ['Supervisor', 'Admin'], to: 'pin' })).toBe('only an Admin or Supervisor may pin');
  });

  it('lets exactly its roles through and refuses the others with 403 forbidden', () => {
    const rules: RoleRule[] = [
      { roles: ADMIN, to: 'a' },
      { roles: MANAGERS, to: 'b' },
      { roles: NOT_VIEWER, to: 'c' },
    ];
    for (const rule of rules) {
      for (const role of ROLES) {
        if (rule.roles.includes(role)) expect(() => assertAllowed(person(role), rule)).not.toThrow();
        else {
          const err = (() => {
            try {
              assertAllowed(person(role), rule);
            } catch (e) {
              return e;
            }
            return undefined;
          })();
          expect(err, `${role} ${rule.to}`).toBeInstanceOf(AppError);
          expect((err as AppError).kind).toBe('forbidden');
          expect((err as AppError).message).toBe(refusalOf(rule));
        }
      }
    }
  });
});

describe('routes with roles, as the gateway serves them', () => {
  let gw: TestGateway;
  const call = httpClient(() => gw.url);
  beforeAll(async () => {
    gw = await startTestGateway({ RATE_LIMIT_RPS: '10000', RATE_LIMIT_BURST: '10000' });
  });
  afterAll(async () => {
    await gw.stop();
  });

  it('refuse every role but theirs with 403 before validation, and let theirs reach validation', async () => {
    const doc = (await call('GET', '/openapi.json')).json as { paths: Record<string, Record<string, { 'x-roles'?: Role[]; description?: string }>> };
    const checked: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const roles = op['x-roles'];
        if (!roles) continue;
        checked.push(`${method} ${path}`);
        expect(op.description, `${method} ${path}`).toContain(`Roles: ${roles.join(', ')}.`);
        // A path value, query and body no route accepts: a role let through meets a 422 (or the handler), never a 403.
        const concrete = `${path.replace(/\{[^}]+\}/g, 'x')}?unknown_probe=1`;
        const body = method === 'get' ? undefined : { unknown_probe: 1 };
        for (const role of ROLES) {
          const r = await call(method.toUpperCase(), concrete, { token: TOKEN[role], body });
          const what = `${role} ${method} ${path}`;
          if (roles.includes(role)) expect(r.status, what).not.toBe(403);
          else {
            expect(r.status, what).toBe(403);
            expect(r.json.code, what).toBe('forbidden');
            expect(r.json.detail, what).toMatch(/^(a|an) [A-Z][a-z]+ may not |^only an? /);
          }
        }
      }
    }
    // Farm, site sync, sync imports, share links, webhooks, Admin's auth routes and metrics.
    expect(checked.length).toBeGreaterThanOrEqual(30);
    expect(checked).toEqual(
      expect.arrayContaining(['post /farm/jobs', 'put /sitesync/sites/{code}', 'post /webhooks', 'post /playlists/{id}/share', 'get /metrics']),
    );
  });
});
