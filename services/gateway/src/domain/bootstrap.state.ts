/**
 * Whether the first user exists. Once it does, anonymous registration is closed for good, so
 * the fact is asked of auth until it is true and then kept: an anonymous register after that
 * is refused (403) by the gateway alone, before its body is looked at.
 */
import type { CallContext } from '@reelbase/lib-platform';

/** Asks auth (the `GetBootstrap` RPC). */
export type BootstrapProbe = (ctx: CallContext) => Promise<{ done: boolean }>;

export class BootstrapState {
  private done = false;

  constructor(private readonly probe: BootstrapProbe) {}

  /** True once the first user exists; asks auth only while it does not (yet). */
  async isDone(ctx: CallContext): Promise<boolean> {
    if (this.done) return true;
    if ((await this.probe(ctx)).done) this.done = true;
    return this.done;
  }
}
