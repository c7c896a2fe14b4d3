/**
 * grpc.health.v1 for every gRPC service, so Kubernetes gRPC probes and clients can ask
 * whether a service (or the server as a whole, service "") is serving.
 */
import { status, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import { healthv1 } from '@reelbase/proto';

const { HealthCheckResponse_ServingStatus: Serving } = healthv1;
type ServingStatus = healthv1.HealthCheckResponse_ServingStatus;

export class HealthService {
  private readonly statuses = new Map<string, ServingStatus>([['', Serving.SERVING]]);
  private readonly watchers = new Set<{ service: string; call: ServerWritableStream<healthv1.HealthCheckRequest, healthv1.HealthCheckResponse> }>();

  /** Sets the status of `service` ('' is the whole server) and tells watchers. */
  set(service: string, serving: boolean): void {
    const s = serving ? Serving.SERVING : Serving.NOT_SERVING;
    this.statuses.set(service, s);
    for (const w of this.watchers) if (w.service === service) w.call.write({ status: s });
  }

  /** Marks every service not serving (first step of a graceful stop). */
  stopAll(): void {
    for (const name of this.statuses.keys()) this.set(name, false);
  }

  /** The handlers to register with `server.addService(healthv1.HealthService, ...)`. */
  readonly implementation: healthv1.HealthServer = {
    check: (call: ServerUnaryCall<healthv1.HealthCheckRequest, healthv1.HealthCheckResponse>, cb: sendUnaryData<healthv1.HealthCheckResponse>) => {
      const s = this.statuses.get(call.request.service);
      if (s === undefined) return cb({ code: status.NOT_FOUND, details: `unknown service ${call.request.service}` });
      cb(null, { status: s });
    },
    watch: (call: ServerWritableStream<healthv1.HealthCheckRequest, healthv1.HealthCheckResponse>) => {
      const entry = { service: call.request.service, call };
      this.watchers.add(entry);
      call.write({ status: this.statuses.get(call.request.service) ?? Serving.SERVICE_UNKNOWN });
      call.on('cancelled', () => this.watchers.delete(entry));
      call.on('close', () => this.watchers.delete(entry));
    },
  };
}
