/**
 * What every command of the `reelbase` command is given: where it writes and reads (`Io`), what a
 * signal should stop (`CliState`), and the helpers bound to the program (the global options, a
 * client of the configured server, printing for people or for scripts).
 */
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { Command } from 'commander';
import type { Reelbase } from '../reelbase.client.js';
import { promptHidden } from './credentials.js';
import type { FarmAgent } from './farm.agent.js';

export interface Globals {
  url?: string;
  profile?: string;
  json?: boolean;
}

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  stderr: { isTTY?: boolean; columns?: number; write(text: string): unknown };
  env: NodeJS.ProcessEnv;
  readStdin: () => string;
  /** Asks for a secret without echoing it; absent when there is no terminal to ask on. */
  promptSecret?: (question: string) => Promise<string | undefined>;
}

export const defaultIo = (): Io => ({
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  stderr: process.stderr,
  env: process.env,
  readStdin: () => readFileSync(0, 'utf8'),
  promptSecret: process.stdin.isTTY && process.stderr.isTTY ? (q) => promptHidden(q) : undefined,
});

/** What a signal should stop: a farm agent, an events follower, or nothing while a launched program runs. */
export interface CliState {
  agent?: FarmAgent;
  child?: ChildProcess;
  stopFollow?: () => void;
}

/** Farm agents stopped by a second signal: their command ends as interrupted. */
const aborted = new WeakSet<FarmAgent>();
export const abortAgent = (a: FarmAgent) => void aborted.add(a);
export const agentAborted = (a: FarmAgent) => aborted.has(a);

/** The program's helpers, bound once in buildProgram and handed to each group of commands. */
export interface CommandContext {
  io: Io;
  state: CliState;
  globals: (cmd: Command) => Globals;
  client: (cmd: Command) => Reelbase;
  print: (cmd: Command, json: unknown, text: () => string) => void;
}
