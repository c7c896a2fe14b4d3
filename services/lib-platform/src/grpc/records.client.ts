/**
 * The one client of the records service every other service uses: constructed the same way
 * everywhere, records in and out as the proto messages. A service that writes through itself
 * (`via`, e.g. media-transcode for a Representation's transcode fields) names itself once here
 * and every write it makes carries it as `Principal.via`; reads go as the caller.
 */
import { recordsv1 } from '@reelbase/proto';
import { viaService, type CallContext } from '../context.js';
import { AppError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { createGrpcClient, type CallOpts, type GrpcClient } from './client.js';

export interface RecordsClientOptions {
  /** RECORDS_ADDR. */
  address: string;
  internalAuthSecret: string;
  /** Milliseconds before a call fails with `unavailable`; 5 s. */
  deadlineMs?: number;
  metrics?: Metrics;
  /** The service every write is made through (`Principal.via`); none by default. */
  via?: string;
}

function recordOf(res: { record?: recordsv1.Record | undefined }): recordsv1.Record {
  if (!res.record) throw new AppError('internal', 'records returned no record');
  return res.record;
}

export class RecordsClient {
  private readonly client: GrpcClient<recordsv1.RecordsServiceClient>;

  constructor(private readonly opts: RecordsClientOptions) {
    this.client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address: opts.address,
      internalAuthSecret: opts.internalAuthSecret,
      deadlineMs: opts.deadlineMs ?? 5000,
      metrics: opts.metrics,
    });
  }

  /** `ctx` as a write of this client: marked with its `via` when it has one. */
  private writing(ctx: CallContext): CallContext {
    return this.opts.via ? viaService(ctx, this.opts.via) : ctx;
  }

  /** The record (not_found when it does not exist or is retired). */
  async get(entityType: string, id: string, ctx: CallContext): Promise<recordsv1.Record> {
    return recordOf(await this.client.call.getRecord({ entityType, id }, ctx));
  }

  /** The record, or null when records answers not_found. */
  async find(entityType: string, id: string, ctx: CallContext): Promise<recordsv1.Record | null> {
    try {
      return (await this.client.call.getRecord({ entityType, id }, ctx)).record ?? null;
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') return null;
      throw err;
    }
  }

  async create(req: recordsv1.CreateRecordRequest, ctx: CallContext): Promise<recordsv1.Record> {
    return recordOf(await this.client.call.createRecord(req, this.writing(ctx)));
  }

  async update(req: recordsv1.UpdateRecordRequest, ctx: CallContext): Promise<recordsv1.Record> {
    return recordOf(await this.client.call.updateRecord(req, this.writing(ctx)));
  }

  async retire(entityType: string, id: string, ctx: CallContext): Promise<void> {
    await this.client.call.retireRecord({ entityType, id }, this.writing(ctx));
  }

  query(req: recordsv1.QueryRecordsRequest, ctx: CallContext, opts?: CallOpts): Promise<recordsv1.QueryRecordsResponse> {
    return this.client.call.queryRecords(req, ctx, opts);
  }

  async applySchema(req: recordsv1.ApplySchemaRequest, ctx: CallContext, opts?: CallOpts): Promise<void> {
    await this.client.call.applySchema(req, this.writing(ctx), opts);
  }

  async applyRename(req: recordsv1.ApplyRenameRequest, ctx: CallContext, opts?: CallOpts): Promise<number> {
    return Number((await this.client.call.applyRename(req, this.writing(ctx), opts)).rewritten);
  }

  /** records' usage counts as JSON text. */
  async countUsage(ctx: CallContext, opts?: CallOpts): Promise<string> {
    return (await this.client.call.countUsage({}, ctx, opts)).usageJson;
  }

  close(): void {
    this.client.close();
  }
}
