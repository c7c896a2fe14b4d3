/**
 * Where a request's time goes, from the services' own `/metrics`: the sum and count of each
 * latency histogram series, read before and after a measured loop, give the mean of every series
 * that moved (the gateway's HTTP routes and gRPC calls, a service's gRPC handlers).
 */

/** Sum and count of one histogram series. */
export interface SeriesTotals {
  sum: number;
  count: number;
}

/** The latency histograms every service exports (lib-platform metrics). */
export const LATENCY_HISTOGRAMS = ['http_request_duration_seconds', 'grpc_client_handling_seconds', 'grpc_server_handling_seconds'];

/** Sum and count of every series of the histograms `names` on `http://127.0.0.1:<port>/metrics`, keyed `name{labels}`. */
export async function histogramTotals(port: number, names: string[] = LATENCY_HISTOGRAMS): Promise<Map<string, SeriesTotals>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const out = new Map<string, SeriesTotals>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)_(sum|count)(\{[^}]*\})? ([0-9.eE+-]+)$/.exec(line);
    if (!m || !names.includes(m[1]!)) continue;
    const key = `${m[1]}${m[3] ?? ''}`;
    const entry = out.get(key) ?? { sum: 0, count: 0 };
    entry[m[2] as 'sum' | 'count'] = Number(m[4]);
    out.set(key, entry);
  }
  return out;
}

/** One line per series that moved between two readings: its mean in ms and how many it counted. */
export function meansBetween(before: Map<string, SeriesTotals>, after: Map<string, SeriesTotals>): string[] {
  const lines: string[] = [];
  for (const [key, a] of after) {
    const b = before.get(key) ?? { sum: 0, count: 0 };
    const n = a.count - b.count;
    if (n > 0) lines.push(`${key}: ${(((a.sum - b.sum) / n) * 1000).toFixed(2)} ms mean over ${n}`);
  }
  return lines;
}

/** Garbage collections of each kind on `http://127.0.0.1:<port>/metrics` so far, and how many of them paused over 10 ms. */
export async function gcPauses(port: number): Promise<Map<string, { count: number; over10ms: number }>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const out = new Map<string, { count: number; over10ms: number }>();
  const entry = (kind: string) => out.get(kind) ?? out.set(kind, { count: 0, over10ms: 0 }).get(kind)!;
  for (const line of text.split('\n')) {
    const m = /^nodejs_gc_duration_seconds_(count|bucket)\{([^}]*)\} ([0-9.eE+-]+)$/.exec(line);
    const kind = m && /kind="([a-z]+)"/.exec(m[2]!)?.[1];
    if (!m || !kind) continue;
    if (m[1] === 'count') entry(kind).count = Number(m[3]);
    else if (/le="0.01"/.test(m[2]!)) entry(kind).over10ms = -Number(m[3]);
  }
  for (const v of out.values()) v.over10ms += v.count;
  return out;
}
