import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { runService, type LifecycleConfig, type RunningService } from './run.service.js';
import type { ServiceProcess } from './shutdown.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('svc', 'info', stream) };
}

/** A process whose signals are emitted by the test and whose exit is recorded. */
class FakeProcess extends EventEmitter implements ServiceProcess {
  readonly exits: number[] = [];
  exit(code: number): void {
    this.exits.push(code);
  }
}

const config: LifecycleConfig = { LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: 200 };
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

function running(stop: () => Promise<void> = async () => {}): RunningService {
  return { grpcPort: 50052, httpPort: 9102, stop };
}

describe('runService', () => {
  it('logs "<name> started" with the ports and installs nothing that exits', async () => {
    const { lines, logger } = capture();
    const proc = new FakeProcess();
    const svc = await runService({ name: 'records', loadConfig: () => config, start: async () => running() }, { process: proc, logger });
    expect(svc?.grpcPort).toBe(50052);
    expect(lines.find((l) => l.msg === 'records started')).toMatchObject({ level: 'info', grpcPort: 50052, httpPort: 9102 });
    expect(proc.exits).toEqual([]);
  });

  it('passes the loaded configuration and the logger to start', async () => {
    const { logger } = capture();
    const seen: unknown[] = [];
    await runService(
      {
        name: 'auth',
        loadConfig: () => config,
        start: async (c, l) => {
          seen.push(c, l);
          return running();
        },
      },
      { process: new FakeProcess(), logger },
    );
    expect(seen).toEqual([config, logger]);
  });

  it('on a failed start logs fatal with the error and exits 1', async () => {
    const { lines, logger } = capture();
    const proc = new FakeProcess();
    const result = await runService(
      {
        name: 'gateway',
        loadConfig: () => config,
        start: async () => {
          throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        },
      },
      { process: proc, logger },
    );
    expect(result).toBeUndefined();
    expect(proc.exits).toEqual([1]);
    const fatal = lines.find((l) => l.level === 'fatal');
    expect(fatal).toMatchObject({ msg: 'gateway failed to start' });
    expect((fatal?.err as { message: string }).message).toBe('connect ECONNREFUSED 127.0.0.1:1');
    expect(lines.some((l) => l.msg === 'gateway started')).toBe(false);
    // No signal handler: a failed start has nothing to stop.
    expect(proc.listenerCount('SIGTERM')).toBe(0);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal} stops once, logs "<name> stopped" and exits 0`, async () => {
      const { lines, logger } = capture();
      const proc = new FakeProcess();
      let stops = 0;
      await runService(
        {
          name: 'events',
          loadConfig: () => config,
          start: async () =>
            running(async () => {
              stops++;
              await tick(20);
            }),
        },
        { process: proc, logger },
      );
      proc.emit(signal, signal);
      // A second signal while stopping (Ctrl-C to the whole group) does not cut the stop short.
      proc.emit('SIGTERM', 'SIGTERM');
      await tick(60);
      expect(stops).toBe(1);
      expect(proc.exits).toEqual([0]);
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down', 'already shutting down', 'events stopped']));
    });
  }

  it('exits 1 when the stop outlasts SHUTDOWN_TIMEOUT_MS', async () => {
    const { lines, logger } = capture();
    const proc = new FakeProcess();
    await runService(
      { name: 'auth', loadConfig: () => ({ ...config, SHUTDOWN_TIMEOUT_MS: 50 }), start: async () => running(() => new Promise(() => {})) },
      { process: proc, logger },
    );
    proc.emit('SIGTERM', 'SIGTERM');
    await tick(150);
    expect(proc.exits).toEqual([1]);
    expect(lines.some((l) => l.msg === 'graceful shutdown timed out; exiting')).toBe(true);
  });

  it('exits 1 when the stop rejects', async () => {
    const { lines, logger } = capture();
    const proc = new FakeProcess();
    await runService(
      { name: 'auth', loadConfig: () => config, start: async () => running(() => Promise.reject(new Error('pool stuck'))) },
      { process: proc, logger },
    );
    proc.emit('SIGINT', 'SIGINT');
    await tick(20);
    expect(proc.exits).toEqual([1]);
    expect(lines.find((l) => l.msg === 'auth did not stop cleanly')).toMatchObject({ level: 'error' });
  });

  it('a crash after start is one fatal line and exit 1', async () => {
    const { lines, logger } = capture();
    const proc = new FakeProcess();
    await runService({ name: 'records', loadConfig: () => config, start: async () => running() }, { process: proc, logger });
    proc.emit('unhandledRejection', new Error('lost'));
    expect(proc.exits).toEqual([1]);
    expect(lines.find((l) => l.level === 'fatal')).toMatchObject({ msg: 'records crashed: unhandled rejection' });
  });
});
