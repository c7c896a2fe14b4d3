/**
 * The commands that run processes: a farm agent (`farm agent`) and a launch request (`launch`),
 * both of which a signal may have to stop (cli.context.ts, CliState).
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { Reelbase } from '../reelbase.client.js';
import { intArg } from './args.js';
import type { CommandContext } from './cli.context.js';
import { agentAborted } from './cli.context.js';
import { configPath, configuredUrl, resolveTarget, sameOrigin } from './config.store.js';
import { CREDENTIAL_VARIABLES } from './credentials.js';
import { FarmAgent } from './farm.agent.js';
import { describeLaunch, executableFor, launchEnvironment, parseLaunchUri, type LaunchPayload } from './launch.js';
import { CliError, EXIT } from './output.js';

export function addRunCommands(program: Command, { io, state, globals, client, print }: CommandContext): void {
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
}
