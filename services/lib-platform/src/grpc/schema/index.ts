/**
 * The schema service's groups (actions, addons, scheduler): REST JSON ↔ typed protobuf messages.
 */
export * as schedulerCodec from './scheduler.codec.js';
export * as actionsCodec from './actions.codec.js';
export * as addonsCodec from './addons.codec.js';
export { isJsonObject, type JsonObject } from './json.values.js';
