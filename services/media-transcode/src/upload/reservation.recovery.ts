/**
 * Finishes uploads whose process stopped between reserving the job and queueing it (the sweeper
 * runs it before each publish sweep). A reservation older than its age limit either has a
 * Representation in records (created by the upload; then the job is attached and published by
 * the sweep that follows, so the reviewable does not stay `pending`) or none (the original is
 * removed and the reservation dropped: nothing is left behind).
 */
import { systemContext, type Logger } from '@reelbase/lib-platform';
import type { JobStore, MediaObjects, UploadRecords } from '../domain/ports.js';

export interface ReservationRecoveryOptions {
  jobs: JobStore;
  records: UploadRecords;
  store: MediaObjects;
  logger: Logger;
  /** Reservations younger than this belong to uploads still running (at least the records deadline). */
  ageMs: number;
}

export class ReservationRecovery {
  constructor(private readonly o: ReservationRecoveryOptions) {}

  /** One pass; returns how many reservations were attached and dropped. */
  async recoverOnce(): Promise<{ attached: number; dropped: number }> {
    const { jobs, records, store, logger } = this.o;
    let attached = 0;
    let dropped = 0;
    for (const r of await jobs.staleReservations(this.o.ageMs)) {
      const rep = await records.findUpload(r.versionId, r.originalKey, systemContext());
      if (rep) {
        if (await jobs.attach(r.id, rep.id)) attached++;
        logger.info({ job_id: r.id, representation_id: rep.id }, 'interrupted upload: its job is queued');
      } else {
        await store.remove([r.originalKey]);
        await jobs.dropReservation(r.id);
        dropped++;
        logger.info({ job_id: r.id, key: r.originalKey }, 'interrupted upload without a Representation: original removed');
      }
    }
    return { attached, dropped };
  }
}
