import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeanClient } from './http.client.js';

describe('LeanClient', () => {
  let server: http.Server;
  let url: string;
  const sockets = new Set<number>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      sockets.add(req.socket.remotePort!);
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        if (req.url === '/hang') return; // never answers
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ method: req.method, url: req.url, length: req.headers['content-length'] ?? null, auth: req.headers.authorization ?? null, body }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the method, headers and a body with its length, and reads the whole answer on one kept socket', async () => {
    const client = new LeanClient(url);
    sockets.clear();
    const body = JSON.stringify({ filters: [['code', 'contains', 'é'.repeat(40_000)]] });
    const a = await client.request('POST', '/entities/Task/query', { authorization: 'Bearer t', 'content-type': 'application/json' }, body);
    const b = await client.request('GET', '/missing', {});
    client.close();
    expect(a.status).toBe(200);
    const echoed = JSON.parse(a.text) as { method: string; url: string; length: string; auth: string; body: string };
    expect(echoed).toMatchObject({ method: 'POST', url: '/entities/Task/query', auth: 'Bearer t', length: String(Buffer.byteLength(body)) });
    expect(echoed.body).toBe(body);
    expect(b.status).toBe(404);
    expect(JSON.parse(b.text)).toMatchObject({ method: 'GET', length: null, body: '' });
    expect(sockets.size).toBe(1);
  });

  it('gives up on a request that gets no answer within its time', async () => {
    const client = new LeanClient(url);
    await expect(client.request('GET', '/hang', {}, undefined, 100)).rejects.toThrow(/no answer within 100 ms/);
    client.close();
  });
});
