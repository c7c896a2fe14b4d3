/**
 * Early collection of the Buffers a byte stream leaves behind (docs/media.md, "Memory").
 *
 * Every byte a service streams (a reviewable upload, a media read) passes through Buffers that
 * node's sockets, HTTP/2 and grpc-js allocate and drop within milliseconds. V8 frees a Buffer's
 * memory only when it collects the Buffer's small JS object, and a stream allocates so little
 * JS beside its bytes that the young generation hardly fills: the Buffers pile up until their own
 * memory passes V8's external-memory limit (64 MiB above what the last full collection left),
 * which starts a full collection. At 25 MiB/s that is a full collection every few hundred
 * milliseconds and a process 75-100 MiB larger than it needs to be.
 *
 * A young-generation collection (a scavenge: about a millisecond, it copies only the few live
 * young objects) frees all of those Buffers at once. `streamed(n)` counts the bytes streamed in
 * this process and asks V8 for one after every `everyBytes`, so the garbage never reaches the
 * limit. It needs the `gc` function that `--expose-gc` installs, which is how the services are
 * started (docs/operations.md, "Processes"); without it, it does nothing and V8 keeps its own
 * schedule.
 */

/** The `gc` function `--expose-gc` installs (node's options object form). */
type GcFunction = (options: { type: 'minor' | 'major'; execution: 'sync' | 'async' }) => unknown;

/** Bytes streamed between two young-generation collections (see the module comment). */
export const STREAM_GC_EVERY_BYTES = 8 * 1024 * 1024;

export class StreamGc {
  private since = 0;
  private runs = 0;

  constructor(
    private readonly gc: GcFunction | undefined,
    readonly everyBytes = STREAM_GC_EVERY_BYTES,
  ) {}

  /** Whether collections are asked for at all (false without `--expose-gc`). */
  get enabled(): boolean {
    return this.gc !== undefined;
  }

  /** How many collections were asked for so far. */
  get collections(): number {
    return this.runs;
  }

  /** Counts `n` bytes streamed; every `everyBytes` of them, collects the young generation. */
  streamed(n: number): void {
    if (!this.gc) return;
    this.since += n;
    if (this.since < this.everyBytes) return;
    this.since = 0;
    this.runs++;
    this.gc({ type: 'minor', execution: 'sync' });
  }
}

/** The process's counter: every stream of the process counts into it. */
export const streamGc = new StreamGc((globalThis as { gc?: GcFunction }).gc);
