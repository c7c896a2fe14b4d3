/**
 * The writes that carry their Idempotency-Key (docs/architecture.md, "Idempotency keys"): a create
 * and a batch claim the key, write and store their answer in one call, through the idempotency
 * module's keys. A create's statement stores its record as the key's answer; a batch stores its
 * answer in its own transaction.
 */
import type { CallContext } from '@reelbase/lib-platform';
import type { Keyed, KeyedWrite } from '../../kernel/domain/idempotency.types.js';
import type { CreateInput, RecordView } from '../../kernel/domain/record.types.js';
import type { IdempotencyKeys } from '../../idempotency/domain/idempotency.keys.js';
import type { RecordService } from './record.service.js';

export class KeyedWrites {
  constructor(
    private readonly records: RecordService,
    private readonly keys: IdempotencyKeys,
  ) {}

  /** A create with its key: the created record, or the key's outcome when it did not run. */
  create(input: CreateInput, write: KeyedWrite, ctx: CallContext): Promise<Keyed<RecordView>> {
    return this.keys.write(write, (key) => this.records.create({ ...input, idempotency: key }, ctx));
  }

  /** A batch with its key: the batch's answer (JSON text), or the key's outcome when it did not run. */
  batch(requestsJson: string, write: KeyedWrite, ctx: CallContext): Promise<Keyed<string>> {
    return this.keys.write(write, (key) => this.records.batch(requestsJson, ctx, key));
  }
}
