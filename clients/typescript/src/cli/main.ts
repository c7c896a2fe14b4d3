/**
 * The `reelbase` command: every command prints a table or text for people and JSON with `--json`
 * (one document, or one JSON object per line for streams), and ends with an exit code a script
 * can test (output.ts, EXIT).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Command, CommanderError, Option } from 'commander';
import { Reelbase } from '../reelbase.client.js';
import type { BatchRequest, Filters, Grouping, SummaryField, SummaryGroup } from '../reelbase.client.js';
import { configPath, configuredUrl, readConfig, resolveTarget, sameOrigin, writeConfig } from './config.store.js';
import { CREDENTIAL_ENV, CREDENTIAL_VARIABLES, promptHidden, readSecretFile } from './credentials.js';
import { FarmAgent } from './farm.agent.js';
import { describeLaunch, executableFor, launchEnvironment, parseLaunchUri, type LaunchPayload } from './launch.js';
import { CliError, EXIT, EXIT_HELP, describe, errorJson, errorText, exitCodeOf, flatRecord, table } from './output.js';
import { ProgressBar } from './progress.bar.js';

interface Globals {
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

const defaultIo = (): Io => ({
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  stderr: process.stderr,
  env: process.env,
  readStdin: () => readFileSync(0, 'utf8'),
  promptSecret: process.stdin.isTTY && process.stderr.isTTY ? (q) => promptHidden(q) : undefined,
});

/** The refusal of a credential given as a command-line argument, naming the safe ways to give it. */
function argumentRefused(option: string, what: string, safe: string): CliError {
  return new CliError(
    `${option} is refused: a ${what} on the command line is visible to every user of this machine (ps) and kept in the shell's history; ` +
      `give it with ${safe}${what === 'password' ? ' (change it if others share this machine)' : ' (revoke it if others share this machine)'}`,
    EXIT.usage,
  );
}

/** `value` as JSON when it parses, else the text itself (so `code=SH010` and `cut_in=1001` both work). */
export function jsonOrText(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** `key=value` arguments into an object (values JSON when they parse). */
export function assignments(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new CliError(`expected key=value, got ${JSON.stringify(p)}`, EXIT.usage);
    out[p.slice(0, i)] = jsonOrText(p.slice(i + 1));
  }
  return out;
}

function parseJsonOption(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${what} is not JSON: ${(err as Error).message}`, EXIT.usage);
  }
}

/** Filters from `--filters JSON` and each `--where 'path op value'` / `--where path=value`. */
export function buildFilters(filtersJson: string | undefined, where: string[]): Filters {
  const items: unknown[] = [];
  if (filtersJson) {
    const f = parseJsonOption(filtersJson, '--filters');
    if (Array.isArray(f)) items.push(...(f as unknown[]));
    else items.push(f);
  }
  for (const w of where) {
    const m = /^\s*(\S+)\s+(\S+)\s+(.*)$/.exec(w);
    if (m && !w.slice(0, w.indexOf(' ')).includes('=')) items.push([m[1], m[2], jsonOrText(m[3]!)]);
    else {
      const i = w.indexOf('=');
      if (i <= 0) throw new CliError(`--where takes 'path=value' or 'path operator value', got ${JSON.stringify(w)}`, EXIT.usage);
      items.push([w.slice(0, i).trim(), 'is', jsonOrText(w.slice(i + 1).trim())]);
    }
  }
  return items as Filters;
}

/** `code,-created_at` into an order list. */
export function buildOrder(order: string | undefined): { field: string; direction: 'asc' | 'desc' }[] | undefined {
  if (!order) return undefined;
  return order
    .split(',')
    .filter(Boolean)
    .map((f) => (f.startsWith('-') ? { field: f.slice(1), direction: 'desc' as const } : { field: f, direction: 'asc' as const }));
}

const collect = (v: string, prev: string[]) => [...prev, v];
const intArg = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} takes a whole number, got ${JSON.stringify(v)}`, EXIT.usage);
  return n;
};

