/**
 * The set-up the pipeline-call specs share: a whole stack whose gateway holds few live
 * Idempotency-Keys per principal, its first Admin and a project, and a lookup of the project's
 * shots by code.
 */
import { afterAll, beforeAll } from 'vitest';
import { expectStatus, type Api } from './api.client.js';
import { bootstrapAdmin, startE2EStack, type E2EStack, type Session } from './e2e.stack.js';

/** Live Idempotency-Keys a principal may hold in this stack (lowered from 10,000 so the limit is reached here). */
export const MAX_KEYS = 40;

export interface PipelineStack {
  e: E2EStack;
  admin: Session;
  projectId: string;
}

/** Starts the stack with the first Admin and a project; a stack whose set-up fails is torn down. */
export async function startPipelineStack(name: string): Promise<PipelineStack> {
  const e = await startE2EStack(name, { gateway: { IDEMPOTENCY_MAX_KEYS: String(MAX_KEYS) } });
  try {
    const admin = await bootstrapAdmin(e.api);
    const projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Pipeline', code: 'pipe' } }), 200, 'project').id as string;
    return { e, admin, projectId };
  } catch (err) {
    await e.teardown();
    throw err;
  }
}

/**
 * The hooks of a spec (in its describe): the stack started before its tests, handed to `started`,
 * and torn down after them.
 */
export function usePipelineStack(name: string, started: (stack: PipelineStack) => void): void {
  let stack: PipelineStack | undefined;
  beforeAll(async () => {
    stack = await startPipelineStack(name);
    started(stack);
  });
  afterAll(async () => {
    await stack?.e.teardown();
  });
}

/** Shots of the project with `code`, live. */
export async function shotsWithCode(api: Api, projectId: string, code: string): Promise<any[]> {
  const page = expectStatus(
    await api.post('/entities/Shot/query', {
      filters: [
        ['project_id', 'is', projectId],
        ['code', 'is', code],
      ],
    }),
    200,
    'query shots',
  );
  return page.items;
}
