/**
 * What a service opened, closed in reverse order. Each resource is registered right after it
 * opens (`defer`), so a start that fails half-way closes exactly what it had opened, and a
 * running service's stop is the same `closeAll`.
 */
import type { Logger } from '../logger.js';
import type { BackgroundLoop } from './background.js';

/** Closes one resource; may be async. */
export type Closer = () => unknown;

/** Default bound on one closing step. */
export const DEFAULT_STEP_TIMEOUT_MS = 10_000;

/** Thrown into the log (never to the caller) when a step outlasts its bound. */
export class StepTimeoutError extends Error {
  override readonly name = 'StepTimeoutError';
  constructor(
    readonly step: string,
    readonly timeoutMs: number,
  ) {
    super(`${step} did not close within ${timeoutMs} ms`);
  }
}

/** A stack of closers: last deferred, first closed. */
export class ResourceStack {
  private readonly steps: { name: string; close: Closer }[] = [];
  private closing: Promise<void> | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly stepTimeoutMs = DEFAULT_STEP_TIMEOUT_MS,
  ) {}

  /**
   * Registers `close` for the resource `name`. A resource deferred after `closeAll` began
   * (a start racing a stop) is closed at once, so nothing is left open behind it.
   */
  defer(name: string, close: Closer): this {
    const step = { name, close };
    if (this.closing) void this.closing.then(() => this.runStep(step));
    else this.steps.push(step);
    return this;
  }

  /**
   * Starts a background loop now and registers its stop under `name`: the one way every service
   * starts its relays, consumers, sweepers and followers (see background.ts).
   */
  startLoop(name: string, loop: BackgroundLoop): this {
    loop.start();
    return this.defer(name, () => loop.stop());
  }

  /** True once `closeAll` was called. */
  get closed(): boolean {
    return this.closing !== null;
  }

  /**
   * Closes every resource, last deferred first, each bounded by the step timeout. A step that
   * fails or times out is logged and the next one runs. Later calls return the same promise.
   */
  closeAll(): Promise<void> {
    return (this.closing ??= (async () => {
      for (const step of this.steps.splice(0).reverse()) await this.runStep(step);
    })());
  }

  private async runStep(step: { name: string; close: Closer }): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StepTimeoutError(step.name, this.stepTimeoutMs)), this.stepTimeoutMs);
    });
    try {
      // Promise.resolve().then: a closer that throws synchronously is caught like one that rejects.
      await Promise.race([Promise.resolve().then(step.close), timeout]);
    } catch (err) {
      this.logger.warn({ err, step: step.name }, err instanceof StepTimeoutError ? 'stop step timed out' : 'stop step failed');
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Runs `start` with a fresh {@link ResourceStack}. When `start` throws, everything it had
 * deferred is closed before the error is rethrown; otherwise the stack stays open and its
 * `closeAll` is the service's stop.
 */
export async function withResources<T>(logger: Logger, start: (resources: ResourceStack) => Promise<T>, stepTimeoutMs = DEFAULT_STEP_TIMEOUT_MS): Promise<T> {
  const resources = new ResourceStack(logger, stepTimeoutMs);
  try {
    return await start(resources);
  } catch (err) {
    await resources.closeAll();
    throw err;
  }
}
