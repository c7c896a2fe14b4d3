export * from './outbox.table.js';
export * from './relay.session.js';
export * from './outbox.relay.js';
