import { Metrics, Readiness, createLogger } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { AuthCache } from '../domain/auth.cache.js';
import { ProjectAccess } from '../domain/project.access.js';
import { RateLimiter } from '../domain/rate.limiter.js';
import type { Peers } from '../clients/peers.js';

const { openapi, routes } = createApp({
  logger: createLogger('gateway', 'silent'),
  metrics: new Metrics('gateway'),
  peers: {} as Peers,
  auth: new AuthCache(async () => ({}), 5),
  limiter: new RateLimiter(1, 1),
  readiness: new Readiness(),
  bodyLimitBytes: 1024,
  access: new ProjectAccess(async () => []),
});
const doc = openapi as any;

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1.0, version 0.0.1, with components and bearer security', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.0.1');
    expect(doc.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    for (const name of ['Record', 'RecordCreate', 'RecordPatch', 'Error', 'ValidationError', 'Event', 'EventList', 'Me', 'LoginBody']) {
      expect(doc.components.schemas[name], name).toBeDefined();
      expect(doc.components.schemas[name].$schema).toBeUndefined();
    }
  });

  it('documents every mounted route with its operation', () => {
    const expected = [
      'get /healthz',
      'get /readyz',
      'get /metrics',
      'get /openapi.json',
      'post /auth/login',
      'post /auth/register',
      'post /auth/api-keys',
      'get /auth/api-keys',
      'delete /auth/api-keys/{id}',
      'get /me',
      'post /auth/signing-keys/rotate',
      'post /auth/users/{id}/revoke-sessions',
      'post /auth/password',
      'put /auth/users/{id}/password',
      'post /batch',
      'post /entities/{entity_type}/summarize',
      'post /entities/{entity_type}',
      'post /entities/{entity_type}/query',
      'get /entities/{entity_type}/{id}',
      'patch /entities/{entity_type}/{id}',
      'delete /entities/{entity_type}/{id}',
      'post /entities/{entity_type}/{id}/revive',
      'get /events',
      'get /events/ws',
      'get /schema',
      'get /schema/usage',
      'post /schema/entity-types',
      'patch /schema/entity-types/{entity_code}',
      'delete /schema/entity-types/{entity_code}',
      'post /schema/entity-types/{code}/rename-code',
      'post /schema/entity-types/{entity_code}/fields',
      'patch /schema/entity-types/{entity_code}/fields/{field_code}',
      'delete /schema/entity-types/{entity_code}/fields/{field_code}',
      'post /schema/entity-types/{entity_code}/fields/{field_code}/rename-option',
      'post /schema/statuses',
      'patch /schema/statuses/{code}',
      'delete /schema/statuses/{code}',
      'post /schema/statuses/{code}/rename',
      'post /schema/steps',
      'post /schema/steps/reorder',
      'patch /schema/steps/{code}',
      'delete /schema/steps/{code}',
      'post /schema/steps/{code}/rename',
      'post /schema/workflows',
      'post /schema/workflows/delete',
      'post /schema/transitions',
      'put /schema/task-templates',
      'post /schema/priorities',
      'patch /schema/priorities/{code}',
      'delete /schema/priorities/{code}',
      'post /schema/priorities/{code}/rename',
      'get /branding',
      'put /branding',
      'get /schema/applications',
      'put /schema/applications',
      'get /schema/tools',
      'put /schema/tools',
      'get /schema/tools/active',
      'get /entities/{entity_type}/{record_id}/notes',
      'get /users/{id}/tasks',
      'get /users/{id}/timesheet',
      'post /playlists/{id}/share',
      'get /playlists/{id}/share',
      'delete /share/{token}',
      'get /shared/{token}',
      'post /shared/{token}/notes',
      'get /review/{token}',
      'get /review-assets/{file}',
      'post /versions/{id}/reviewable',
      'get /versions/{id}/reviewable',
      'get /media/{key}',
      'get /notifications',
      'post /notifications/read-all',
      'post /notifications/{id}/read',
      'post /webhooks',
      'get /webhooks',
      'get /webhooks/{id}',
      'patch /webhooks/{id}',
      'delete /webhooks/{id}',
      'get /webhooks/{id}/deliveries',
      'post /webhooks/{id}/deliveries/{delivery_id}/retry',
      'post /actions/list',
      'post /actions/execute',
      'get /actions/launch/{token}',
      'get /actions/custom',
      'put /actions/custom',
      'get /addons',
      'get /addons/{name}',
      'patch /addons/{name}',
      'get /addons/{name}/versions/{version}',
      'put /addons/{name}/versions/{version}',
      'delete /addons/{name}/versions/{version}',
      'put /addons/{name}/settings',
      'get /addons/{name}/settings',
      'put /addons/{name}/pin',
      'post /farm/jobs',
      'post /farm/claim',
      'post /farm/chunks/{id}/heartbeat',
      'post /farm/chunks/{id}/complete',
      'post /farm/chunks/{id}/fail',
      'post /farm/jobs/{id}/report',
      'post /farm/jobs/{id}/pause',
      'post /farm/jobs/{id}/resume',
      'post /farm/jobs/{id}/cancel',
      'post /farm/jobs/{id}/retry',
      'get /farm/jobs/{id}',
      'get /farm/jobs/{id}/chunks',
      'put /sitesync/sites/{code}',
      'get /sitesync/sites',
      'delete /sitesync/sites/{code}',
      'post /sitesync/requests',
      'get /sitesync/state',
      'get /sitesync/summary',
      'post /sitesync/claim',
      'post /sitesync/state/{representation_id}/{site}',
      'patch /sitesync/state/{representation_id}/{site}',
      'post /sync/import',
      'get /sync/mappings',
      'get /sync/changes',
      'post /scheduler/schedules',
      'get /scheduler/schedules',
      'get /scheduler/schedules/{id}',
      'patch /scheduler/schedules/{id}',
      'delete /scheduler/schedules/{id}',
      'post /scheduler/schedules/{id}/run',
      'get /scheduler/schedules/{id}/runs',
    ];
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m} ${p}`));
    expect(documented.sort()).toEqual(expected.sort());
    expect(routes.map((r) => `${r.method} ${r.path}`).sort()).toEqual(expected.sort());
    const ids = documented.map((d) => {
      const [m, p] = d.split(' ');
      return doc.paths[p!][m!].operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents Idempotency-Key on every POST (not replayed where the answer holds a credential), the batch item and the summaries', () => {
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const header = (op.parameters as any[]).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
        if (method !== 'post') {
          expect(header, `${method} ${path}`).toBeUndefined();
          continue;
        }
        expect(header, `${method} ${path}`).toMatchObject({ required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } });
        expect(op.responses['409'], `${method} ${path}`).toBeDefined();
        // Read-only answers, credentials, leases and streamed bodies are never stored; every other POST is a write whose answer is.
        const neverStored = [
          '/auth/login',
          '/auth/register',
          '/auth/api-keys',
          '/auth/password',
          '/versions/{id}/reviewable',
          '/entities/{entity_type}/query',
          '/entities/{entity_type}/summarize',
          '/actions/list',
          '/actions/execute',
          '/playlists/{id}/share',
          '/farm/claim',
          '/sitesync/claim',
        ].includes(path);
        if (neverStored) expect(header.description, `${method} ${path}`).toContain('not replayed');
        else expect(header.description, `${method} ${path}`).toContain('answers the first answer again');
      }
    }
    const batch = doc.paths['/batch'].post;
    expect(batch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/BatchBody' });
    expect(doc.components.schemas.BatchRequest.properties.request_type.enum).toEqual(['create', 'update', 'delete']);
    const summarize = doc.paths['/entities/{entity_type}/summarize'].post;
    expect(summarize.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/SummarizeBody' });
    expect(summarize.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Summaries' });
  });

  it('request bodies, parameters, responses and security come from the validating schemas', () => {
    const create = doc.paths['/entities/{entity_type}'].post;
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/RecordCreate' });
    const body = doc.components.schemas.RecordCreate;
    expect(body.additionalProperties).toBe(false);
    expect(body.required ?? []).not.toContain('data'); // defaulted, so optional on input
    expect(create.parameters[0]).toMatchObject({
      name: 'entity_type',
      in: 'path',
      required: true,
      schema: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]{0,63}$' },
    });
    expect(create.security).toEqual([{ bearerAuth: [] }]);
    for (const s of ['200', '401', '403', '413', '422', '429']) expect(create.responses[s], s).toBeDefined();
    expect(create.responses['422'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ValidationError' });
    expect(create.responses['200'].headers.ETag).toBeDefined();

    const events = doc.paths['/events'].get;
    const limit = events.parameters.find((p: any) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } });

    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(doc.paths['/auth/register'].post.security).toEqual([{}, { bearerAuth: [] }]);
    expect(doc.paths['/entities/{entity_type}/{id}'].delete.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/RecordRetired',
    });
    const ws = doc.paths['/events/ws'].get;
    expect(ws.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['token', 'since']));
  });

  it('documents If-Match on PATCH and DELETE, 405, 415 and 500, and the metrics and register rules', () => {
    const record = doc.paths['/entities/{entity_type}/{id}'];
    for (const method of ['patch', 'delete']) {
      const ifMatch = record[method].parameters.find((p: any) => p.name === 'If-Match');
      expect(ifMatch, method).toMatchObject({ in: 'header', required: false, schema: { type: 'string' } });
      expect(ifMatch.description).toContain('stale_write');
    }
    expect(record.get.parameters.map((p: any) => p.name)).not.toContain('If-Match');
    for (const [path, ops] of Object.entries(doc.paths) as [string, Record<string, any>][]) {
      for (const [method, op] of Object.entries(ops)) {
        for (const s of ['405', '422', '500']) expect(op.responses[s], `${method} ${path} ${s}`).toBeDefined();
      }
    }
    expect(record.get.responses['500'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(record.get.responses['405'].headers.Allow).toBeDefined();
    expect(record.patch.responses['415'].description).toContain('unsupported_media_type');
    expect(doc.paths['/auth/register'].post.responses['409'].description).toContain('duplicate_code');
    expect(doc.paths['/auth/register'].post.responses['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.paths['/auth/register'].post.responses['403']).toBeDefined();
    const metrics = doc.paths['/metrics'].get;
    expect(metrics.security).toEqual([{ bearerAuth: [] }]);
    for (const s of ['401', '403']) expect(metrics.responses[s]).toBeDefined();
  });

  it('documents the schema and catalog routes from their bodies: Admin-only mutations, reads for all, 409 codes', () => {
    const field = doc.components.schemas.FieldBody;
    expect(field.additionalProperties).toBe(false);
    expect(field.properties.type.enum).toHaveLength(14);
    expect(field.properties.code.pattern).toBe('^[a-z][a-z0-9_]{0,63}$');
    for (const name of [
      'EntityTypeBody',
      'StatusBody',
      'StepReorder',
      'PriorityBody',
      'WorkflowBody',
      'ObjectTransitionsBody',
      'TaskTemplatesBody',
      'BrandingBody',
      'ApplicationsBody',
      'ToolsBody',
    ]) {
      expect(doc.components.schemas[name]?.additionalProperties, name).toBe(false);
    }
    for (const [path, ops] of Object.entries(doc.paths) as [string, Record<string, any>][]) {
      if (!path.startsWith('/schema') && path !== '/branding') continue;
      for (const [method, op] of Object.entries(ops)) {
        expect(op.security, `${method} ${path}`).toEqual([{ bearerAuth: [] }]);
        // Every route refuses an agent key (403); the mutations refuse every role but Admin too.
        expect(op.responses['403'] !== undefined, `${method} ${path} 403`).toBe(true);
        expect(op['x-roles'], `${method} ${path} roles`).toEqual(method === 'get' ? undefined : ['Admin']);
        expect(op.tags).toEqual(['schema']);
      }
    }
    const deleteStatus = doc.paths['/schema/statuses/{code}'].delete;
    expect(deleteStatus.responses['409'].description).toContain('code_in_use');
    expect(deleteStatus.parameters.find((p: any) => p.name === 'entity_code')).toMatchObject({ in: 'query', required: false });
    expect(doc.paths['/schema/entity-types'].post.responses['409'].description).toContain('duplicate_code');
    const active = doc.paths['/schema/tools/active'].get;
    expect(active.parameters.find((p: any) => p.name === 'project_id')).toMatchObject({ in: 'query', required: true });
    expect(active.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ActiveTools' });
    expect(doc.paths['/schema/applications'].get.parameters.find((p: any) => p.name === 'project_id')).toMatchObject({ required: false });
  });

  it("documents a route's roles: a line of its description, `x-roles` and a 403", () => {
    const submit = doc.paths['/farm/jobs'].post;
    expect(submit['x-roles']).toEqual(['Admin', 'Supervisor', 'Coordinator', 'Artist']);
    expect(submit.description).toMatch(/\n\nRoles: Admin, Supervisor, Coordinator, Artist\.$/);
    expect(submit.responses['403']).toBeDefined();
    expect(doc.paths['/webhooks'].get['x-roles']).toEqual(['Admin']);
    expect(doc.paths['/webhooks'].get.description).toBe('Roles: Admin.');
    expect(doc.paths['/playlists/{id}/share'].post['x-roles']).toEqual(['Admin', 'Supervisor', 'Coordinator']);
    // Routes any authenticated caller may call, or whose rule depends on the input, list no roles.
    expect(doc.paths['/events'].get['x-roles']).toBeUndefined();
    expect(doc.paths['/entities/{entity_type}'].post['x-roles']).toBeUndefined();
    expect(doc.paths['/entities/{entity_type}'].post.responses['403']).toBeDefined();
  });

  it('marks the agent routes (`x-agent-key` and a line of the description); every authenticated route documents a 403', () => {
    const agentRoutes = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.entries(ops as Record<string, any>).map(([method, op]) => [`${method} ${path}`, op] as const))
      .filter(([, op]) => op['x-agent-key'] === true)
      .map(([name]) => name)
      .sort();
    expect(agentRoutes).toEqual(
      [
        'post /farm/claim',
        'post /farm/chunks/{id}/heartbeat',
        'post /farm/chunks/{id}/complete',
        'post /farm/chunks/{id}/fail',
        'get /farm/jobs/{id}',
        'post /sitesync/claim',
        'post /sitesync/state/{representation_id}/{site}',
      ].sort(),
    );
    expect(doc.paths['/farm/claim'].post.description).toContain('An agent API key (`"scope": "agent"`) may call this route');
    expect(doc.paths['/farm/claim'].post.description).toMatch(/\n\nRoles: Admin, Supervisor, Coordinator, Artist\.$/);
    expect(doc.paths['/entities/{entity_type}/{id}'].get.description ?? '').not.toContain('An agent API key');
    for (const [path, ops] of Object.entries(doc.paths) as [string, Record<string, any>][]) {
      for (const [method, op] of Object.entries(ops)) {
        if (op.security.length > 0) expect(op.responses['403'], `${method} ${path}`).toBeDefined();
      }
    }
  });

  it('every $ref resolves', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = ref.split('/').pop()!.replace('"', '');
      expect(doc.components.schemas[name], ref).toBeDefined();
    }
  });
});
