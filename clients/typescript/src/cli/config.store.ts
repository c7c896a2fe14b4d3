/**
 * Profiles of the command line: a server address and an API key each, kept in the user's config
 * folder (`$XDG_CONFIG_HOME/reelbase/config.json`, else `~/.config/reelbase/config.json`; on
 * Windows `%APPDATA%\reelbase\config.json`), readable by the user only (mode 0600). The
 * environment wins: `REELBASE_URL` and `REELBASE_API_KEY` over the profile, `--url` over both.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CREDENTIAL_ENV } from './credentials.js';
import { CliError, EXIT } from './output.js';

export interface Profile {
  url: string;
  api_key?: string;
  /** Who the key belongs to (shown by `reelbase login --status`). */
  user?: string;
}

export interface ConfigFile {
  default_profile?: string;
  profiles: Record<string, Profile>;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REELBASE_CONFIG) return env.REELBASE_CONFIG;
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'reelbase', 'config.json');
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'reelbase', 'config.json');
}

export function readConfig(file = configPath()): ConfigFile {
  if (!existsSync(file)) return { profiles: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as ConfigFile;
    return { ...parsed, profiles: parsed.profiles ?? {} };
  } catch (err) {
    throw new CliError(`${file} is not a valid configuration file: ${(err as Error).message}`, EXIT.usage);
  }
}

/** Writes the file for the user only (0600, folder 0700), atomically. */
export function writeConfig(config: ConfigFile, file = configPath()): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

export interface Resolved {
  url: string;
  apiKey: string | undefined;
  profile: string;
}

/** The profile in use and the server: `--url`, then REELBASE_URL, then the profile's (undefined when none is set). */
function choose(opts: { url?: string; profile?: string }, env: NodeJS.ProcessEnv, file: string): { name: string; profile?: Profile; url?: string } {
  const config = readConfig(file);
  const name = opts.profile ?? env.REELBASE_PROFILE ?? config.default_profile ?? 'default';
  const profile = config.profiles[name];
  if (opts.profile && !profile && !env.REELBASE_URL && !opts.url)
    throw new CliError(`no profile ${name} in ${file} (reelbase login --profile ${name})`, EXIT.usage);
  return { name, profile, url: opts.url ?? env.REELBASE_URL ?? profile?.url };
}

/** The server the command line is configured for (`--url`, REELBASE_URL, the profile), or undefined. */
export function configuredUrl(opts: { url?: string; profile?: string }, env: NodeJS.ProcessEnv = process.env, file = configPath(env)): string | undefined {
  return choose(opts, env, file).url;
}

/** The server and key to use: `--url`, then the environment, then the profile. */
export function resolveTarget(opts: { url?: string; profile?: string }, env: NodeJS.ProcessEnv = process.env, file = configPath(env)): Resolved {
  const { name, profile, url } = choose(opts, env, file);
  if (!url) throw new CliError(`no server: run \`reelbase login --url URL ...\`, or set REELBASE_URL`, EXIT.usage);
  // A profile's key goes only to the profile's own server.
  const profileKey = profile && sameOrigin(profile.url, url) ? profile.api_key : undefined;
  return { url, apiKey: env[CREDENTIAL_ENV.apiKey] || profileKey, profile: name };
}

export function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
