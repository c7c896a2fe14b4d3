/**
 * The gateway package: start it in-process (tests, the local stack) or build its app.
 */
export { startGateway, type GatewayAdapters, type RunningGateway } from './service.js';
export { createApp, API_VERSION, type AppDeps } from './app.js';
export { gatewayConfigShape, loadGatewayConfig, parseGatewayConfig, type GatewayConfig } from './config.js';
export type { Peers } from './clients/peers.js';
export type { GatewayBus, LiveItem, Revocation } from './live/gateway.bus.js';
