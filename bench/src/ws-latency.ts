/**
 * Write → WebSocket latency: creates sent at a fixed rate (open loop: each create leaves
 * at its scheduled time whether or not earlier ones have been answered, so a slow server
 * cannot slow the generator down and hide its own latency), each matched by entity id to
 * its event on one WebSocket.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { summarize, type LatencySummary } from './stats.js';

/** Settings of a latency run. */
export interface WsLatencyOptions {
  /** Gateway base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  token: string;
  projectId: string;
  entityType: string;
  rate: number;
  seconds: number;
  /** Keep-alive HTTP connections shared by the creates. */
  connections: number;
  /** How long to wait for the last events after the last answer. */
  graceMs: number;
  /** How long the first probe event may take (it waits behind any backlog of earlier phases). */
  probeTimeoutMs: number;
}

/** Outcome of a latency run. Times in milliseconds. */
export interface WsLatencyResult {
  rate: number;
  seconds: number;
  sent: number;
  answered: number;
  failed: number;
  failures: string[];
  eventsMatched: number;
  eventsMissing: number;
  /** Event arrival minus the moment the create was sent. */
  sendToEventMs: LatencySummary;
  /** Event arrival minus the moment the create's answer arrived (negative: event first). */
  answerToEventMs: LatencySummary;
  httpMs: LatencySummary;
  /** Largest delay between a create's scheduled time and its sending (generator health). */
  maxSendLagMs: number;
  probeWaitMs: number;
  /** Probes sent before one's event arrived (more than one: the first went unseen). */
  probesSent: number;
  /** Set when the server closed the socket during the run. */
  socketClosed: string | null;
}

/** A probe whose event has not arrived after this long, with no other message either, is sent again. */
const PROBE_RETRY_MS = 2000;

interface Create {
  sentAt: number;
  answeredAt?: number;
  id?: string;
}

/** Opens the event socket and resolves once it is open; rejects when it closes first. */
function openSocket(url: string, onEvent: (entityId: string, at: number) => void, onClose: (why: string) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('message', (raw) => {
      const at = performance.now();
      try {
        const ev = JSON.parse(raw.toString()) as { entity_id?: unknown };
        if (typeof ev.entity_id === 'string') onEvent(ev.entity_id, at);
      } catch {
        // not an event
      }
    });
    ws.once('open', () => resolve(ws));
    ws.on('error', (err) => {
      onClose(`event socket error: ${err.message}`);
      reject(err);
    });
    ws.once('close', (code, reason) => {
      const why = `event socket closed: ${code} ${reason.toString()}`;
      onClose(why);
      reject(new Error(why));
    });
  });
}

