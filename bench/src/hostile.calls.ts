/**
 * What a hostile probe part needs to talk to the stack through the probe's own `send` (so every
 * answer is counted and its error shape checked): a JSON call with a bearer token, an expectation
 * of the status that counts a breach as a problem, and the answer's JSON.
 */
import type { Answer, ProbeContext } from './hostile.rules.js';

/** The answer's JSON body; undefined when it is not JSON. */
export const parseAnswer = (a: Answer): any => {
  try {
    return JSON.parse(a.body);
  } catch {
    return undefined;
  }
};

export interface ProbeCalls {
  call(label: string, method: string, path: string, token: string | null, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** The answer's JSON; a status outside `want` is a problem. */
  expect(a: Answer, want: number[], what: string): any;
  /** Registers a user with `role` (as `adminToken`) and logs them in. */
  user(adminToken: string, role: string, email: string): Promise<{ id: string; token: string }>;
}

export function probeCalls(ctx: Pick<ProbeContext, 'send' | 'problem'>): ProbeCalls {
  const call: ProbeCalls['call'] = (label, method, path, token, body, headers = {}) =>
    ctx.send(label, path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const expect: ProbeCalls['expect'] = (a, want, what) => {
    if (!want.includes(a.status)) ctx.problem(`${what}: answered ${a.status}, expected ${want.join(' or ')} (${a.body.slice(0, 120)})`);
    return parseAnswer(a);
  };
  const user: ProbeCalls['user'] = async (adminToken, role, email) => {
    const made = expect(
      await call(`register ${role}`, 'POST', '/auth/register', adminToken, { email, password: 'password-123', name: role, role }),
      [200],
      `register ${role}`,
    );
    const login = expect(await call(`login ${role}`, 'POST', '/auth/login', null, { email, password: 'password-123' }), [200], `login ${role}`);
    return { id: String(made?.user?.id ?? ''), token: String(login?.access_token ?? '') };
  };
  return { call, expect, user };
}
