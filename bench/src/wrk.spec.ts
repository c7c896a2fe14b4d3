import { describe, expect, it } from 'vitest';
import { parseWrk, parseWrkTime, wrkErrors, wrkScript } from './wrk.js';

const CLEAN = `Running 1s test @ http://127.0.0.1:34493/entities/Shot
  1 threads and 2 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.08ms    2.59ms  30.66ms   93.38%
    Req/Sec     1.22k   357.16     1.65k    70.00%
  Latency Distribution
     50%    1.24ms
     75%    2.13ms
     90%    3.78ms
     99%   14.31ms
  1215 requests in 1.00s, 617.10KB read
Requests/sec:   1212.04
Transfer/sec:    615.60KB
`;

const WITH_ERRORS = `Running 10s test @ http://127.0.0.1:8080/entities/Shot
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   812.00us  523.76us    2.10s    95.49%
    Req/Sec    51.46k    10.97k   63.94k    80.95%
  Latency Distribution
     50%   60.00us
     75%  102.00us
     90%  136.00us
     99%    1.50s
  107218 requests in 10.10s, 40.08MB read
  Socket errors: connect 0, read 3, write 1, timeout 12
  Non-2xx or 3xx responses: 4021
Requests/sec:  10615.66
Transfer/sec:     19.09MB
`;

describe('parseWrkTime', () => {
  it('converts every unit wrk prints into milliseconds', () => {
    expect(parseWrkTime('812.00us')).toBeCloseTo(0.812);
    expect(parseWrkTime('1.24ms')).toBe(1.24);
    expect(parseWrkTime('2.10s')).toBe(2100);
    expect(parseWrkTime('1.50m')).toBe(90_000);
    expect(parseWrkTime('12')).toBeNull();
  });
});

describe('parseWrk', () => {
  it('reads throughput, totals and the latency distribution of a clean run', () => {
    const r = parseWrk(CLEAN);
    expect(r.requestsPerSec).toBe(1212.04);
    expect(r.requests).toBe(1215);
    expect(r.durationSec).toBe(1);
    expect(r.latencyAvgMs).toBe(2.08);
    expect(r.latencyMs).toEqual({ p50: 1.24, p75: 2.13, p90: 3.78, p99: 14.31 });
    expect(r.non2xx).toBe(0);
    expect(wrkErrors(r)).toBe(0);
  });

  it('counts error responses and socket errors instead of hiding them', () => {
    const r = parseWrk(WITH_ERRORS);
    expect(r.requestsPerSec).toBe(10615.66);
    expect(r.non2xx).toBe(4021);
    expect(r.socketErrors).toEqual({ connect: 0, read: 3, write: 1, timeout: 12 });
    expect(wrkErrors(r)).toBe(4021 + 16);
    expect(r.latencyMs.p50).toBeCloseTo(0.06);
    expect(r.latencyMs.p99).toBe(1500);
    expect(r.durationSec).toBeCloseTo(10.1);
  });

  it('fails loudly when the output has no throughput line', () => {
    expect(() => parseWrk('unable to connect to 127.0.0.1:1 Connection refused')).toThrow(/Requests\/sec/);
  });
});

describe('wrkScript', () => {
  it('posts JSON with the bearer token and a per-thread, per-request code', () => {
    const lua = wrkScript({ projectId: 'p-1', token: 'svc_abc', tag: 'gw_x' });
    expect(lua).toContain('wrk.method = "POST"');
    expect(lua).toContain('wrk.headers["Authorization"] = "Bearer svc_abc"');
    expect(lua).toContain('{\\"project_id\\":\\"p-1\\",\\"data\\":{\\"code\\":\\"');
    expect(lua).toContain('counter = counter + 1');
    expect(lua).toContain('thread:set("thread_no", threads)');
  });

  it('sends no Authorization header without a token', () => {
    expect(wrkScript({ projectId: null, token: null, tag: 't' })).not.toContain('Authorization');
  });

  it('builds a JSON body, with the same further data keys when given', () => {
    const body = (lua: string) => {
      const literal = (name: string) => JSON.parse(new RegExp(`^local ${name} = (".*")$`, 'm').exec(lua)![1]!) as string;
      return JSON.parse(`${literal('head')}t_1_7${literal('tail')}`) as unknown;
    };
    expect(body(wrkScript({ projectId: 'p-1', token: null, tag: 't' }))).toEqual({ project_id: 'p-1', data: { code: 't_1_7' } });
    const tail = ',"cut_in":1001,"sequence":{"type":"Sequence","id":"s-1"}';
    expect(body(wrkScript({ projectId: 'p-1', token: null, tag: 't', dataTail: tail }))).toEqual({
      project_id: 'p-1',
      data: { code: 't_1_7', cut_in: 1001, sequence: { type: 'Sequence', id: 's-1' } },
    });
  });
});
