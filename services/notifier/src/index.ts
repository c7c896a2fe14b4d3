/**
 * The notifier: notifications for users and outbound webhook and chat deliveries, fed from the event log.
 */
export { startNotifier, type RunningNotifier } from './service.js';
export { notifierConfigShape, parseNotifierConfig, loadNotifierConfig, type NotifierConfig } from './config.js';
export { NOTIFIER_SERVICE_NAME } from './grpc/notifier.handler.js';
