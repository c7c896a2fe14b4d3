/**
 * The Python client (clients/python) against the whole stack: its own unittest suite, run with
 * the system's python3, an Admin's API key and login in its environment, and a control address
 * where the suite asks for the gateway to be killed and restarted (the event follower's test).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ensureFfmpeg, REPO_ROOT } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './support/api.client.js';
import { bootstrapAdmin, startE2EStack, type E2EStack } from './support/e2e.stack.js';

const PYTHON = process.env.PYTHON ?? 'python3';
const python = spawnSync(PYTHON, ['--version'], { encoding: 'utf8' });
const hasPython = python.status === 0;
if (!hasPython) process.stdout.write(`[python-client] skipped: ${PYTHON} was not found; the Python client tests need Python 3.9 or newer\n`);

const EMAIL = 'admin@studio.test';
const PASSWORD = 'correct horse battery';

/** Runs the suite; resolves with its exit code and everything it printed. */
function runSuite(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-m', 'unittest', 'discover', '-s', join('clients', 'python', 'tests'), '-v'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!hasPython)('Python client (whole stack)', () => {
  let e: E2EStack;
  let control: Server;
  let controlUrl: string;
  let apiKey: string;

  beforeAll(async () => {
    ensureFfmpeg(); // the 200 MB upload is transcoded by the media worker
    e = await startE2EStack('python-client');
    const admin = await bootstrapAdmin(e.api, EMAIL, PASSWORD);
    apiKey = expectStatus(await admin.api.post('/auth/api-keys', { name: 'python client tests' }), 200, 'issue key').token;
    // Where the suite asks for the gateway to go down hard and come back (same port).
    control = createServer((req, res) => {
      if (req.method !== 'POST' || req.url !== '/restart-gateway') {
        res.writeHead(404).end();
        return;
      }
      req.resume();
      void (async () => {
        try {
          await e.stack.kill('gateway', 'SIGKILL');
          await e.stack.restart('gateway');
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ restarted: 'gateway' }));
        } catch (err) {
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) }));
        }
      })();
    });
    await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
    controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => (control ? control.close(resolve) : resolve(undefined)));
    await e?.teardown();
  });

  it(`passes its unittest suite (${python.stdout.trim() || python.stderr.trim()})`, { timeout: 300_000 }, async () => {
    const { code, output } = await runSuite({
      REELBASE_URL: e.stack.url,
      REELBASE_API_KEY: apiKey,
      REELBASE_EMAIL: EMAIL,
      REELBASE_PASSWORD: PASSWORD,
      REELBASE_CONTROL_URL: controlUrl,
    });
    process.stdout.write(`[python-client] ${code === 0 ? 'the suite passed' : `the suite failed (exit ${code})`}:\n${output}\n`);
    expect(code, output).toBe(0);
    // Every test ran: none skipped for want of the stack or the control address.
    expect(output).not.toMatch(/skipped/);
    expect(output).toMatch(/\nOK\n?/);
  });
});
