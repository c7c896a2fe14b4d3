/**
 * The caller of a gateway request once auth has resolved its token or key.
 */
import type { Principal } from '@reelbase/lib-platform';

/** A principal resolved by auth, with what the gateway needs beyond lib-platform's. */
export interface AuthedPrincipal extends Principal {
  email: string;
}
