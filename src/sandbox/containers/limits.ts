import { hostname } from 'node:os';
import { OWN_START_TICKS } from '../../util/processes.js';
import { envValues, type Environment } from '../../settings/index.js';
import { SwtError } from '../../util/errors.js';
import { DEFAULT_LIMITS, type ResourceLimits } from '../types.js';

/** Resource limits → Docker HostConfig, and the labels every sandbox container carries. Pure. */

export function resolveLimits(base: ResourceLimits = DEFAULT_LIMITS, override: Partial<ResourceLimits> = {}): ResourceLimits {
  const out: ResourceLimits = { ...base };
  for (const [k, v] of Object.entries(override) as Array<[keyof ResourceLimits, number | undefined]>) {
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new SwtError('BAD_CONFIG', `limit ${k} must be a positive number, got ${String(v)}`);
    out[k] = v;
  }
  return out;
}

export interface HostConfigInput {
  /** Which container: the label's role, and the lockdown's (default 'run'). */
  role?: ContainerRole;
  limits: ResourceLimits;
  /** 'none' for tests and sessions; an install's own internal network (egress proxy only) while installing. */
  network: string;
  /** CPUs of the engine's host: NanoCpus may not exceed it. */
  engineCpus?: number;
  /** The storage driver takes a writable-layer size (overlay2 on xfs with pquota): set it too. */
  storageOpt?: boolean;
  /** Volumes to mount (the package cache, for installs only). */
  mounts?: Array<{ Type: 'volume'; Source: string; Target: string }>;
  /** The host CPUs containers may use (SWT_CPUSET_CPUS, e.g. `1-3`): the rest stay for the App itself. */
  cpuset?: string;
}

/**
 * SWT_CPUSET_CPUS: on a machine that runs the web process and the containers together, keeps the
 * containers off the cores listed elsewhere (`1-3` leaves core 0 to the webhook receiver).
 */
export function cpusetFromEnv(env?: Environment): string | undefined {
  return envValues(env).SWT_CPUSET_CPUS;
}

export interface LockedHostConfig {
  NetworkMode: string;
  CapDrop: string[];
  CapAdd?: string[];
  SecurityOpt: string[];
  Init: boolean;
  AutoRemove: boolean;
  LogConfig: { Type: string; Config: Record<string, string> };
}

export interface SandboxHostConfig extends LockedHostConfig {
  Ulimits: Array<{ Name: string; Soft: number; Hard: number }>;
  Tmpfs: Record<string, string>;
  StorageOpt?: Record<string, string>;
  Mounts?: Array<{ Type: 'volume'; Source: string; Target: string }>;
  PidsLimit: number;
  Memory: number;
  MemorySwap: number;
  NanoCpus: number;
  CpusetCpus?: string;
}

const MIN_MEMORY = 8 * 1024 ** 2;
// Within the engine's own hard limit (raising past it fails the start), and plenty for test runners.
export const NOFILE = 8192;

/**
 * Files (inodes) a container may create: one per 16 KiB of its disk limit (4 GiB: 262,144), so a
 * flood of empty files, which costs the engine's disk inodes but no bytes, ends as a disk limit too.
 */
export const BYTES_PER_INODE = 16 * 1024;
export function inodeLimit(limits: ResourceLimits): number {
  return Math.max(16_384, Math.floor(limits.diskBytes / BYTES_PER_INODE));
}

/** What passed its disk limit: the bytes written or the files created. */
export type DiskLimitReason = 'bytes' | 'inodes';

/** What a disk-limit kill says, e.g. `disk limit, wrote more than 256 MiB`. */
export function diskLimitText(limits: ResourceLimits, reason: DiskLimitReason = 'bytes'): string {
  return reason === 'inodes'
    ? `disk limit, created more than ${inodeLimit(limits)} files`
    : `disk limit, wrote more than ${Math.round(limits.diskBytes / 1024 ** 2)} MiB`;
}

/** Bytes for people: `512 MiB`, `3.9 GiB`, `812 KiB`. */
export function bytesText(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v < 10 ? v.toFixed(1).replace(/\.0$/, '') : Math.round(v)} ${units[i]}`;
}

/** What is copied into a container before its command: bytes of files, and files, links and directories created. */
export interface CopySize {
  bytes: number;
  files: number;
}

/**
 * Why a copy of `size` into a container with these limits is refused, or undefined when it fits.
 * What goes in counts against the same limits as what the command writes (the disk watchdog's:
 * reaching a limit is passing it), so a copy that reaches one leaves the command nothing.
 * `what` names the copy (`head's files`), `role` the container (`run`, `install`).
 */
