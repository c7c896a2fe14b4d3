/**
 * Upload progress: on a terminal, one line redrawn in place with a bar, the rate and the time
 * left; elsewhere (a log, a pipe), a plain line every 10 % so logs stay readable.
 */
export interface ProgressSink {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export class ProgressBar {
  private readonly started: number;
  private lastDraw = 0;
  private lastDecile = -1;

  constructor(
    private readonly out: ProgressSink,
    private readonly label: string,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  /** The line for `sent` of `total` bytes. */
  line(sent: number, total: number): string {
    const elapsed = Math.max(0.001, (this.now() - this.started) / 1000);
    const rate = sent / elapsed;
    const left = rate > 0 ? (total - sent) / rate : Infinity;
    const pct = total > 0 ? Math.min(100, (100 * sent) / total) : 100;
    return `${this.label} ${pct.toFixed(0).padStart(3)}% ${formatBytes(sent)}/${formatBytes(total)} ${formatBytes(rate)}/s ${formatDuration(left)} left`;
  }

  update(sent: number, total: number): void {
    if (this.out.isTTY) {
      const t = this.now();
      if (t - this.lastDraw < 100 && sent < total) return;
      this.lastDraw = t;
      const text = this.line(sent, total);
      const width = Math.max(10, (this.out.columns ?? 80) - text.length - 3);
      const filled = total > 0 ? Math.round((width * sent) / total) : width;
      this.out.write(`\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${text}`);
      return;
    }
    const decile = total > 0 ? Math.floor((10 * sent) / total) : 10;
    if (decile === this.lastDecile) return;
    this.lastDecile = decile;
    this.out.write(`${this.line(sent, total)}\n`);
  }

  done(): void {
    if (this.out.isTTY) this.out.write('\n');
  }
}
