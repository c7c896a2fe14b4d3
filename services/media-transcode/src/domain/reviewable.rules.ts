/**
 * The transcode states of a Representation (contract: pending → processing → done | failed) and
 * what a worker does with a delivered job.
 */

export type TranscodeStatus = 'pending' | 'processing' | 'done' | 'failed';

/** True when nothing more happens to a reviewable in `status`. */
export function isFinished(status: string | undefined): boolean {
  return status === 'done' || status === 'failed';
}

/** What a worker does with a delivery, from the record's state and the attempts already made. */
export type DeliveryDecision = { action: 'skip'; why: string } | { action: 'give_up'; reason: string } | { action: 'run'; attempt: number };

/**
 * `priorAttempts`: attempts started by earlier deliveries; `lastError`: the reason the last one
 * ended with, if it ended (a worker that died leaves none).
 */
export function decideDelivery(status: string | undefined, priorAttempts: number, maxAttempts: number, lastError: string | null): DeliveryDecision {
  if (isFinished(status)) return { action: 'skip', why: `already ${status}` };
  if (priorAttempts >= maxAttempts) {
    return {
      action: 'give_up',
      reason: lastError ?? `the transcode was interrupted ${priorAttempts} time${priorAttempts === 1 ? '' : 's'} (the worker stopped before it finished)`,
    };
  }
  return { action: 'run', attempt: priorAttempts + 1 };
}

/** The content type an original is stored and served with: the declared one when it is a plain media type. */
export function storedContentType(declared: string): string {
  const t = declared.split(';')[0]!.trim().toLowerCase();
  return /^(video|image|audio|application)\/[a-z0-9][a-z0-9.+-]{0,100}$/.test(t) ? t : 'application/octet-stream';
}
