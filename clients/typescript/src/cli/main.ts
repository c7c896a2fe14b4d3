/**
 * The `reelbase` command: every command prints a table or text for people and JSON with `--json`
 * (one document, or one JSON object per line for streams), and ends with an exit code a script
 * can test (output.ts, EXIT).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Command, CommanderError, Option } from 'commander';
import { Reelbase } from '../reelbase.client.js';
import type { BatchRequest, Filters, Grouping, SummaryField, SummaryGroup } from '../client.options.js';
import { configPath, readConfig, resolveTarget, writeConfig } from './config.store.js';
import { CREDENTIAL_ENV, readSecretFile } from './credentials.js';
import { CliError, EXIT, EXIT_HELP, describe, errorJson, errorText, exitCodeOf, flatRecord, table } from './output.js';
import { ProgressBar } from './progress.bar.js';
import { addRunCommands } from './run.commands.js';
import { argumentRefused, assignments, buildFilters, buildOrder, collect, intArg, jsonOrText, parseJsonOption } from './args.js';
import { abortAgent, defaultIo, type CliState, type Globals, type Io } from './cli.context.js';

export { assignments, buildFilters, buildOrder, jsonOrText } from './args.js';
export type { Io } from './cli.context.js';

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

  addRunCommands(program, { io, state, globals, client, print });

  return program;
}

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
        abortAgent(state.agent);
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
