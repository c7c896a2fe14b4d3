/**
 * The hostile probe of the `reelbase` command (clients/typescript/README.md, "The command line"), run
 * as a user runs it (the package's bin, a config folder of its own):
 * - a launch link naming another server than the configured one, and any link while no server is
 *   configured, are refused before a request leaves (a decoy server counts what reaches it);
 * - a password or an API key given as an argument is refused, and never reaches the stack;
 * - a farm job whose command prints its environment runs under an agent holding an API key, a
 *   password and a token in its environment: the chunk's output (readable by any role) holds none.
 * What the command sends goes to the stack's logs like any request; its secrets join the log scan.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from '@reelbase/lib-testkit';
import { probeCalls, type ProbeContext, type Secrets } from './hostile.calls.js';

const BIN = join(REPO_ROOT, 'clients', 'typescript', 'bin', 'reelbase.mjs');

interface Run {
  code: number | null;
  out: string;
}

export async function probeClient(ctx: ProbeContext): Promise<Secrets> {
  const { call, expect } = probeCalls(ctx);
  const admin = ctx.adminToken;
  const key: string =
    expect(await call('api key for the command line', 'POST', '/auth/api-keys', admin, { name: 'hostile-cli' }), [200], 'an API key')?.token ?? '';
  const home = join(ctx.dir, 'cli-home');
  const reelbase = (args: string[], env: NodeJS.ProcessEnv): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out }));
    });
  const exits = (r: Run, want: number, what: string) => {
    if (r.code !== want) ctx.problem(`reelbase ${what}: exit ${r.code}, expected ${want} (${r.out.trim().slice(0, 160)})`);
  };

  ctx.log('client: launch links naming another server, with and without a configured one');
  let decoyRequests = 0;
  const decoy = createServer((_req, res) => {
    decoyRequests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  await new Promise<void>((r) => decoy.listen(0, '127.0.0.1', r));
  try {
    const decoyUrl = `http://127.0.0.1:${(decoy.address() as AddressInfo).port}`;
    const link = `reelbase-launcher://launch?server=${encodeURIComponent(decoyUrl)}&token=${'T'.repeat(43)}`;
    exits(await reelbase(['launch', link, '--run'], { REELBASE_URL: ctx.base, REELBASE_API_KEY: key }), 4, 'launch of a link naming another server');
    exits(await reelbase(['launch', link, '--run'], { REELBASE_API_KEY: key }), 2, 'launch while no server is configured');
    if (decoyRequests) ctx.problem(`a launch link's server received ${decoyRequests} request(s) from the command line`);
  } finally {
    decoy.closeAllConnections();
    await new Promise((r) => decoy.close(r));
  }

  ctx.log('client: credentials as arguments');
  const argvPassword = `argv-password-${Date.now()}`;
  exits(await reelbase(['login', '--url', ctx.base, '--email', 'admin@hostile.test', '--password', argvPassword], {}), 2, 'login --password');
  exits(await reelbase(['login', '--url', ctx.base, '--api-key', key], {}), 2, 'login --api-key');

  ctx.log('client: a farm command printing its environment under an agent holding credentials');
  const job = expect(
    await call('farm job printing its environment', 'POST', '/farm/jobs', admin, {
      project_id: ctx.projectId,
      name: 'env',
      kind: 'render',
      pool: 'hostile-env',
      frames: '1-1',
    }),
    [200],
    'a farm job',
  );
  const agentPassword = `agent-password-${Date.now()}`;
  const held = { REELBASE_API_KEY: key, REELBASE_PASSWORD: agentPassword, REELBASE_TOKEN: admin };
  const agent = await reelbase(['farm', 'agent', '--pool', 'hostile-env', '--exec', 'env', '--exit-when-idle'], { REELBASE_URL: ctx.base, ...held });
  exits(agent, 0, 'farm agent');
  const chunks = expect(await call('farm chunks', 'GET', `/farm/jobs/${job?.id}/chunks`, admin), [200], 'the chunks of the job');
  const output = JSON.stringify(chunks?.items?.[0]?.output ?? null);
  if (!output.includes('REELBASE_FARM_CHUNK_ID')) ctx.problem(`the farm command's output was not kept: ${output.slice(0, 160)}`);
  for (const [name, value] of Object.entries(held)) {
    if (output.includes(value) || agent.out.includes(value)) ctx.problem(`the farm command saw the agent's ${name}`);
  }
  return { cli_api_key: key, cli_argv_password: argvPassword, agent_password: agentPassword };
}