export function buildProgram(io: Io, state: CliState): Command {
  const program = new Command('reelbase');
  const globals = (cmd: Command) => cmd.optsWithGlobals<Globals>();
  const client = (cmd: Command) => {
    const g = globals(cmd);
    const t = resolveTarget({ url: g.url, profile: g.profile }, io.env, configPath(io.env));
    return new Reelbase({ url: t.url, apiKey: t.apiKey });
  };
  const print = (cmd: Command, json: unknown, text: () => string) => {
    if (globals(cmd).json) io.out(`${JSON.stringify(json, null, 2)}\n`);
    else io.out(`${text()}\n`);
  };

  program
    .description('reelbase from the command line: records, uploads, events, imports, farm agents and launches.')
    .option('--url <url>', 'the server (default: REELBASE_URL, else the profile)')
    .option('--profile <name>', 'the profile to use (default: REELBASE_PROFILE, else the default profile)')
    .option('--json', 'print JSON for scripts instead of tables')
    .showHelpAfterError()
    .addHelpText(
      'after',
      `\nCredentials: \`reelbase login\` keeps profiles in ${configPath(io.env)} (mode 0600);\nREELBASE_URL and ${CREDENTIAL_ENV.apiKey} win over the profile. ` +
        `A password or key is never an argument (the process list shows\narguments): login reads it from a file, standard input, the environment or a prompt.\n\n${EXIT_HELP}`,
    );
  program.configureOutput({ writeOut: (t) => io.out(t), writeErr: (t) => io.err(t) });

  program
    .command('login')
    .description(
      'Save a server and an API key in a profile. With --email, logs in (the password from --password-file, --password-stdin, ' +
        `${CREDENTIAL_ENV.password} or a prompt) and makes an API key for this machine; without it, saves an API key (from --api-key-file, ` +
        `${CREDENTIAL_ENV.apiKey} or a prompt). Credentials are never taken as arguments: the process list would show them.`,
    )
    .option('--email <email>', 'log in as this user')
    .option('--password-file <file>', `read the password from this file (else --password-stdin, ${CREDENTIAL_ENV.password}, or a prompt)`)
    .option('--password-stdin', 'read the password from standard input')
    .option('--api-key-file <file>', `without --email: read the API key to save from this file (else ${CREDENTIAL_ENV.apiKey}, or a prompt)`)
    .addOption(new Option('--password <password>').hideHelp())
    .addOption(new Option('--api-key <key>').hideHelp())
    .option('--key-name <name>', 'the name of the API key made for this machine', `reelbase-cli@${hostname()}`)
    .option('--default', 'make this profile the default')
    .action(
      async (
        o: {
          email?: string;
          password?: string;
          passwordFile?: string;
          passwordStdin?: boolean;
          apiKey?: string;
          apiKeyFile?: string;
          keyName: string;
          default?: boolean;
        },
        cmd: Command,
      ) => {
        if (o.password !== undefined)
          throw argumentRefused('--password', 'password', `--password-file FILE, --password-stdin, ${CREDENTIAL_ENV.password} or the prompt`);
        if (o.apiKey !== undefined) throw argumentRefused('--api-key', 'API key', `--api-key-file FILE, ${CREDENTIAL_ENV.apiKey} or the prompt`);
        const g = globals(cmd);
        const file = configPath(io.env);
        const config = readConfig(file);
        const name = g.profile ?? io.env.REELBASE_PROFILE ?? config.default_profile ?? 'default';
        const url = g.url ?? io.env.REELBASE_URL ?? config.profiles[name]?.url;
        if (!url) throw new CliError('login needs --url (or REELBASE_URL)', EXIT.usage);
        let apiKey: string | undefined;
        if (o.email) {
          const password = o.passwordFile
            ? readSecretFile(o.passwordFile, '--password-file')
            : o.passwordStdin
              ? io.readStdin().replace(/\r?\n$/, '')
              : (io.env[CREDENTIAL_ENV.password] ?? (await io.promptSecret?.(`password for ${o.email} at ${url}: `)));
          if (!password)
            throw new CliError(
              `no password: give --password-file FILE, --password-stdin or ${CREDENTIAL_ENV.password}, or run on a terminal to be asked`,
              EXIT.usage,
            );
          const session = new Reelbase({ url, email: o.email, password });
          const key = await session.call('post', '/auth/api-keys', { body: { name: o.keyName } });
          apiKey = key.token;
        } else {
          apiKey = o.apiKeyFile
            ? readSecretFile(o.apiKeyFile, '--api-key-file').trim()
            : (io.env[CREDENTIAL_ENV.apiKey] ?? (await io.promptSecret?.(`API key for ${url}: `)))?.trim();
          if (!apiKey)
            throw new CliError(
              `login needs --email (and a password), or an API key: --api-key-file FILE or ${CREDENTIAL_ENV.apiKey}, or run on a terminal to be asked`,
              EXIT.usage,
            );
        }
        const me = await new Reelbase({ url, apiKey }).me();
        const user = String((me as { data?: { email?: unknown } }).data?.email ?? me.id);
        config.profiles[name] = { url, api_key: apiKey, user };
        if (o.default || !config.default_profile) config.default_profile = name;
        writeConfig(config, file);
        print(
          cmd,
          { profile: name, url, user, role: me.role, config: file },
          () => `logged in to ${url} as ${user} (${me.role}); profile ${name} saved in ${file}`,
        );
      },
    );

  program
    .command('find')
    .description('Find records of a type: a table of the matching records (all pages up to --limit).')
    .argument('<type>', 'entity type, e.g. Shot')
    .option('-w, --where <condition>', "a condition 'path=value' or 'path operator value' (repeatable)", collect, [])
    .option('--filters <json>', 'the whole filter as JSON, e.g. \'[["code","starts_with","SH"]]\'')
    .option('--fields <list>', 'fields to return, comma separated (default: every field)')
    .option('--order <list>', 'sort fields, comma separated, - for descending (e.g. code,-created_at)')
    .option('--limit <n>', 'at most this many records (0: all)', intArg('--limit'), 100)
    .action(async (type: string, o: { where: string[]; filters?: string; fields?: string; order?: string; limit: number }, cmd: Command) => {
      const rb = client(cmd);
      const fields = o.fields?.split(',').filter(Boolean);
      const records = await rb.find(type, buildFilters(o.filters, o.where), { fields, order: buildOrder(o.order), limit: o.limit || null });
      print(cmd, { items: records }, () => {
        const rows = records.map(flatRecord);
        const cols = ['id', ...(fields ?? ['code', 'name'].filter((c) => rows.some((r) => r[c] !== undefined))), 'status'];
        return records.length ? `${table(rows, cols)}\n(${records.length} ${type} record${records.length === 1 ? '' : 's'})` : `no ${type} records match`;
      });
    });

  program
    .command('get')
    .description('Show one record.')
    .argument('<type>', 'entity type')
    .argument('<id>', 'record id')
    .action(async (type: string, id: string, _o: unknown, cmd: Command) => {
      const r = await client(cmd).get(type, id);
      print(cmd, r, () => describe(r));
    });

  const writeColumns = (c: Command) =>
    c
      .option('--data <json>', 'data fields as a JSON object (key=value arguments are merged over it)')
      .option('--project <id>', 'project_id')
      .option('--status <code>', 'status code');
  const dataOf = (o: { data?: string }, pairs: string[]) => ({
    ...(o.data ? (parseJsonOption(o.data, '--data') as Record<string, unknown>) : {}),
    ...assignments(pairs),
  });

  writeColumns(
    program
      .command('create')
      .description('Create a record (sent with an Idempotency-Key: a retry never makes a second one).')
      .argument('<type>', 'entity type')
      .argument('[fields...]', 'data fields as key=value (values parsed as JSON when they are)'),
  )
    .option('--idempotency-key <key>', 'your own key, to repeat this very command safely')
    .option('-q, --quiet', 'print only the new id')
    .action(
      async (
        type: string,
        pairs: string[],
        o: { data?: string; project?: string; status?: string; idempotencyKey?: string; quiet?: boolean },
        cmd: Command,
      ) => {
        const r = await client(cmd).create(type, dataOf(o, pairs), { project_id: o.project, status: o.status, idempotencyKey: o.idempotencyKey });
        print(cmd, r, () => (o.quiet ? r.id : `created ${type} ${r.id}`));
      },
    );

  writeColumns(
    program
      .command('update')
      .description('Update a record: data fields merged key by key (key=null removes one).')
      .argument('<type>', 'entity type')
      .argument('<id>', 'record id')
      .argument('[fields...]', 'data fields as key=value'),
  )
    .option('--if-match <updated_at>', 'only if the record is unchanged since this updated_at')
    .action(async (type: string, id: string, pairs: string[], o: { data?: string; project?: string; status?: string; ifMatch?: string }, cmd: Command) => {
      const r = await client(cmd).update(type, id, dataOf(o, pairs), {
        ...(o.project ? { project_id: o.project } : {}),
        ...(o.status ? { status: o.status } : {}),
        ifMatch: o.ifMatch,
      });
      print(cmd, r, () => `updated ${type} ${r.id}`);
    });

  program
    .command('delete')
    .description('Retire a record (`reelbase revive` brings it back).')
    .argument('<type>', 'entity type')
    .argument('<id>', 'record id')
    .action(async (type: string, id: string, _o: unknown, cmd: Command) => {
      const r = await client(cmd).delete(type, id);
      print(cmd, r, () => `retired ${type} ${id}`);
    });

  program
    .command('revive')
    .description('Bring a retired record back.')
    .argument('<type>', 'entity type')
    .argument('<id>', 'record id')
    .action(async (type: string, id: string, _o: unknown, cmd: Command) => {
      const r = await client(cmd).revive(type, id);
      print(cmd, r, () => `revived ${type} ${id}`);
    });

  program
    .command('batch')
    .description('Several creates, updates and deletes in one transaction, all or nothing (a JSON file of requests, - for stdin).')
    .argument('<file>', 'JSON: [{"request_type","entity_type","entity_id"?,"project_id"?,"status"?,"data"?}, ...]')
    .action(async (file: string, _o: unknown, cmd: Command) => {
      const text = file === '-' ? io.readStdin() : readFileSync(file, 'utf8');
      const parsed = parseJsonOption(text, file) as BatchRequest[] | { requests: BatchRequest[] };
      const results = await client(cmd).batch(Array.isArray(parsed) ? parsed : parsed.requests);
      print(cmd, { results }, () => results.map((r, i) => `${i}: ${r === true ? 'deleted' : `${r.entity_type} ${r.id}`}`).join('\n'));
    });

  program
    .command('summarize')
    .description('Totals over matching records, optionally grouped (up to three levels).')
    .argument('<type>', 'entity type')
    .requiredOption('-s, --summary <field:type>', 'a summary, e.g. estimate_minutes:sum, id:record_count, status:percentage=fin (repeatable)', collect, [])
    .option('-g, --group <field:type[:desc]>', 'a grouping level, e.g. step:exact, due_date:month (repeatable)', collect, [])
    .option('-w, --where <condition>', "a condition 'path=value' or 'path operator value' (repeatable)", collect, [])
    .option('--filters <json>', 'the whole filter as JSON')
    .action(async (type: string, o: { summary: string[]; group: string[]; where: string[]; filters?: string }, cmd: Command) => {
      const summaries: SummaryField[] = o.summary.map((s) => {
        const m = /^([^:]+):([a-z_]+)(?:=(.*))?$/.exec(s);
        if (!m) throw new CliError(`--summary takes field:type, got ${JSON.stringify(s)}`, EXIT.usage);
        return { field: m[1]!, type: m[2] as SummaryField['type'], ...(m[3] !== undefined ? { value: jsonOrText(m[3]) } : {}) };
      });
      const grouping: Grouping[] = o.group.map((g) => {
        const [field, type = 'exact', direction] = g.split(':');
        return { field: field!, type: type as Grouping['type'], ...(direction ? { direction: direction as 'asc' | 'desc' } : {}) };
      });
      const res = await client(cmd).summarize(type, buildFilters(o.filters, o.where), summaries, grouping.length ? { grouping } : {});
      print(cmd, res, () => {
        const lines = [`total  ${JSON.stringify(res.summaries)}`];
        const walk = (groups: SummaryGroup[] | undefined, depth: number) => {
          for (const gr of groups ?? []) {
            lines.push(
              `${'  '.repeat(depth)}${gr.group_name ?? (gr.group_value === null ? '(none)' : JSON.stringify(gr.group_value))}  ${JSON.stringify(gr.summaries)}`,
            );
            walk(gr.groups, depth + 1);
          }
        };
        walk(res.groups, 0);
        return lines.join('\n');
      });
    });

  const waitFor = async (rb: Reelbase, version: string, timeoutS: number, cmd: Command) => {
    const st = await rb.waitReviewable(version, { timeoutMs: timeoutS * 1000 });
    print(cmd, st, () => `reviewable of Version ${version}: ${st.status}${st.transcode_error ? ` (${st.transcode_error})` : ''}`);
    if (st.status === 'failed') throw new CliError('', EXIT.failed);
  };

  program
    .command('upload')
    .description('Upload a reviewable (a movie or image) for a Version, streamed from disk with progress on standard error.')
    .argument('<version>', 'Version id')
    .argument('<file>', 'the file')
    .option('--wait', 'then wait until its thumbnail and proxy are done (exit 7 when transcoding failed)')
    .option('--timeout <seconds>', 'with --wait: wait at most this long', intArg('--timeout'), 600)
    .option('--content-type <type>', 'video/... or image/... (default: from the extension)')
    .option('--no-progress', 'print no progress')
    .action(async (version: string, file: string, o: { wait?: boolean; timeout: number; contentType?: string; progress: boolean }, cmd: Command) => {
      const rb = client(cmd);
      const bar = o.progress ? new ProgressBar(io.stderr, 'upload') : undefined;
      const res = await rb.uploadReviewable(version, file, {
        contentType: o.contentType,
        progress: bar ? (sent, total) => bar.update(sent, total) : undefined,
      });
      bar?.done();
      if (!o.wait) {
        print(cmd, res, () => `uploaded ${file}: Representation ${res.representation.id}, ${res.status}`);
        return;
      }
      if (!globals(cmd).json) io.out(`uploaded ${file}: Representation ${res.representation.id}; waiting for the transcode\n`);
      await waitFor(rb, version, o.timeout, cmd);
    });

  program
    .command('wait')
    .description("Wait until a Version's reviewable is done or failed (exit 7 when it failed).")
    .argument('<version>', 'Version id')
    .option('--timeout <seconds>', 'wait at most this long (exit 6 after it)', intArg('--timeout'), 600)
    .action(async (version: string, o: { timeout: number }, cmd: Command) => {
      await waitFor(client(cmd), version, o.timeout, cmd);
    });

  program
    .command('events')
    .description('Print events in id order (one JSON object per line with --json); --follow keeps waiting for new ones.')
    .option('--after <id>', 'events after this id (default: the whole log; with --follow: from now)', intArg('--after'))
    .option('--type <entity_type>', 'only events of this entity type')
    .option('--project <id>', 'only events of this project')
    .option('-f, --follow', 'keep following: gapless, resumes by itself after the server restarts')
    .option('--limit <n>', 'stop after this many events', intArg('--limit'))
    .action(async (o: { after?: number; type?: string; project?: string; follow?: boolean; limit?: number }, cmd: Command) => {
      const rb = client(cmd);
      const json = globals(cmd).json;
      const stop = new AbortController();
      state.stopFollow = () => stop.abort();
      let n = 0;
      {
        for await (const ev of rb.events({
          after: o.after,
          entityType: o.type,
          projectId: o.project,
          follow: o.follow,
          signal: stop.signal,
          onError: (err) => io.err(`events: ${(err as Error).message}; resuming after event ${n ? 'the last one shown' : (o.after ?? 'now')}\n`),
        })) {
          io.out(
            json ? `${JSON.stringify(ev)}\n` : `${ev.id}\t${ev.created_at}\t${ev.action}\t${ev.entity_type}\t${ev.entity_id}\t${JSON.stringify(ev.changes)}\n`,
          );
          if (o.limit !== undefined && ++n >= o.limit) break;
        }
      }
    });

  program
    .command('import')
    .description('Import records from another tracker (POST /sync/import): upserted by external id, in batches of 1000, each all or nothing.')
    .argument('<file>', 'JSON: {"source","items":[...]} or an array of items (then --source); - for stdin')
    .option('--source <name>', 'the source tracker, e.g. shotgrid')
    .option('--dry-run', 'check everything and report, write nothing')
    .action(async (file: string, o: { source?: string; dryRun?: boolean }, cmd: Command) => {
      const text = file === '-' ? io.readStdin() : readFileSync(file, 'utf8');
      const parsed = parseJsonOption(text, file) as unknown[] | { source?: string; items: unknown[]; dry_run?: boolean };
      const items = Array.isArray(parsed) ? parsed : parsed.items;
      const source = o.source ?? (Array.isArray(parsed) ? undefined : parsed.source);
      if (!source) throw new CliError('the import needs a source: --source NAME, or "source" in the file', EXIT.usage);
      if (!Array.isArray(items) || items.length === 0) throw new CliError('the file holds no items', EXIT.usage);
      const rb = client(cmd);
      const total = { created: 0, updated: 0, unchanged: 0, items: [] as unknown[] };
      for (let i = 0; i < items.length; i += 1000) {
        const res = await rb.call('post', '/sync/import', {
          body: { source, items: items.slice(i, i + 1000) as never, dry_run: o.dryRun ?? false },
        });
        total.created += res.created;
        total.updated += res.updated;
        total.unchanged += res.unchanged;
        total.items.push(...res.items);
      }
      print(cmd, total, () => `${o.dryRun ? 'dry run: would have ' : ''}created ${total.created}, updated ${total.updated}, unchanged ${total.unchanged}`);
    });

  const farm = program.command('farm').description('Farm commands.');
  farm
    .command('agent')
    .description(
      'Run a farm agent: claim chunks of a pool, run the command per chunk with {frames} (also {first}, {last}, {job_id}, {chunk_id}, {index}) substituted, ' +
        "heartbeat while it runs, complete the chunk on exit status 0, else fail it with the status and the output's tail. " +
        `The command runs without the agent's credentials (${CREDENTIAL_VARIABLES.join(', ')} are left out of its environment). ` +
        'Ctrl-C once: finish the running chunk, then stop; twice: stop the command and fail its chunk.',
    )
    .requiredOption('--pool <pool>', 'the pool to take chunks from')
    .requiredOption('--exec <command>', "the command per chunk, run by the shell, e.g. 'render -f {frames}'")
    .option('--worker <name>', 'this agent’s name (default host:pid)')
    .option('--kinds <list>', 'only jobs of these kinds, comma separated')
    .option('--lease-seconds <n>', 'lease of a claim (10..3600)', intArg('--lease-seconds'), 300)
    .option('--poll-seconds <n>', 'wait between claims when nothing is due', intArg('--poll-seconds'), 5)
    .option('--exit-when-idle', 'stop when nothing is due instead of waiting')
    .option('--max-chunks <n>', 'stop after this many chunks', intArg('--max-chunks'))
    .action(
      async (
        o: {
          pool: string;
          exec: string;
          worker?: string;
          kinds?: string;
          leaseSeconds: number;
          pollSeconds: number;
          exitWhenIdle?: boolean;
          maxChunks?: number;
        },
        cmd: Command,
      ) => {
        const json = globals(cmd).json;
        const agent = new FarmAgent(client(cmd), {
          pool: o.pool,
          exec: o.exec,
          worker: o.worker,
          kinds: o.kinds?.split(',').filter(Boolean),
          leaseSeconds: o.leaseSeconds,
          pollMs: o.pollSeconds * 1000,
          exitWhenIdle: o.exitWhenIdle,
          maxChunks: o.maxChunks,
          log: (line) => io.err(`[farm] ${line}\n`),
          output: (b) => io.err(b.toString('utf8')),
          env: io.env,
        });
        state.agent = agent;
        const outcomes = await agent.run();
        if (json) for (const oc of outcomes) io.out(`${JSON.stringify(oc)}\n`);
        else io.out(`${outcomes.filter((x) => x.result === 'done').length} chunk(s) done, ${outcomes.filter((x) => x.result !== 'done').length} not\n`);
        if (state.agent === agent && agentAborted(agent)) throw new CliError('', EXIT.interrupted);
      },
    );

  program
    .command('launch')
    .description(
      'Take a launch request (the reelbase-launcher:// URI an action gives) from the configured server and print it, or run it with --run. ' +
        'A link naming another server is refused, and so is any link while no server is configured: the key goes to the configured server only.',
    )
    .argument('<uri>', 'reelbase-launcher://launch?server=...&token=... (or the bare token)')
    .option('--run', 'start the application with its arguments and environment (exit status: the application’s; 7 when it fails to start)')
    .action(async (uri: string, o: { run?: boolean }, cmd: Command) => {
      const req = parseLaunchUri(uri);
      const g = globals(cmd);
      // The server is the configured one (--url, REELBASE_URL or the profile), never one a link names:
      // a link naming another server is refused before anything is sent, the key included.
      const configured = configuredUrl({ url: g.url, profile: g.profile }, io.env, configPath(io.env));
      if (!configured) {
        throw new CliError(
          `no server is configured${req.server ? `, and the launch link's server (${req.server}) is not trusted on its own word` : ''}: ` +
            `run \`reelbase login --url ${req.server ?? 'URL'}\` (or set REELBASE_URL, or give --url) for the server you use`,
          EXIT.usage,
        );
      }
      if (req.server && !sameOrigin(req.server, configured)) {
        throw new CliError(
          `the launch names ${req.server}, but the configured server is ${configured}: refused (use the matching --profile or --url)`,
          EXIT.auth,
        );
      }
      const t = resolveTarget({ url: g.url, profile: g.profile }, io.env, configPath(io.env));
      const rb = new Reelbase({ url: t.url, apiKey: t.apiKey });
      const payload: LaunchPayload = await rb.call('get', '/actions/launch/{token}', { params: { token: req.token } });
      const exe = executableFor(payload);
      const env = launchEnvironment(payload, t.url, io.env);
      if (!o.run) {
        print(cmd, { ...payload, executable: exe ?? null, command: exe ? [exe, ...payload.args] : null, launch_environment: env }, () =>
          describeLaunch(payload, t.url),
        );
        return;
      }
      if (!exe) throw new CliError(`${payload.label} has no executable for ${process.platform}`, EXIT.failed);
      if (!g.json) io.err(`starting ${[exe, ...payload.args].join(' ')}\n`);
      const code = await new Promise<number>((resolve) => {
        const child = spawn(exe, payload.args, { env, stdio: 'inherit' });
        state.child = child;
        child.on('error', (err) => {
          io.err(`could not start ${exe}: ${err.message}\n`);
          resolve(EXIT.failed);
        });
        child.on('close', (c, s) => resolve(c ?? (s ? 128 + 2 : 1)));
      });
      if (code !== 0) throw new CliError('', code);
    });

  return program;
}

