/**
 * media-transcode: reviewable uploads, their thumbnails and proxies, and media reads by key.
 * Two roles: the api (`startMediaApi`, dist/main.js) and the worker (`startMediaWorker`, dist/worker.main.js).
 */
export { startMediaApi, type RunningMediaApi } from './service.js';
export { startMediaWorker, type RunningMediaWorker } from './worker.service.js';
export {
  mediaApiConfigShape,
  mediaWorkerConfigShape,
  parseMediaApiConfig,
  parseMediaWorkerConfig,
  loadMediaApiConfig,
  loadMediaWorkerConfig,
  type MediaApiConfig,
  type MediaWorkerConfig,
} from './config.js';
export { MEDIA_SERVICE_NAME } from './grpc/media.handler.js';
// The exact commands a job runs, for the benchmarks that time them raw against the service.
export { proxyArgs, thumbnailArgs, type PlanLimits } from './domain/transcode.plan.js';
export { interpretProbe, type ProbedSource } from './domain/probe.rules.js';
export { probeFile, runTool } from './transcode/ffmpeg.runner.js';
