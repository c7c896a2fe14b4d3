/**
 * `reelbase launch URI`: takes a launch request made by an action (`POST /actions/execute` answers
 * `reelbase-launcher://launch?server=<origin>&token=<token>`) and prints or runs what it says: the
 * application's executable for this platform, its arguments, and its environment merged onto
 * ours (keys ending in PATH are put in front of the inherited value, joined with the platform's
 * separator), plus REELBASE_* variables naming the context (project, entity, task).
 */
import { delimiter } from 'node:path';
import type { Schemas } from '../types.js';
import { CliError, EXIT } from './output.js';

export type LaunchPayload = Schemas['LaunchPayload'];

export interface LaunchRequest {
  /** The server named by the URI, if it names one. */
  server: string | undefined;
  token: string;
}

/** Reads a launch URI, or a bare token. */
export function parseLaunchUri(uri: string): LaunchRequest {
  if (!uri.includes('://')) {
    if (!/^[A-Za-z0-9_~.-]{16,512}$/.test(uri)) throw new CliError('not a launch URI or token', EXIT.usage);
    return { server: undefined, token: uri };
  }
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new CliError(`not a launch URI: ${uri.slice(0, 80)}`, EXIT.usage);
  }
  if (u.protocol !== 'reelbase-launcher:') throw new CliError(`not a reelbase-launcher:// URI (${u.protocol})`, EXIT.usage);
  const token = u.searchParams.get('token');
  if (!token) throw new CliError('the launch URI has no token', EXIT.usage);
  const server = u.searchParams.get('server') ?? undefined;
  if (server !== undefined && !/^https?:\/\//.test(server)) throw new CliError(`the launch URI names an unusable server: ${server}`, EXIT.usage);
  return { server, token };
}

/** The executable for `platform` (node's `process.platform`). */
export function executableFor(p: LaunchPayload, platform: NodeJS.Platform = process.platform): string | undefined {
  const key = platform === 'win32' ? 'windows' : platform === 'darwin' ? 'darwin' : 'linux';
  return p.executables?.[key];
}

/** The environment the application starts with: ours, the payload's (PATH-like keys in front), and the context. */
export function launchEnvironment(p: LaunchPayload, server: string, base: NodeJS.ProcessEnv = process.env, sep = delimiter): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(p.environment)) {
    env[k] = k.endsWith('PATH') && env[k] ? `${v}${sep}${env[k]}` : v;
  }
  const c = p.context;
  Object.assign(env, {
    REELBASE_SERVER: server,
    REELBASE_APP: p.app,
    REELBASE_APP_VARIANT: p.variant ?? '',
    REELBASE_PROJECT_ID: c.project.id,
    REELBASE_PROJECT_CODE: c.project.code ?? '',
    REELBASE_ENTITY_TYPE: c.entity.type,
    REELBASE_ENTITY_ID: c.entity.id,
    REELBASE_ENTITY_NAME: c.entity.code ?? c.entity.name ?? '',
  });
  if (c.task) Object.assign(env, { REELBASE_TASK_ID: c.task.id, REELBASE_TASK_NAME: c.task.name ?? '', REELBASE_TASK_STEP: c.task.step ?? '' });
  return env;
}

/** The launch for people: what would run, and the variables it sets. */
export function describeLaunch(p: LaunchPayload, server: string): string {
  const exe = executableFor(p) ?? '(no executable for this platform)';
  const ctx = p.context;
  const env = launchEnvironment(p, server, {});
  const width = Math.max(...Object.keys(env).map((k) => k.length));
  return [
    `${p.label} (${p.app}${p.variant ? ` ${p.variant}` : ''})`,
    `project  ${ctx.project.code ?? ctx.project.name ?? ctx.project.id}`,
    `entity   ${ctx.entity.type} ${ctx.entity.code ?? ctx.entity.name ?? ctx.entity.id}`,
    ...(ctx.task ? [`task     ${ctx.task.name ?? ctx.task.id}${ctx.task.step ? ` (${ctx.task.step})` : ''}`] : []),
    ...(p.tools.length ? [`tools    ${p.tools.map((t) => `${t.tool} ${t.version}`).join(', ')}`] : []),
    `command  ${[exe, ...p.args].join(' ')}`,
    'environment',
    ...Object.entries(env).map(([k, v]) => `  ${k.padEnd(width)}  ${v}`),
  ].join('\n');
}
