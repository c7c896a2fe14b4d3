/**
 * The bounds of a sync import (docs/api-notes.md, "Sync"), written once: the gateway validates
 * and documents `POST /sync/import` with them, and records checks the body again with the same.
 */

/** A source name: what the other tracker is called in mappings. */
export const SYNC_SOURCE = /^[a-z0-9_-]{1,32}$/;
/** Items per import. */
export const SYNC_MAX_ITEMS = 1000;
/** Longest external id. */
export const SYNC_MAX_EXTERNAL_ID = 255;
