/**
 * The reelbase client for pipeline tools (see README.md): `new Reelbase({ url, apiKey })`.
 */
export { Reelbase } from './reelbase.client.js';
export type {
  BatchRequest,
  EventsOptions,
  Filters,
  FindOptions,
  Grouping,
  Order,
  QueryPage,
  RawAnswer,
  RawOptions,
  ReelbaseOptions,
  Summary,
  SummaryField,
  SummaryGroup,
  UpdateOptions,
  UploadOptions,
  WriteOptions,
} from './client.options.js';
export {
  AuthenticationError,
  BadRequest,
  Conflict,
  ConnectionError,
  NotFound,
  PayloadTooLarge,
  PermissionDenied,
  RateLimited,
  ReelbaseError,
  ServerError,
  TimeoutError,
  ValidationError,
  type Problem,
} from './errors.js';
export { DEFAULT_RETRY, type RetryOptions } from './retry.policy.js';
export type * from './types.js';
