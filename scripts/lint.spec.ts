// The lint step of `npm test` on fixture files: the workspace's own ESLint configuration
// (eslint.config.mjs, built for a scratch workspace) must refuse a floating promise, every
// import that crosses a layer and a service's own interval timer, and accept what they allow.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain ES module without type declarations
import { configFor } from '../eslint.config.mjs';
// @ts-expect-error -- a plain ES module without type declarations

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let work: string;
let eslint: ESLint;

const files: Record<string, string> = {
  'tsconfig.base.json': JSON.stringify({
    compilerOptions: { target: 'ES2023', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: [] },
  }),
  'services/records/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'], exclude: ['src/**/*.spec.ts'] }),
  'services/records/src/store/record.store.ts': 'export async function load(): Promise<number> { return 1; }\n',
  'services/records/src/http/answers.ts': 'export const OK = 200;\n',
  'services/records/src/domain/rules.ts': 'export async function check(): Promise<void> {}\n',
  'services/records/src/domain/ports.ts': 'export interface RecordStore {\n  load(): Promise<number>;\n}\n',
  'services/records/src/live/feed.ts': 'export const FEED = 1;\n',
  'services/records/src/config.ts': 'export const CONFIG = 1;\n',
  'services/auth/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
  'services/auth/src/index.ts': 'export const AUTH = 1;\n',
  'services/lib-platform/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
  'services/lib-platform/src/index.ts': 'export const LIB = 1;\n',
  'services/lib-testkit/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
  'services/gateway/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
  'services/media-transcode/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
  'services/events/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
  'services/notifier/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
  'services/schema/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', include: ['src'] }),
};

