/** The shares module: share links of playlists and what a guest does through one (docs/review.md). */
export { ShareLinks } from './domain/share.links.js';
export { SharePasswords } from './domain/share.secrets.js';
export { KnexShareLinkStore } from './store/share.store.js';
export { shareLinkHandlers } from './grpc/shares.handler.js';
