/**
 * Credentials of the command line. They come from a prompt (a terminal, nothing echoed), a file,
 * standard input or the environment, never from a command-line argument: every user of the machine
 * can read those in the process list (`ps`, /proc/<pid>/cmdline), and the shell keeps them in its
 * history. The environment variables that carry them are listed here once, read through this list,
 * and never passed on to a command run for someone else (a farm job).
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError, EXIT } from './output.js';

/** Every environment variable the command line takes a credential from. */
export const CREDENTIAL_ENV = {
  /** An API key (`svc_...`); wins over the profile's. */
  apiKey: 'REELBASE_API_KEY',
  /** A login token; never read, but never handed on either. */
  token: 'REELBASE_TOKEN',
  /** The password `reelbase login --email` logs in with. */
  password: 'REELBASE_PASSWORD',
} as const;

export const CREDENTIAL_VARIABLES: readonly string[] = Object.values(CREDENTIAL_ENV);

/** `env` without the credential variables (and without unset entries), for a command run for someone else. */
export function withoutCredentials(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !CREDENTIAL_VARIABLES.includes(k)) out[k] = v;
  return out;
}

/** A secret kept in a file (`--password-file`, `--api-key-file`): its text without the final line break. */
export function readSecretFile(file: string, option: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`${option} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.usage);
  }
  const secret = text.replace(/\r?\n$/, '');
  if (!secret) throw new CliError(`${option} ${file}: the file is empty`, EXIT.usage);
  return secret;
}

/**
 * Asks for a secret on a terminal without echoing it; resolves to what was typed (undefined on
 * end of input), and rejects as interrupted on Ctrl-C.
 */
export function promptHidden(
  question: string,
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<string | undefined> {
  output.write(question);
  // readline echoes to its output: a sink, so nothing typed reaches the terminal.
  const silent = new Writable({ write: (_chunk, _enc, done) => done() });
  const rl = createInterface({ input, output: silent, terminal: true });
  return new Promise<string | undefined>((resolve, reject) => {
    let answered = false;
    rl.on('line', (line) => {
      answered = true;
      rl.close();
      resolve(line);
    });
    rl.on('SIGINT', () => {
      answered = true;
      rl.close();
      reject(new CliError('', EXIT.interrupted));
    });
    rl.on('close', () => {
      output.write('\n');
      if (!answered) resolve(undefined);
    });
  });
}
