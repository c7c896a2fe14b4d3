/**
 * The bounds of an addon's definitions and settings are lib-platform's (`policy/addons.policy.ts`),
 * shared with the gateway; the service checks each before anything is compiled or stored.
 */
export { ADDON_LIMITS, ADDON_NAME } from '@reelbase/lib-platform';

/** The only `$schema` a settings schema may declare (at its root). */
export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
