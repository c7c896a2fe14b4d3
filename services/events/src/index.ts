/**
 * The events service: the persistent event log fed from the EVENTS stream, with replay.
 */
export { startEvents, type RunningEvents } from './service.js';
export { eventsConfigShape, parseEventsConfig, loadEventsConfig, type EventsConfig } from './config.js';
export { EVENTS_SERVICE_NAME } from './grpc/events.handler.js';
