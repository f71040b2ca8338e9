import { readFileSync } from 'node:fs';

/**
 * Whether a process of this host is alive. A pid alone can be reused (a worker restarted in a
 * container is pid 1 again), so an owner is named by its pid and its start time together.
 */

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat); undefined where there is no /proc. */
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** This process's start time, read once. */
export const OWN_START_TICKS = processStartTicks(process.pid);

/** The process that owned something is gone: its pid is dead, or now belongs to a process started at another time. */
export function ownerGone(pid: number, startTicks: string | undefined): boolean {
  if (!pidAlive(pid)) return true;
  if (!startTicks) return false;
  const now = processStartTicks(pid);
  return now !== undefined && now !== startTicks;
}
