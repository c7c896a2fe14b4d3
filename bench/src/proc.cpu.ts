/**
 * CPU time (and resident memory) by process, read from `/proc` (Linux): what each part of the stack spends while a bench
 * phase runs. A group is either named process ids (a service, the bench client) or every process
 * whose command name matches (`postgres` backends, `nats-server`), so that a backend opened during
 * the phase counts whole and one that exited is left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Stack } from '@reelbase/lib-testkit';

const TICK_MS = 10; // USER_HZ is 100 on Linux (getconf CLK_TCK)

/** The command name of a process and the fields of its `/proc/<pid>/stat` after it (fields[0] is field 3, the state), or undefined once it is gone. */
function statOf(pid: number): { comm: string; fields: string[] } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
  } catch {
    return undefined;
  }
}

/**
 * CPU ms a process has used: utime + stime (fields 14 and 15), and with `children` also those of
 * the children it reaped (cutime, cstime: 16 and 17, e.g. the tools it ran); undefined once it is gone.
 */
export function processCpuMs(pid: number, children = false): number | undefined {
  const s = statOf(pid);
  if (!s) return undefined;
  const f = s.fields.map(Number);
  return (f[11]! + f[12]! + (children ? f[13]! + f[14]! : 0)) * TICK_MS;
}

/** VmRSS of a process in KiB (0 when it is gone). */
export function rssKiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** utime + stime of one process in ms with its command name, or undefined once it is gone. */
function cpuMs(pid: number): { comm: string; ms: number } | undefined {
  const s = statOf(pid);
  return s && { comm: s.comm, ms: (Number(s.fields[11]) + Number(s.fields[12])) * TICK_MS };
}

export interface CpuGroups {
  /** Groups of named processes: name → process ids (undefined ids are skipped). */
  pids: Record<string, Array<number | undefined>>;
  /** Groups of processes by command name: name → the `comm` to match. */
  comms: Record<string, string>;
}

export type CpuSnapshot = Map<string, Map<number, number>>;

/** Every service of `stack`, PostgreSQL's backends, nats-server, this process (the bench client), and `extra`. */
export function stackCpuGroups(stack: Pick<Stack, 'ports' | 'pid'>, extra: CpuGroups['pids'] = {}): CpuGroups {
  return {
    pids: { ...Object.fromEntries(Object.keys(stack.ports).map((name) => [name, [stack.pid(name)]])), ...extra, 'bench client': [process.pid] },
    comms: { postgres: 'postgres', 'nats-server': 'nats-server' },
  };
}

export function cpuSnapshot(groups: CpuGroups): CpuSnapshot {
  const snap: CpuSnapshot = new Map();
  for (const [name, pids] of Object.entries(groups.pids)) {
    const m = new Map<number, number>();
    for (const pid of pids) {
      const c = pid === undefined ? undefined : cpuMs(pid);
      if (c) m.set(pid!, c.ms);
    }
    snap.set(name, m);
  }
  const byComm = new Map(Object.entries(groups.comms).map(([name, comm]) => [comm, name]));
  for (const name of Object.keys(groups.comms)) snap.set(name, new Map());
  if (byComm.size) {
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      const c = cpuMs(pid);
      const name = c && byComm.get(c.comm);
      if (name) snap.get(name)!.set(pid, c.ms);
    }
  }
  return snap;
}

/** CPU ms spent per group between two snapshots (a process new in `after` counts from 0). */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, procs] of after) {
    let ms = 0;
    for (const [pid, t] of procs) ms += t - (before.get(name)?.get(pid) ?? 0);
    out.set(name, ms);
  }
  return out;
}

/** The whole machine's CPU time so far, in ticks: busy (everything but idle and iowait) and total. */
export function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const total = t.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - t[3]! - t[4]!, total };
}

/** What a phase cost the machine: how busy its CPUs were, and CPU ms per operation by process. */
export interface PhaseCpu {
  busyPercent: number;
  perOpMs: Record<string, number>;
}

/** Starts counting; `end(ops)` gives the phase's {@link PhaseCpu}. */
export function countPhaseCpu(groups: CpuGroups): { end(ops: number): PhaseCpu } {
  const m0 = machineTicks();
  const c0 = cpuSnapshot(groups);
  return {
    end(ops) {
      const m1 = machineTicks();
      const perOpMs: Record<string, number> = {};
      for (const [name, ms] of cpuBetween(c0, cpuSnapshot(groups))) if (ms > 0 && ops > 0) perOpMs[name] = Math.round((ms / ops) * 100) / 100;
      const total = m1.total - m0.total;
      return { busyPercent: total > 0 ? Math.round(((m1.busy - m0.busy) / total) * 1000) / 10 : 0, perOpMs };
    },
  };
}