/** POSTs one create and resolves with the new record's id (rejects on a non-2xx answer). */
function postCreate(agent: http.Agent, opts: WsLatencyOptions, code: string): Promise<string> {
  const body = JSON.stringify({ project_id: opts.projectId, data: { code } });
  const url = new URL(`/entities/${opts.entityType}`, opts.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${opts.token}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) return reject(new Error(`HTTP ${status}: ${text.slice(0, 200)}`));
          try {
            resolve((JSON.parse(text) as { id: string }).id);
          } catch (err) {
            reject(err as Error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  return new Promise((resolve) => {
    const poll = (): void => {
      if (check()) resolve(true);
      else if (performance.now() > until) resolve(false);
      else setTimeout(poll, 5);
    };
    poll();
  });
}

/** Runs the latency measurement; throws only when the socket or the probe create fails. */
export async function measureWsLatency(opts: WsLatencyOptions): Promise<WsLatencyResult> {
  const events = new Map<string, number>();
  const wsUrl = `${opts.baseUrl.replace(/^http/, 'ws')}/events/ws?token=${encodeURIComponent(opts.token)}`;
  let closed: string | null = null;
  let received = 0;
  const ws = await openSocket(
    wsUrl,
    (id, at) => {
      received++;
      if (!events.has(id)) events.set(id, at);
    },
    (why) => (closed = why),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const tag = `ws_${Date.now().toString(36)}`;
  try {
    // Events arrive in log order, so a probe's event also means every earlier event (a
    // backlog left by the throughput phases) has been delivered. The server registers the
    // socket a little after the handshake, and a create committed before that is not sent:
    // whenever nothing at all arrives for PROBE_RETRY_MS, another probe goes out.
    const probeStart = performance.now();
    const probes: string[] = [];
    let seen = received;
    let lastActivity = -Infinity;
    const probeArrived = (): boolean => probes.some((id) => events.has(id));
    await waitFor(() => {
      if (probeArrived() || closed !== null) return true;
      const now = performance.now();
      if (received !== seen) {
        seen = received;
        lastActivity = now;
      }
      if (now - lastActivity > PROBE_RETRY_MS) {
        lastActivity = now;
        postCreate(agent, opts, `${tag}_probe${probes.length}`).then(
          (id) => probes.push(id),
          () => {},
        );
      }
      return false;
    }, opts.probeTimeoutMs);
    if (!probeArrived()) {
      const why = closed ?? `not within ${opts.probeTimeoutMs} ms`;
      throw new Error(`no probe create's event arrived on the socket (${why}; ${probes.length} probes, ${received} messages received)`);
    }
    const probeWaitMs = performance.now() - probeStart;

    const total = Math.round(opts.rate * opts.seconds);
    const creates: Create[] = [];
    const failures: string[] = [];
    const pending: Promise<void>[] = [];
    let maxSendLagMs = 0;
    const start = performance.now() + 10;
    const fire = (i: number): void => {
      const sentAt = performance.now();
      maxSendLagMs = Math.max(maxSendLagMs, sentAt - (start + (i * 1000) / opts.rate));
      const c: Create = { sentAt };
      creates.push(c);
      pending.push(
        postCreate(agent, opts, `${tag}_${i}`).then(
          (id) => {
            c.answeredAt = performance.now();
            c.id = id;
          },
          (err: Error) => {
            c.answeredAt = performance.now();
            // A few examples are enough to see what went wrong; the count is in `failed`.
            if (failures.length < 5) failures.push(err.message);
          },
        ),
      );
    };
    await new Promise<void>((resolve) => {
      let i = 0;
      const tick = (): void => {
        const now = performance.now();
        while (i < total && start + (i * 1000) / opts.rate <= now) fire(i++);
        if (i >= total) return resolve();
        setTimeout(tick, Math.max(0, start + (i * 1000) / opts.rate - performance.now()));
      };
      setTimeout(tick, 10);
    });
    await Promise.all(pending);
    const ok = creates.filter((c) => c.id !== undefined);
    if (process.env.BENCH_WS_DUMP) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(
        process.env.BENCH_WS_DUMP,
        creates
          .map(
            (c) =>
              `${(c.sentAt - start).toFixed(1)} ${c.answeredAt ? (c.answeredAt - c.sentAt).toFixed(2) : -1} ${c.id && events.get(c.id) ? (events.get(c.id)! - c.sentAt).toFixed(2) : -1}`,
          )
          .join('\n'),
      );
    }
    await waitFor(() => ok.every((c) => events.has(c.id!)), opts.graceMs);

    const matched = ok.filter((c) => events.has(c.id!));
    return {
      rate: opts.rate,
      seconds: opts.seconds,
      sent: creates.length,
      answered: ok.length,
      failed: creates.length - ok.length,
      failures,
      eventsMatched: matched.length,
      eventsMissing: ok.length - matched.length,
      sendToEventMs: summarize(matched.map((c) => events.get(c.id!)! - c.sentAt)),
      answerToEventMs: summarize(matched.map((c) => events.get(c.id!)! - c.answeredAt!)),
      httpMs: summarize(ok.map((c) => c.answeredAt! - c.sentAt)),
      maxSendLagMs,
      probeWaitMs,
      probesSent: probes.length,
      socketClosed: closed,
    };
  } finally {
    agent.destroy();
    closed = 'closed by the bench';
    ws.close();
  }
}
