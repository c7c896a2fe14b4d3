/**
 * Compile-time checks of the client's generated types, run by the tests' type-check (`npm run
 * lint`: tsc -p tsconfig.tests.json). Each `@ts-expect-error` line must fail to compile: were the
 * types loose (`any`), the directive itself would be the error and the check would fail.
 */
import type { Reelbase } from '../src/index.js';

export async function checks(rb: Reelbase): Promise<void> {
  // Right bodies compile.
  await rb.call('post', '/farm/claim', { body: { pool: 'default', worker: 'w1' } });
  await rb.call('post', '/entities/{entity_type}/query', { params: { entity_type: 'Shot' }, body: { filters: [], limit: 10 } });
  const rec = await rb.call('get', '/entities/{entity_type}/{id}', { params: { entity_type: 'Shot', id: 'x' } });
  const code: string = rec.entity_type;
  void code;

  // @ts-expect-error pool must be a string
  await rb.call('post', '/farm/claim', { body: { pool: 3, worker: 'w1' } });
  // @ts-expect-error worker is required
  await rb.call('post', '/farm/claim', { body: { pool: 'default' } });
  // @ts-expect-error no such key in a claim (unknown keys are refused by the server too)
  await rb.call('post', '/farm/claim', { body: { pool: 'default', worker: 'w1', priority: 1 } });
  // @ts-expect-error limit is a number
  await rb.call('post', '/entities/{entity_type}/query', { params: { entity_type: 'Shot' }, body: { filters: [], limit: '10' } });
  // @ts-expect-error the path parameters are required
  await rb.call('get', '/entities/{entity_type}/{id}');
  // @ts-expect-error no such route
  await rb.call('get', '/no/such/route');
  // @ts-expect-error GET /schema takes no body, and /schema has no DELETE
  await rb.call('delete', '/schema');
  // @ts-expect-error a record id is a string
  await rb.create('Shot', { code: 'SH010' }, { project_id: 42 });
  // @ts-expect-error a batch request is a create, an update or a delete
  await rb.batch([{ request_type: 'upsert', entity_type: 'Shot' }]);
  // @ts-expect-error summaries are of known types
  await rb.summarize('Task', [], [{ field: 'estimate_minutes', type: 'total' }]);
  // @ts-expect-error the answer is typed: a Record has no `nonsense`
  void rec.nonsense;
  // @ts-expect-error an event's id is a number
  for await (const ev of rb.events()) void (ev.id satisfies string);
}
