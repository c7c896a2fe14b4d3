/** The farm module: render jobs, their chunks and the leases agents hold on them (docs/farm.md). */
export { FarmService } from './domain/farm.service.js';
export { newLease } from './domain/farm.rules.js';
export { FarmRepository, openFarmPool } from './store/farm.repository.js';
export { FARM_SERVICE_NAME, farmHandlers } from './grpc/farm.handler.js';
export { readFarmDepth } from './store/farm.depth.js';
