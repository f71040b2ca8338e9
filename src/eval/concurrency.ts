import { availableParallelism, totalmem } from 'node:os';
import { DEFAULT_LIMITS } from '../sandbox/types.js';

/** Containers one instance runs at once: base and head side by side, with the baseline beside them. */
export const CONTAINERS_PER_INSTANCE = 3;

/**
 * Instances at once when the user names no number: no more than the cores, and no more than
 * memory holds at the per-run memory limit for every container an instance runs at once. Pure.
 */
export function defaultConcurrency(machine: { cpus: number; memoryBytes: number }, memoryPerRunBytes: number = DEFAULT_LIMITS.memoryBytes): number {
  const byMemory = Math.floor(machine.memoryBytes / (CONTAINERS_PER_INSTANCE * memoryPerRunBytes));
  return Math.max(1, Math.min(machine.cpus, byMemory));
}

export function thisMachine(): { cpus: number; memoryBytes: number } {
  return { cpus: availableParallelism(), memoryBytes: totalmem() };
}
