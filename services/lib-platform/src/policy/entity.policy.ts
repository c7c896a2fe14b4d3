/**
 * The bounds of the record routes besides single writes (docs/api-notes.md, "Records", "Batches"
 * and "Summaries"; docs/queries.md), written once: the gateway validates and documents queries,
 * batches and summaries with them, and records checks what it is given against the same.
 */

/** Records per page of a query: by default, and at most. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** Sort keys of a query. */
export const MAX_ORDER_KEYS = 8;
/** Requests of one batch. */
export const BATCH_MAX = 500;
/** What a summary computes, and how its records are grouped. */
export const SUMMARY_TYPES = ['record_count', 'count', 'sum', 'average', 'minimum', 'maximum', 'earliest', 'latest', 'status_list', 'percentage'] as const;
export const GROUPING_TYPES = ['exact', 'day', 'week', 'month', 'year'] as const;
/** Grouping levels and summary fields of one summary. */
export const MAX_GROUPING = 3;
export const MAX_SUMMARY_FIELDS = 50;
