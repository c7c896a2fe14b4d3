export * from './background.js';
export * from './resource.stack.js';
export * from './shutdown.js';
export * from './run.service.js';
export * from './fault.switch.js';
