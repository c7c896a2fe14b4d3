/**
 * The scheduler's {@link FarmJobPort} over records' FarmService: a `farm_job` target's job (the
 * body of POST /farm/jobs, as validated when the schedule was written) is created with
 * CreateJob, as the principal the run acts for; records checks it like any other submission.
 * The job's fields are read as the scheduler's contract reads them (lib-platform's
 * `schedulerCodec.farmJobToProto`, the same fields as CreateJob's); its payload goes as JSON.
 */
import { schedulerCodec, type CallContext, type PromiseClient } from '@reelbase/lib-platform';
import type { farmv1 } from '@reelbase/proto';
import type { FarmJobPort } from '../domain/scheduler.ports.js';

export class SchedulerFarm implements FarmJobPort {
  constructor(private readonly farm: PromiseClient<farmv1.FarmServiceClient>) {}

  async createJob(job: Record<string, unknown>, ctx: CallContext): Promise<string> {
    const { payload: _payload, ...fields } = schedulerCodec.farmJobToProto(job);
    const res = await this.farm.createJob({ ...fields, payloadJson: job.payload === undefined ? undefined : JSON.stringify(job.payload) }, ctx);
    if (!res.job) throw new Error('records answered no job');
    return res.job.id;
  }
}