export function copyRefusal(size: CopySize, limits: ResourceLimits, what: string, role = 'run'): string | undefined {
  if (size.bytes >= limits.diskBytes) {
    return `${what} to copy into the ${role} container are ${bytesText(size.bytes)} (${size.files} files and directories), over the ${role}'s disk limit of ${bytesText(limits.diskBytes)}`;
  }
  const files = inodeLimit(limits);
  if (size.files >= files) {
    return `${what} to copy into the ${role} container are ${size.files} files and directories, over the ${role}'s file limit of ${files} (one per 16 KiB of its ${bytesText(limits.diskBytes)} disk limit)`;
  }
  return undefined;
}

/** /tmp is a tmpfs (its pages count as the container's memory): half the memory, at most the disk limit. */
export function tmpSizeBytes(limits: ResourceLimits): number {
  return Math.max(16 * 1024 ** 2, Math.min(limits.diskBytes, Math.floor(Math.max(MIN_MEMORY, limits.memoryBytes) / 2)));
}

export function hostConfigFor(input: HostConfigInput): SandboxHostConfig {
  const { limits } = input;
  const cpus = Math.min(limits.cpus, input.engineCpus ?? limits.cpus);
  const memory = Math.max(MIN_MEMORY, Math.floor(limits.memoryBytes));
  const disk = Math.max(64 * 1024 ** 2, Math.floor(limits.diskBytes));
  return {
    ...lockedHostConfig(input.role ?? 'run', input.network),
    // fsize: no single file grows past the disk limit, even between two looks of the disk watchdog.
    Ulimits: [
      { Name: 'nofile', Soft: NOFILE, Hard: NOFILE },
      { Name: 'fsize', Soft: disk, Hard: disk },
    ],
    // Hard limits from the kernel: bytes and files (nr_inodes) on the tmpfs.
    Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${tmpSizeBytes(limits)},nr_inodes=${inodeLimit(limits)},mode=1777` },
    ...(input.storageOpt ? { StorageOpt: { size: String(disk) } } : {}),
    ...(input.mounts?.length ? { Mounts: input.mounts } : {}),
    PidsLimit: Math.max(8, Math.floor(limits.pids)),
    Memory: memory,
    // Same as Memory: no swap on top.
    MemorySwap: memory,
    NanoCpus: Math.max(10_000_000, Math.round(cpus * 1e9)),
    ...(input.cpuset ? { CpusetCpus: input.cpuset } : {}),
  };
}

export const LABEL = 'swt-bot';

export type ContainerRole = 'run' | 'session' | 'install' | 'egress-proxy' | 'cache-init' | 'cache-copy' | 'probe';

/** What a role needs back after every capability is dropped: giving a new cache volume to uid 1000, copying a cache across owners. */
const ROLE_CAPS: Partial<Record<ContainerRole, string[]>> = {
  'cache-init': ['CHOWN'],
  'cache-copy': ['CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER'],
};

/**
 * The lockdown of every container the product starts, whatever it runs: every capability dropped
 * (but the few its role needs), no privilege gain, docker-init as PID 1, a capped log, removal
 * ours; no network unless one is named. Resource limits come on top (hostConfigFor, or the role's own).
 */
export function lockedHostConfig(role: ContainerRole, network = 'none'): LockedHostConfig {
  const caps = ROLE_CAPS[role];
  return {
    NetworkMode: network,
    CapDrop: ['ALL'],
    ...(caps ? { CapAdd: caps } : {}),
    SecurityOpt: ['no-new-privileges'],
    // docker-init as PID 1 reaps zombies (killed exec trees, fork loops).
    Init: true,
    // Removal is ours (in a finally), after outputs are collected.
    AutoRemove: false,
    LogConfig: { Type: 'json-file', Config: { 'max-size': '8m', 'max-file': '1' } },
  };
}

export function containerLabels(role: ContainerRole, pid = process.pid, host = hostname(), started: string | undefined = pid === process.pid ? OWN_START_TICKS : undefined): Record<string, string> {
  const labels: Record<string, string> = { [LABEL]: '1', [`${LABEL}.pid`]: String(pid), [`${LABEL}.host`]: host, [`${LABEL}.role`]: role };
  // With the pid, the owner's start time names one process even after the pid is reused.
  if (started) labels[`${LABEL}.started`] = started;
  return labels;
}
