/**
 * Rotating the signing key (Admin; docs/api-notes.md, Authentication): the new key signs at
 * once; older keys retire when the longest token they signed has expired, or at once in an
 * emergency rotation, which logs everybody out (API keys are not affected). Every auth replica
 * reloads its keys and every gateway forgets its cached login tokens when told on NATS.
 */
import type { CallContext, Logger } from '@reelbase/lib-platform';
import { requireAdmin } from './auth.rules.js';
import type { SigningKeyRing } from './signing-key.ring.js';
import type { RotationNotifier } from './ports.js';

export class SigningKeyRotation {
  constructor(
    private readonly ring: SigningKeyRing,
    private readonly notifier: RotationNotifier,
    private readonly logger: Logger,
  ) {}

  async rotate(retirePrevious: boolean, ctx: CallContext): Promise<{ kid: string; retired: number }> {
    const caller = requireAdmin(ctx);
    const res = await this.ring.rotate(retirePrevious);
    this.logger.info(
      { kid: res.kid, retired: res.retired, retire_previous: retirePrevious, by: caller.userId, request_id: ctx.requestId },
      retirePrevious ? 'signing key rotated; every older key retired' : 'signing key rotated',
    );
    await this.notifier.signingKeysRotated(retirePrevious);
    return res;
  }
}
