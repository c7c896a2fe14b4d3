/**
 * What every part of the hostile probe shares: the context it is given (the stack, an Admin, a
 * project, the probe's own `send`, so every answer is counted and its error shape checked), and
 * the calls made through it — a JSON call with a bearer token, an expectation of the status that
 * counts a breach as a problem, the answer's JSON, and a user of a role registered and logged in.
 */

export interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

export interface ProbeContext {
  base: string;
  adminToken: string;
  projectId: string;
  /** A scratch folder for the clip. */
  dir: string;
  /** The stack's database, for checks of what was (not) stored. */
  databaseUrl: string;
  send: (label: string, path: string, init?: RequestInit) => Promise<Answer>;
  problem: (what: string) => void;
  log: (line: string) => void;
}

/** Secrets a part made, for the log scan. */
export type Secrets = Record<string, string>;

/** The answer's JSON body; undefined when it is not JSON. */
export const parseAnswer = (a: Answer): any => {
  try {
    return JSON.parse(a.body);
  } catch {
    return undefined;
  }
};

export interface ProbeCalls {
  /** A call with a JSON body (a string is sent as it is), a bearer token (null: none) and further headers. */
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
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
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
