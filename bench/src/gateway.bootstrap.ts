/**
 * What the gateway phases need on a fresh stack: the first user (Admin), an API key for
 * that user, and a Project the Shots belong to.
 */

/** Identities and ids the load scripts use. */
export interface GatewayFixture {
  userId: string;
  apiKey: string;
  projectId: string;
}

async function post<T>(baseUrl: string, path: string, body: unknown, token?: string): Promise<T> {
  const res = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** Registers the first user, creates an API key and a Project through the gateway. */
export async function bootstrapGateway(baseUrl: string): Promise<GatewayFixture> {
  const suffix = Date.now().toString(36);
  const reg = await post<{ user: { id: string }; access_token: string }>(baseUrl, '/auth/register', {
    email: `bench-${suffix}@example.com`,
    password: `bench-password-${suffix}`,
    name: 'Bench',
  });
  const key = await post<{ token: string }>(baseUrl, '/auth/api-keys', { name: 'bench' }, reg.access_token);
  const project = await post<{ id: string }>(baseUrl, '/entities/Project', { data: { name: 'Bench', code: `bench_${suffix}` } }, key.token);
  return { userId: reg.user.id, apiKey: key.token, projectId: project.id };
}