/** What a signal should stop: a farm agent, an events follower, or nothing while a launched program runs. */
interface CliState {
  agent?: FarmAgent;
  child?: import('node:child_process').ChildProcess;
  stopFollow?: () => void;
}

const aborted = new WeakSet<FarmAgent>();
const agentAborted = (a: FarmAgent) => aborted.has(a);

/** Runs the command line; resolves to the exit code. */
export async function main(argv: string[], io: Io = defaultIo()): Promise<number> {
  const state: CliState = {};
  const program = buildProgram(io, state);
  program.exitOverride();
  for (const c of program.commands) {
    c.exitOverride();
    for (const s of c.commands) s.exitOverride();
  }
  let interrupts = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts++;
    if (state.agent) {
      if (sig === 'SIGINT' && interrupts === 1) {
        io.err('[farm] stopping: the running chunk finishes first (Ctrl-C again to stop it now)\n');
        state.agent.stop();
      } else {
        aborted.add(state.agent);
        state.agent.abort();
      }
      return;
    }
    if (state.stopFollow) return state.stopFollow();
    if (state.child) return; // the launched application gets the signal itself and decides
    process.exit(EXIT.interrupted);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    const code = exitCodeOf(err);
    const silent = err instanceof CliError && err.message === '';
    if (!silent) {
      const json = program.opts<Globals>().json ?? argv.includes('--json');
      io.err(json ? `${JSON.stringify(errorJson(err))}\n` : `${errorText(err)}\n`);
    }
    return code;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
