/**
 * Rules that both the gateway and a service apply, kept once.
 */
export * from './entity-type.policy.js';
export * from './if-match.policy.js';
export * from './login-email.policy.js';
export * from './media-key.policy.js';
export * from './record-write.policy.js';
export * from './review-write.policy.js';
export * from './schema-code.policy.js';
export * as schemaBodies from './schema-bodies.js';
export * from './schema-operations.policy.js';
export * from './timelog.policy.js';
export * from './user-views.policy.js';
export * from './uuid.policy.js';
export * from './schedule.policy.js';
export * from './outbound-url.policy.js';
export * from './actions.policy.js';
export * from './addons.policy.js';
// The bounds of route groups, one namespace each (their names repeat across groups).
export * as entityPolicy from './entity.policy.js';
export * as farmPolicy from './farm.policy.js';
export * as mediaPolicy from './media.policy.js';
export * as notifierPolicy from './notifier.policy.js';
export * as sharePolicy from './share.policy.js';
export * as sitesyncPolicy from './sitesync.policy.js';
export * as syncPolicy from './sync.policy.js';
export * from './project-readers.policy.js';
