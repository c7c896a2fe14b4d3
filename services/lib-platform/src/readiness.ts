/**
 * Readiness: named dependency checks, each bounded by a timeout so a dependency that hangs
 * reads as down instead of hanging the probe.
 */
export type Check = () => Promise<unknown>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, 'ok' | string>;
  /** The first dependency that failed, if any. */
  failing?: string;
}

export class Readiness {
  private readonly checks = new Map<string, Check>();

  constructor(private readonly timeoutMs = 1500) {}

  /** Adds (or replaces) the check called `name`. */
  add(name: string, check: Check): this {
    this.checks.set(name, check);
    return this;
  }

  /** Runs every check in parallel. */
  async run(): Promise<ReadinessReport> {
    const entries = [...this.checks.entries()];
    const results = await Promise.all(
      entries.map(async ([name, check]) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            check(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
            }),
          ]);
          return [name, 'ok'] as const;
        } catch (err) {
          return [name, err instanceof Error ? err.message : String(err)] as const;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const checks = Object.fromEntries(results);
    const failing = results.find(([, v]) => v !== 'ok')?.[0];
    return { ready: failing === undefined, checks, failing };
  }
}
