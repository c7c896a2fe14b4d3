/**
 * The scheduler's {@link FarmJobPort} over records' FarmService: a `farm_job` target's job (the
 * body of POST /farm/jobs, as validated when the schedule was written) is created with
 * CreateJob, as the principal the run acts for; records checks it like any other submission.
 */
import type { CallContext, PromiseClient } from '@reelbase/lib-platform';
import type { farmv1 } from '@reelbase/proto';
import type { FarmJobPort } from '../domain/scheduler/scheduler.ports.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

export class SchedulerFarm implements FarmJobPort {
  constructor(private readonly farm: PromiseClient<farmv1.FarmServiceClient>) {}

  async createJob(job: Record<string, unknown>, ctx: CallContext): Promise<string> {
    const res = await this.farm.createJob(
      {
        projectId: str(job.project_id) ?? '',
        name: str(job.name) ?? '',
        kind: str(job.kind) ?? '',
        pool: str(job.pool),
        priority: int(job.priority),
        frames: str(job.frames),
        chunkSize: int(job.chunk_size),
        payloadJson: job.payload === undefined ? undefined : JSON.stringify(job.payload),
        versionId: str(job.version_id),
        taskId: str(job.task_id),
        maxAttempts: int(job.max_attempts),
        dependsOn: Array.isArray(job.depends_on) ? job.depends_on.filter((d): d is string => typeof d === 'string') : [],
        manager: str(job.manager),
        externalId: str(job.external_id),
      },
      ctx,
    );
    if (!res.job) throw new Error('records answered no job');
    return res.job.id;
  }
}
