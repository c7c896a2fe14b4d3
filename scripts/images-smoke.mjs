#!/usr/bin/env node
// `npm run images:smoke`: starts every service's image (built by `npm run images`) as a podman
// container, as the chart runs them (numeric non-root user 1000, read-only root filesystem, a
// writable /tmp only, every capability dropped, no new privileges), against the local PostgreSQL,
// NATS and the project's S3 stand-in; waits for /readyz; walks through the API (register, create,
// query, upload a reviewable until it is `done`, the create seen on a WebSocket); stops them and
// prints each image's size. Containers share the host network (ports chosen free, bound to
// 127.0.0.1). docs/operations.md, "Images".
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { containersEnv, ensureTools, imageExists, imageName, imageSize, mib, must, output, ROOT, say, SERVICES as IMAGES } from './images.mjs';

const kit = await import(join(ROOT, 'services', 'lib-testkit', 'dist', 'index.js'));
const env = containersEnv();
const PREFIX = `smoke_${Date.now().toString(36)}`;
const containers = [];
const cleanups = [];

function fail(msg) {
  throw new Error(msg);
}

async function waitReady(name, port, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = String(err?.cause?.code ?? err);
    }
    const state = spawnSync('podman', ['inspect', '--format', '{{.State.Status}}', `reelbase-smoke-${name}`], { env, encoding: 'utf8' }).stdout.trim();
    if (state && state !== 'running') {
      const logs = spawnSync('podman', ['logs', '--tail', '20', `reelbase-smoke-${name}`], { env, encoding: 'utf8' });
      fail(`${name} exited (${state}):\n${logs.stdout}${logs.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  fail(`${name} not ready on :${port} within ${timeoutMs} ms (last: ${last})`);
}

async function api(base, token, method, path, body, headers = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body && !(body instanceof Uint8Array) ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body instanceof Uint8Array ? body : body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (res.status !== 200) fail(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return parsed;
}

async function walkThrough(base) {
  const t0 = Date.now();
  const reg = await api(base, null, 'POST', '/auth/register', { email: 'smoke@studio.test', password: 'correct horse battery', name: 'Smoke Admin' });
  const token = reg.access_token;
  say(`  registered the first user (Admin) ${reg.user.id}`);

  const wsUrl = new URL('/events/ws', base.replace(/^http/, 'ws'));
  wsUrl.searchParams.set('token', token);
  const ws = new WebSocket(wsUrl);
  const seen = [];
  ws.addEventListener('message', (m) => seen.push(JSON.parse(String(m.data))));
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true });
    ws.addEventListener('error', () => reject(new Error('WebSocket handshake failed')), { once: true });
  });

  const project = await api(base, token, 'POST', '/entities/Project', { data: { name: 'Smoke', code: 'smoke' } });
  const shot = await api(base, token, 'POST', '/entities/Shot', { project_id: project.id, data: { code: 'sh010' } });
  const found = await api(base, token, 'POST', '/entities/Shot/query', { filters: [['project_id', 'is', project.id]] });
  if (!found.items?.some((r) => r.id === shot.id)) fail(`the Shot was not found by its query: ${JSON.stringify(found).slice(0, 300)}`);
  say(`  created Project ${project.id} and Shot ${shot.id}; the query finds it`);

  const version = await api(base, token, 'POST', '/entities/Version', { project_id: project.id, data: { code: 'sh010_v001' } });
  const ff = kit.ensureFfmpeg();
  const dir = join(ROOT, '.test-data', 'images-smoke');
  mkdirSync(dir, { recursive: true });
  const clip = join(dir, 'clip.mp4');
  must(ff.ffmpeg, ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-t', '2', '-pix_fmt', 'yuv420p', clip]);
  const boundary = `smoke${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.mp4"\r\nContent-Type: video/mp4\r\n\r\n`),
    readFileSync(clip),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  await api(base, token, 'POST', `/versions/${version.id}/reviewable`, new Uint8Array(body), { 'content-type': `multipart/form-data; boundary=${boundary}` });
  const deadline = Date.now() + 180_000;
  let reviewable;
  for (;;) {
    reviewable = await api(base, token, 'GET', `/versions/${version.id}/reviewable`);
    if (reviewable.status === 'done' || reviewable.status === 'failed') break;
    if (Date.now() > deadline) fail(`the reviewable is still ${reviewable.status} after 180 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  if (reviewable.status !== 'done') fail(`the reviewable ended ${reviewable.status}: ${JSON.stringify(reviewable).slice(0, 300)}`);
  say(`  uploaded a reviewable to Version ${version.id}: done (transcoded in the media-worker container)`);

  const wsDeadline = Date.now() + 30_000;
  while (!seen.some((ev) => ev.entity_id === shot.id && ev.action === 'create') && Date.now() < wsDeadline) await new Promise((r) => setTimeout(r, 200));
  ws.close();
  if (!seen.some((ev) => ev.entity_id === shot.id && ev.action === 'create'))
    fail(`the WebSocket follower did not see the Shot's create (${seen.length} messages)`);
  say(`  the WebSocket follower saw the Shot's create event (${seen.length} messages in all)`);
  say(`walk-through passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

async function main() {
  ensureTools({ podman: 'podman', runc: 'runc' });
  const missing = IMAGES.filter((s) => !imageExists(imageName(s), env));
  if (missing.length) fail(`images missing: ${missing.map(imageName).join(', ')}; run \`npm run images\` first`);

  const db = await kit.createTestDatabase(undefined, 'rb_smoke');
  cleanups.push(() => db.drop());
  const natsUrl = process.env.TEST_NATS_URL ?? kit.DEFAULT_NATS_URL;
  cleanups.push(() => kit.deleteStreams(PREFIX, natsUrl));
  const s3 = await kit.startS3StandIn({ dataDir: join(ROOT, '.test-data', 'images-smoke', `s3-${Date.now()}`) });
  cleanups.push(() => s3.stop?.() ?? s3.close?.());

  const specs = kit.SERVICES;
  const free = await kit.freePorts(specs.length * 2 + 1);
  const ports = {};
  for (const s of specs) {
    if (s.httpPortEnv === 'GATEWAY_PORT') ports[s.name] = { http: free.shift(), ops: free.shift() };
    else ports[s.name] = { grpc: s.grpcPort === undefined ? undefined : free.shift(), http: free.shift() };
  }
  const shared = {
    INTERNAL_AUTH_SECRET: randomBytes(24).toString('hex'),
    SECRETS_KEY: randomBytes(32).toString('base64'),
    BIND_HOST: '127.0.0.1',
  };
  const ctx = {
    services: specs,
    ports,
    databaseUrl: db.url,
    natsUrl,
    natsPrefix: PREFIX,
    logLevel: 'info',
    s3: { endpoint: s3.endpoint, accessKey: s3.accessKey, secretKey: s3.secretKey, bucket: s3.bucket, region: s3.region },
  };
  const stages = [...new Set(specs.map((s) => s.stage))].sort((a, b) => a - b);
  for (const stage of stages) {
    const here = specs.filter((s) => s.stage === stage);
    for (const s of here) {
      const image = imageName(s.folder ?? s.name);
      const vars = { ...kit.serviceEnv(s, ctx), ...shared };
      const args = [
        'run',
        '--detach',
        '--name',
        `reelbase-smoke-${s.name}`,
        '--network',
        'host',
        '--user',
        '1000:1000',
        '--read-only',
        '--tmpfs',
        '/tmp:rw,size=1g,mode=1777',
        '--cap-drop',
        'ALL',
        '--security-opt',
        'no-new-privileges',
        ...Object.entries(vars).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
        image,
      ];
      if (s.main) args.push('node', '--expose-gc', `services/${s.folder ?? s.name}/dist/${s.main}`);
      output('podman', args, { env });
      containers.push(`reelbase-smoke-${s.name}`);
      say(`started ${s.name} (${image}${s.main ? `, ${s.main}` : ''})`);
    }
    await Promise.all(here.map((s) => waitReady(s.name, ports[s.name].http)));
    say(`ready: ${here.map((s) => s.name).join(', ')}`);
  }
  const user = output('podman', ['exec', 'reelbase-smoke-records', 'id', '-u'], { env });
  const write = spawnSync('podman', ['exec', 'reelbase-smoke-records', 'sh', '-c', 'touch /app/x'], { env, encoding: 'utf8' });
  if (user !== '1000' || write.status === 0) fail(`records runs as uid ${user}; writing to /app ${write.status === 0 ? 'succeeded' : 'was refused'}`);
  say('containers run as uid 1000 on a read-only root filesystem (writing /app is refused)');

  const gw = specs.find((s) => s.httpPortEnv === 'GATEWAY_PORT');
  await walkThrough(`http://127.0.0.1:${ports[gw.name].http}`);
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  console.error(`[images] smoke test failed: ${err?.stack ?? err}`);
  for (const c of containers) {
    const logs = spawnSync('podman', ['logs', '--tail', '15', c], { env, encoding: 'utf8' });
    console.error(`--- ${c}\n${logs.stdout}${logs.stderr}`);
  }
} finally {
  for (const c of containers.reverse()) spawnSync('podman', ['stop', '--time', '10', c], { env, stdio: 'ignore' });
  for (const c of containers) spawnSync('podman', ['rm', '--force', c], { env, stdio: 'ignore' });
  say(`stopped ${containers.length} containers`);
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
}
say('image sizes:');
for (const s of IMAGES) if (imageExists(imageName(s), env)) say(`  ${imageName(s).padEnd(44)} ${mib(imageSize(imageName(s), env))}`);
process.exit(failed ? 1 : 0);
