/**
 * The baseline: what a studio would write instead of a platform, one Express process with
 * a pg pool whose create handler runs the same record + outbox transaction as pgbench
 * (transaction.sql.ts). Deliberately minimal: no authentication, no schema validation,
 * no events delivery, so it bounds from above what any Node HTTP service can do here.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import { insertOutboxSql, insertRecordSql, outboxParams, recordParams, type CreateInput } from './transaction.sql.js';

/** Settings of the baseline server. */
export interface BaselineOptions {
  databaseUrl: string;
  port: number;
  poolSize: number;
  /** Schema holding the record and outbox tables. */
  schema: string;
  /** Written as created_by and actor: the baseline has no authentication to know the caller. */
  actor: string | null;
}

/** A running baseline server. */
export interface BaselineServer {
  port: number;
  stop(): Promise<void>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Starts the baseline HTTP server (`POST /entities/:type`). */
export async function startBaselineServer(opts: BaselineOptions): Promise<BaselineServer> {
  const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize });
  const insertRecord = insertRecordSql(opts.schema);
  const insertOutbox = insertOutboxSql(opts.schema);
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));

  app.post('/entities/:type', async (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || !isObject(body.data)) {
      res.status(422).json({ error: 'body must be {"data": {...}}' });
      return;
    }
    const input: CreateInput = {
      entityType: req.params.type,
      projectId: typeof body.project_id === 'string' ? body.project_id : null,
      actor: opts.actor,
      data: body.data,
    };
    let client: pg.PoolClient | undefined;
    try {
      client = await pool.connect();
      await client.query('BEGIN');
      const inserted = await client.query(insertRecord, recordParams(input));
      const row = inserted.rows[0] as { id: string };
      await client.query(insertOutbox, outboxParams(input, row.id));
      await client.query('COMMIT');
      res.status(200).json(row);
    } catch (err) {
      await client?.query('ROLLBACK').catch(() => {});
      res.status(500).json({ error: (err as Error).message });
    } finally {
      client?.release();
    }
  });

  const server = app.listen(opts.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return {
    port: (server.address() as AddressInfo).port,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}
