/**
 * The auth service package: start it in-process (tests, local stack) or run dist/main.js.
 */
export { startAuth, type RunningAuth } from './service.js';
export { authConfigShape, parseAuthConfig, loadAuthConfig, type AuthConfig } from './config.js';
export { AUTH_SERVICE_NAME } from './grpc/auth.handler.js';
