/** The sync module: imports from another tracker and the mappings they keep (docs/api-notes.md, "Sync"). */
export { SyncImporter, type SyncImportAnswer } from './domain/sync.import.js';
export { SyncReads } from './domain/sync.reads.js';
export type { SyncStore, SyncTransaction } from './domain/sync.ports.js';
export { SyncRepository } from './store/sync.repository.js';
export { SYNC_SERVICE_NAME, syncHandlers } from './grpc/sync.handler.js';
