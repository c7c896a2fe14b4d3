/** The site sync module: sites and the copy of each representation at each site (docs/sitesync.md). */
export { SiteSync } from './domain/sitesync.service.js';
export { KnexSiteSyncStore } from './store/sitesync.store.js';
export { SITESYNC_SERVICE_NAME, siteSyncHandlers } from './grpc/sitesync.handler.js';
export { readSiteSyncDepth } from './store/sitesync.depth.js';