beforeAll(() => {
  // Inside the repository (.test-data is ignored by git) so that node_modules resolves.
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  work = mkdtempSync(join(ROOT, '.test-data', 'lint-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  eslint = new ESLint({ cwd: work, overrideConfigFile: true, overrideConfig: configFor(work) });
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Writes `text` at `path` in the scratch workspace, lints it, returns "rule: message" lines. */
async function lint(path: string, text: string): Promise<string[]> {
  const file = join(work, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  const [result] = await eslint.lintFiles([file]);
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

describe('lint: type-aware promise rules', () => {
  it('a floating promise in domain code is an error', async () => {
    const problems = await lint(
      'services/records/src/domain/floating.ts',
      "import { check } from './rules.js';\nexport function go(): void {\n  check();\n}\n",
    );
    expect(problems).toEqual([expect.stringMatching(/^@typescript-eslint\/no-floating-promises: /)]);
  });

  it('a promise handed to a callback that expects void is an error', async () => {
    const problems = await lint(
      'services/records/src/domain/misused.ts',
      "import { check } from './rules.js';\nexport function go(ids: string[]): void {\n  ids.forEach(async () => {\n    await check();\n  });\n}\n",
    );
    expect(problems).toEqual([expect.stringMatching(/^@typescript-eslint\/no-misused-promises: /)]);
  });

  it('an awaited or explicitly ignored promise is fine', async () => {
    const text = "import { check } from './rules.js';\nexport async function go(): Promise<void> {\n  await check();\n  void check();\n}\n";
    expect(await lint('services/records/src/domain/awaited.ts', text)).toEqual([]);
  });
});

describe('lint: layer boundaries', () => {
  const domain = 'services/records/src/domain/uses.ts';

  it.each([
    ["import { load } from '../store/record.store.js';", 'the store adapter'],
    ["import { OK } from '../http/answers.js';", 'the http adapter'],
    ["export * from '../grpc/handlers.js';", 'the grpc adapter (re-export)'],
    ["import type { recordsv1 } from '@reelbase/proto';", 'generated protobuf code'],
    ["import { MikroORM } from '@mikro-orm/postgresql';", 'the ORM'],
    ["import knex from 'knex';", 'the SQL builder'],
    ["import * as grpc from '@grpc/grpc-js';", 'the gRPC transport'],
    ["export const load = () => import('../store/record.store.js');", 'the store adapter, dynamically'],
  ])('domain code may not import %s (%s)', async (line) => {
    const problems = await lint(domain, `${line}\n`);
    expect(problems).toEqual([expect.stringMatching(/^reelbase\/layers: Domain code must not import/)]);
  });

  it.each([
    ["import { FEED } from '../live/feed.js';", 'another adapter of its service (live/)'],
    ["import { CONFIG } from '../config.js';", 'a module of its service outside domain/'],
    ["import { connect } from '@nats-io/transport-node';", 'the NATS client'],
    ["import { Client } from 'minio';", 'the object store client'],
    ["import express from 'express';", 'the HTTP server'],
    ["import { WebSocket } from 'ws';", 'the WebSocket client'],
  ])('domain code may import only domain code, libraries and I/O-free packages: not %s (%s)', async (line) => {
    const problems = await lint(domain, `${line}\n`);
    expect(problems).toEqual([expect.stringMatching(/^reelbase\/layers: Domain code must not import/)]);
  });

  it('domain code may import node builtins and third-party libraries that do no I/O', async () => {
    const text =
      "import { createHash } from 'node:crypto';\nimport { z } from 'zod';\nimport type { RecordStore } from './ports.js';\nexport type S = RecordStore;\nexport const x = [createHash, z];\n";
    expect(await lint(domain, text)).toEqual([]);
  });

  it.each([
    ["import { load } from '../store/record.store.js';", 'a store adapter'],
    ["import type { load } from '../store/record.store.js';", 'a store adapter, for its types'],
    ["import { MikroORM } from '@mikro-orm/postgresql';", 'the ORM'],
    ["import knex from 'knex';", 'the SQL builder'],
  ])('a gRPC handler may not import %s (%s)', async (line) => {
    const problems = await lint('services/records/src/grpc/records.handler.ts', `${line}\n`);
    expect(problems).toEqual([expect.stringMatching(/^reelbase\/layers: A gRPC handler must not import/)]);
  });

  it('a gRPC handler may import the domain, its ports and generated protobuf code', async () => {
    const text =
      "import { check } from '../domain/rules.js';\nimport type { RecordStore } from '../domain/ports.js';\nimport type { recordsv1 } from '@reelbase/proto';\nexport type S = RecordStore | recordsv1.Record;\nexport const x = check;\n";
    expect(await lint('services/records/src/grpc/records.handler.ts', text)).toEqual([]);
  });

  it('domain code may import its own domain modules and the libraries', async () => {
    const text = "import { check } from './rules.js';\nimport { LIB } from '@reelbase/lib-platform';\nexport const x = [check, LIB];\n";
    expect(await lint(domain, text)).toEqual([]);
  });

  it('adapters may import the ORM and generated protobuf code; domain tests may wire adapters', async () => {
    expect(await lint('services/records/src/store/orm.ts', "import { MikroORM } from '@mikro-orm/postgresql';\nexport { MikroORM };\n")).toEqual([]);
    expect(await lint('services/records/src/domain/rules.spec.ts', "import { load } from '../store/record.store.js';\nexport { load };\n")).toEqual([]);
  });

  it('a library never imports a service, by package name or by path', async () => {
    for (const line of ["import { AUTH } from '@reelbase/auth';", "import { AUTH } from '../../auth/src/index.js';"]) {
      const problems = await lint('services/lib-platform/src/uses.ts', `${line}\nexport { AUTH };\n`);
      expect(problems).toEqual([expect.stringMatching(/^reelbase\/layers: A library \(lib-platform\) must not import the service auth/)]);
    }
  });

  it('a service never imports another service, in its code or its tests', async () => {
    for (const [path, line] of [
      ['services/records/src/uses.ts', "import { AUTH } from '@reelbase/auth';"],
      ['services/records/src/store/uses.ts', "import { AUTH } from '../../../auth/src/index.js';"],
      ['services/records/test/uses.int.spec.ts', "import { AUTH } from '@reelbase/auth';"],
    ] as const) {
      const problems = await lint(path, `${line}\nexport { AUTH };\n`);
      expect(problems, path).toEqual([expect.stringMatching(/^reelbase\/layers: The service records must not import the service auth/)]);
    }
  });

  it.each([
    ['services/records/src/farm/store/farm.repository.ts', "import { load } from '../../core/store/record.store.js';", 'store/'],
    ['services/records/src/farm/grpc/farm.handler.ts', "import { h } from '../../core/grpc/records.handler.js';", 'grpc/'],
    ['services/records/src/farm/store/farm.repository.ts', "export * from '../../sync/grpc/sync.handler.js';", 'grpc/'],
  ])("a module never reaches another module's adapters (%s: %s)", async (path, line, layer) => {
    const problems = await lint(path, `${line}\n`);
    expect(problems).toContainEqual(expect.stringMatching(new RegExp(`^reelbase/layers: The module farm must not import the ${layer} of the module`)));
  });

  it('the kernel module imports no other module', async () => {
    const problems = await lint(
      'services/records/src/kernel/domain/record.ports.ts',
      "import type { X } from '../../core/domain/core.ports.js';\nexport type Y = X;\n",
    );
    expect(problems).toEqual([expect.stringMatching(/^reelbase\/layers: The kernel module must not import the module core/)]);
  });

  it("a module may import the kernel's layers and other modules' domain; its domain stays free of adapters", async () => {
    const store = [
      "import { rows } from '../../kernel/store/record.repository.js';",
      "import type { RecordView } from '../../kernel/domain/record.types.js';",
      "import type { FarmStore } from '../domain/farm.ports.js';",
      "import { check } from '../../core/domain/rules.js';",
      'export const x = [rows, check];',
      'export type Y = RecordView | FarmStore;',
    ].join('\n');
    expect(await lint('services/records/src/farm/store/farm.repository.ts', `${store}\n`)).toEqual([]);
    const handler = "import { toProto } from '../../kernel/grpc/record.proto.js';\nexport const x = toProto;\n";
    expect(await lint('services/records/src/farm/grpc/farm.handler.ts', handler)).toEqual([]);
    const domain = await lint(
      'services/records/src/farm/domain/farm.service.ts',
      "import { load } from '../store/farm.repository.js';\nexport const x = load;\n",
    );
    expect(domain).toEqual([expect.stringMatching(/^reelbase\/layers: Domain code must not import the store adapter/)]);
    const handlerStore = await lint(
      'services/records/src/farm/grpc/farm.handler.ts',
      "import { load } from '../store/farm.repository.js';\nexport const x = load;\n",
    );
    expect(handlerStore).toEqual([expect.stringMatching(/^reelbase\/layers: A gRPC handler must not import/)]);
  });

  it.each([
    ['services/media-transcode/src/upload/upload.flow.ts', "import { MediaRecords } from '../records/records.client.js';", 'upload'],
    ['services/media-transcode/src/worker/job.processor.ts', "import { runFfmpeg } from '../transcode/ffmpeg.runner.js';", 'worker'],
    ['services/events/src/log/log.writer.ts', "import { WriterSession } from '../store/writer.session.js';", 'log'],
    ['services/notifier/src/delivery/engine.ts', "import { h } from '../grpc/notifier.handler.js';", 'delivery'],
  ])('a flow reaches I/O through ports, never an adapter (%s: %s)', async (path, line, flow) => {
    const problems = await lint(path, `${line}\nexport const x = 1;\n`);
    expect(problems).toEqual([expect.stringMatching(new RegExp(`^reelbase/layers: A flow \\(${flow}/\\) must not import`))]);
  });

  it.each([
    ['services/media-transcode/src/objects/object.store.ts', "import { MediaRecords } from '../records/records.client.js';"],
    ['services/media-transcode/src/store/job.repository.ts', "import { JobPublisher } from '../upload/job.publisher.js';"],
    ['services/schema/src/scheduler/records/scheduler.farm.ts', "import { Repo } from '../store/scheduler.repository.js';"],
  ])('an adapter depends on no other adapter or flow (%s: %s)', async (path, line) => {
    const problems = await lint(path, `${line}\nexport const x = 1;\n`);
    expect(problems).toEqual([expect.stringMatching(/^reelbase\/layers: An adapter \([a-z]+\/\) must not import/)]);
  });

  it('flows and adapters may import the domain, their own folder and other flows', async () => {
    const flow =
      "import type { JobStore } from '../domain/ports.js';\nimport { publish } from '../upload/job.publisher.js';\nimport { y } from './job.retry.js';\nexport type S = JobStore;\nexport const x = [publish, y];\n";
    expect(await lint('services/media-transcode/src/worker/job.processor.ts', flow)).toEqual([]);
    const adapter =
      "import type { JobStore } from '../domain/ports.js';\nimport { rows } from './job.rows.js';\nexport type S = JobStore;\nexport const x = rows;\n";
    expect(await lint('services/media-transcode/src/store/job.repository.ts', adapter)).toEqual([]);
  });

  it('a service may import the libraries and itself', async () => {
    const text = "import { LIB } from '@reelbase/lib-platform';\nimport { load } from './store/record.store.js';\nexport { LIB, load };\n";
    expect(await lint('services/records/src/service.ts', text)).toEqual([]);
  });
});

describe('lint: periodic work runs on IntervalLoop', () => {
  it.each([
    ['setInterval(() => {}, 1000);', 'no-restricted-globals'],
    ['globalThis.setInterval(() => {}, 1000);', 'no-restricted-properties'],
    ["import { setInterval } from 'node:timers';\nsetInterval(() => {}, 1000);", 'no-restricted-imports'],
    ["import { setInterval } from 'node:timers/promises';\nexport const ticks = setInterval(1000);", 'no-restricted-imports'],
  ])('a service may not run its own timer: %s', async (line, rule) => {
    const problems = await lint('services/records/src/sweeper.ts', `${line}\nexport {};\n`);
    expect(problems).toEqual([expect.stringMatching(new RegExp(`^${rule}: .*IntervalLoop`))]);
  });

  it('nor may a library', async () => {
    const problems = await lint('services/lib-platform/src/poll.ts', 'setInterval(() => {}, 1000);\nexport {};\n');
    expect(problems).toEqual([expect.stringMatching(/^no-restricted-globals: .*IntervalLoop/)]);
  });

  it('tests, the stack harness and the per-request body deadline may; setTimeout stays allowed', async () => {
    const text = 'setInterval(() => {}, 1000);\nexport {};\n';
    expect(await lint('services/records/src/domain/sweeper.spec.ts', text)).toEqual([]);
    expect(await lint('services/lib-testkit/src/parent.ts', text)).toEqual([]);
    expect(await lint('services/gateway/src/http/body.deadline.ts', text)).toEqual([]);
    expect(await lint('services/records/src/wait.ts', 'setTimeout(() => {}, 1000);\nexport {};\n')).toEqual([]);
  });
});

describe('lint: hand-written SQL goes through Knex', () => {
  it.each([
    ["import pg from 'pg';\nexport const pool = new pg.Pool();", 'no-restricted-imports'],
    ["import type { PoolClient } from 'pg';\nexport type C = PoolClient;", 'no-restricted-imports'],
    ['export const rows = (orm: any) => orm.em.getConnection().execute("select 1");', 'no-restricted-syntax'],
    ['export const rows = (orm: any) =>\n  orm.em\n    .getConnection()\n    .execute("select 1");', 'no-restricted-syntax'],
    ['export const rows = (em: any) => em.execute("select 1");', 'no-restricted-syntax'],
    ['export const rows = (orm: any) => orm.em.execute("select 1");', 'no-restricted-syntax'],
  ])('a service may not reach PostgreSQL another way: %s', async (text, rule) => {
    const problems = await lint('services/auth/src/store/raw.repository.ts', `${text}\n`);
    expect(problems).toEqual([expect.stringMatching(new RegExp(`^${rule}: .*Hand-written SQL goes through Knex`))]);
  });

  it("the ORM's Knex is the way; tests, the stack harness and the platform's own set-up may use pg", async () => {
    const knexText = 'export const rows = async (orm: any) => (await orm.em.getConnection().getKnex().raw("select 1")).rows;\n';
    expect(await lint('services/auth/src/store/knex.repository.ts', knexText)).toEqual([]);
    const pgText = "import pg from 'pg';\nexport const pool = (orm: any) => [new pg.Pool(), orm.em.getConnection().execute('select 1')];\n";
    expect(await lint('services/records/src/store/raw.repository.spec.ts', pgText)).toEqual([]);
    expect(await lint('services/lib-testkit/src/database.ts', pgText)).toEqual([]);
    expect(await lint('services/lib-platform/src/db.ts', pgText)).toEqual([]);
    expect(await lint('services/lib-platform/src/sql.pool.ts', pgText)).toEqual([]);
  });

  it('no service file is excepted: the records pools too are Knex pools', async () => {
    for (const path of ['services/records/src/core/store/query.pool.ts', 'services/records/src/farm/store/farm.repository.ts']) {
      const problems = await lint(path, "import pg from 'pg';\nexport const P = pg;\n");
      expect(problems, path).toEqual([expect.stringMatching(/^no-restricted-imports: .*Hand-written SQL goes through Knex/)]);
    }
  });

  it("the platform's SQL files still may not run their own timer", async () => {
    const problems = await lint(
      'services/lib-platform/src/sql.pool.ts',
      "import { setInterval } from 'node:timers';\nsetInterval(() => {}, 1000);\nexport {};\n",
    );
    expect(problems).toEqual([expect.stringMatching(/^no-restricted-imports: .*IntervalLoop/)]);
  });

  it('nor may the body deadline import pg', async () => {
    const problems = await lint('services/gateway/src/http/body.deadline.ts', "import pg from 'pg';\nexport const P = pg;\n");
    expect(problems).toEqual([expect.stringMatching(/^no-restricted-imports: .*Hand-written SQL goes through Knex/)]);
  });
});
