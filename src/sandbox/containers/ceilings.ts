import { envValues, type Environment } from '../../settings/index.js';
import type { ResourceLimits } from '../types.js';

/**
 * The operator's ceilings: no run, session or repository config gets more than these, whatever it
 * asks for. Set with SWT_MAX_* variables; a request above one is capped, and the cap is reported. Pure.
 */

type LimitName = keyof ResourceLimits;

interface CeilingSpec {
  variable: 'SWT_MAX_TIMEOUT_SECONDS' | 'SWT_MAX_MEMORY_MIB' | 'SWT_MAX_PIDS' | 'SWT_MAX_CPUS' | 'SWT_MAX_DISK_MIB' | 'SWT_MAX_OUTPUT_BYTES';
  /** Unit of the variable and of messages. */
  unit: 's' | 'MiB' | 'bytes' | '';
  /** Variable value → limit value. */
  scale: number;
}

export const CEILINGS: Record<LimitName, CeilingSpec> = {
  timeoutMs: { variable: 'SWT_MAX_TIMEOUT_SECONDS', unit: 's', scale: 1000 },
  memoryBytes: { variable: 'SWT_MAX_MEMORY_MIB', unit: 'MiB', scale: 1024 ** 2 },
  pids: { variable: 'SWT_MAX_PIDS', unit: '', scale: 1 },
  cpus: { variable: 'SWT_MAX_CPUS', unit: '', scale: 1 },
  diskBytes: { variable: 'SWT_MAX_DISK_MIB', unit: 'MiB', scale: 1024 ** 2 },
  outputBytes: { variable: 'SWT_MAX_OUTPUT_BYTES', unit: 'bytes', scale: 1 },
};

const NAMES = Object.keys(CEILINGS) as LimitName[];


/** The ceilings from SWT_MAX_* (unset ones keep their defaults); a bad value is BAD_CONFIG. */
export function ceilingsFromEnv(env?: Environment): ResourceLimits {
  const values = envValues(env);
  return Object.fromEntries(NAMES.map((n) => [n, values[CEILINGS[n].variable] * CEILINGS[n].scale])) as unknown as ResourceLimits;
}

/** The ceilings when no SWT_MAX_* is set (settings/variables.ts holds the defaults). */
export const DEFAULT_CEILINGS: ResourceLimits = ceilingsFromEnv({});

export interface CappedLimit {
  limit: LimitName;
  /** In the variable's unit (seconds, MiB, …), as a person reads it. */
  requested: number;
  ceiling: number;
  unit: string;
  variable: string;
}

const inUnit = (name: LimitName, v: number) => Math.round((v / CEILINGS[name].scale) * 100) / 100;

/** Requested limits with every value above its ceiling lowered to it, and a note for each. */
export function capLimits(requested: Partial<ResourceLimits>, ceilings: ResourceLimits): { limits: Partial<ResourceLimits>; capped: CappedLimit[] } {
  const limits: Partial<ResourceLimits> = { ...requested };
  const capped: CappedLimit[] = [];
  for (const name of NAMES) {
    const v = requested[name];
    if (v === undefined || v <= ceilings[name]) continue;
    limits[name] = ceilings[name];
    capped.push({ limit: name, requested: inUnit(name, v), ceiling: inUnit(name, ceilings[name]), unit: CEILINGS[name].unit, variable: CEILINGS[name].variable });
  }
  return { limits, capped };
}

/** Every limit at most its ceiling (the sandbox's own guard, whatever the caller passed). */
export function clampLimits(limits: ResourceLimits, ceilings: ResourceLimits): ResourceLimits {
  const out = { ...limits };
  for (const name of NAMES) out[name] = Math.min(limits[name], ceilings[name]);
  return out;
}

const LABELS: Record<LimitName, string> = {
  timeoutMs: 'timeout',
  memoryBytes: 'memory',
  pids: 'pids',
  cpus: 'CPUs',
  diskBytes: 'disk',
  outputBytes: 'output',
};

/** "timeout 36000 s capped at 1800 s (SWT_MAX_TIMEOUT_SECONDS)". */
export function describeCap(c: CappedLimit): string {
  const u = c.unit ? ` ${c.unit}` : '';
  return `${LABELS[c.limit]} ${c.requested}${u} capped at ${c.ceiling}${u} (${c.variable})`;
}
