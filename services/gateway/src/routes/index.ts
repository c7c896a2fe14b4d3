/**
 * Every route group of the API, in mounting order (specific paths before parameterised
 * ones that could shadow them).
 */
import type { AnyRoute } from '../http/route.js';
import { actionRoutes } from './actions.routes.js';
import { addonRoutes } from './addons.routes.js';
import { authRoutes } from './auth.routes.js';
import { entityRoutes } from './entities.routes.js';
import { eventRoutes } from './events.routes.js';
import { farmRoutes } from './farm.routes.js';
import { mediaRoutes } from './media.routes.js';
import { noteRoutes } from './notes.routes.js';
import { notifierRoutes } from './notifier.routes.js';
import { opsRoutes } from './ops.routes.js';
import { pipelineRoutes } from './pipeline.routes.js';
import type { RouteDeps } from './route.deps.js';
import { schemaRoutes } from './schema.routes.js';
import { shareRoutes } from './share.routes.js';
import { siteSyncRoutes } from './sitesync.routes.js';
import { syncRoutes } from './sync.routes.js';
import { userRoutes } from './users.routes.js';

export type { RouteDeps } from './route.deps.js';

const GROUPS: ReadonlyArray<(deps: RouteDeps) => AnyRoute[]> = [
  opsRoutes,
  authRoutes,
  eventRoutes,
  schemaRoutes,
  pipelineRoutes,
  entityRoutes,
  noteRoutes,
  userRoutes,
  shareRoutes,
  mediaRoutes,
  notifierRoutes,
  actionRoutes,
  addonRoutes,
  farmRoutes,
  siteSyncRoutes,
  syncRoutes,
];

/** All routes, built for `deps`. */
export function allRoutes(deps: RouteDeps): AnyRoute[] {
  return GROUPS.flatMap((group) => group(deps));
}
