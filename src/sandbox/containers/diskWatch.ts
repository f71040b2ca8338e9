import { opendir, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { logger } from '../../util/logger.js';
import { errorLine } from '../../util/errors.js';
import { isNotFound, type Docker } from '../docker.js';
import { containerLabels, inodeLimit, lockedHostConfig, type DiskLimitReason } from './limits.js';
import type { ResourceLimits } from '../types.js';

/**
 * Disk limits. Where the storage driver takes a writable-layer size (overlay2 on xfs with pquota,
 * btrfs, zfs) the container gets one, and /tmp is a tmpfs with a size and a number of inodes; the
 * rest of the writable layer (/testbed, home) is watched: a watchdog counts the files the container
 * created and reads the size of its writable layer (`inspect --size`), and kills the container once
 * either passes its limit, so the run ends as "disk limit" and the engine's disk survives.
 *
 * Counting files is cheap: the engine's filesystem's used inodes (one statfs) bound what the
 * container created since it started; only when that bound passes the limit are the entries of the
 * container's writable layer counted (stopping at the limit). This needs the engine's storage on
 * this host (a local engine, overlay2); elsewhere the size alone is watched.
 */

export type { DiskLimitReason };

export interface DiskWatch {
  /**
   * Stops watching; true when the limit was passed (and the container killed). `finalLook` (default
   * true) looks once more: a file stopped at the fsize limit between two looks still counts.
   */
  stop(finalLook?: boolean): Promise<DiskWatchResult>;
}

export interface DiskWatchResult {
  exceeded: boolean;
  /** What passed its limit: the bytes written or the files created. */
  reason?: DiskLimitReason;
  peakBytes: number;
  /** Files created (an upper bound until it nears the limit); 0 where files are not counted. */
  peakInodes: number;
}

export interface DiskWatchOptions {
  limitBytes: number;
  /** Files the container may create (see inodeLimit); none: not counted. */
  limitInodes?: number;
  /** Called once when a limit is passed (kill the container). */
  onExceeded: (reason: DiskLimitReason) => Promise<unknown>;
  /** Bytes written elsewhere that count too (an install's growth of the package cache). */
  extraBytes?: () => Promise<number>;
  /** Shortest pause between two looks; the pause grows with what a look costs. */
  minIntervalMs?: number;
}

export function watchDisk(docker: Docker, id: string, opts: DiskWatchOptions): DiskWatch {
  const minPause = opts.minIntervalMs ?? 500;
  const peak = { bytes: 0, inodes: 0 };
  const look = diskLook(docker, id, opts, peak);
  let stopped = false;
  let reason: DiskLimitReason | undefined;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  // stop() clears the timer and wakes the loop at once; unref: a watchdog alone never keeps the process alive.
  const pause = (ms: number) =>
    new Promise<void>((r) => {
      wake = r;
      timer = setTimeout(r, ms);
      timer.unref();
    });
  const loop = (async () => {
    // A pause before the first look too: a short run (most test runs) pays only the final look.
    await pause(minPause);
    while (!stopped) {
      const t0 = Date.now();
      const passed = await look();
      if (passed === 'gone' || stopped) return;
      if (passed) {
        reason = passed;
        await opts.onExceeded(passed);
        return;
      }
      await pause(Math.max(minPause, 4 * (Date.now() - t0)));
    }
  })();
  let result: Promise<DiskWatchResult> | undefined;
  return {
    stop(finalLook = true) {
      return (result ??= (async () => {
        stopped = true;
        clearTimeout(timer);
        wake?.();
        await loop;
        if (!reason && finalLook) {
          const passed = await look();
          if (passed === 'bytes' || passed === 'inodes') reason = passed;
        }
        return { exceeded: !!reason, ...(reason ? { reason } : {}), peakBytes: peak.bytes, peakInodes: peak.inodes };
      })());
    },
  };
}

/** watchDisk at a run's (or an install's) disk and file limits. */
export function watchLimits(docker: Docker, id: string, limits: ResourceLimits, opts: Omit<DiskWatchOptions, 'limitBytes' | 'limitInodes'>): DiskWatch {
  return watchDisk(docker, id, { limitBytes: limits.diskBytes, limitInodes: inodeLimit(limits), ...opts });
}

/** One look: the limit passed now, 'gone' once the container is, undefined when the engine did not answer; peaks recorded. */
function diskLook(docker: Docker, id: string, opts: DiskWatchOptions, peak: { bytes: number; inodes: number }) {
  const container = docker.getContainer(id);
  const files = opts.limitInodes ? fileCounter(docker, id, opts.limitInodes) : undefined;
  return async (): Promise<DiskLimitReason | false | 'gone' | undefined> => {
    try {
      // Files first: a flood of them makes the size look below slow.
      const created = await (await files)?.look();
      if (created !== undefined) {
        peak.inodes = Math.max(peak.inodes, created);
        if (created >= opts.limitInodes!) return 'inodes';
      }
      const info = (await container.inspect({ size: true } as object)) as { SizeRw?: number };
      const used = (info.SizeRw ?? 0) + (opts.extraBytes ? await opts.extraBytes() : 0);
      peak.bytes = Math.max(peak.bytes, used);
      return used >= opts.limitBytes ? 'bytes' : false;
    } catch (e) {
      if (isNotFound(e)) return 'gone';
      logger.debug({ container: id, err: (e as Error).message }, 'disk watchdog: inspect failed');
      return undefined;
    }
  };
}

/** Files a container created since the counter started; undefined where its writable layer is not on this host. */
export interface FileCounter {
  /** At most the limit: an upper bound below it (one statfs), an exact count of the layer's entries past it. */
  look(): Promise<number>;
}

export async function fileCounter(docker: Docker, id: string, limit: number): Promise<FileCounter | undefined> {
  const upper = await upperDirOf(docker, id);
  if (!upper) return undefined;
  const used = async () => {
    const s = await statfs(upper);
    return s.files - s.ffree;
  };
  if ((await statfs(upper)).files === 0) return undefined;
  // Inodes in use on the engine's filesystem, less those not the container's.
  let base = await used();
  return {
    async look() {
      const now = await used();
      if (now - base < limit) return Math.max(0, now - base);
      const counted = await countEntries(upper, limit);
      // Others' files (other containers, the engine) need not be counted again until as many more appear.
      base = now - counted;
      return counted;
    },
  };
}

/** The container's writable layer (overlay2's upper dir), when it is on this host and readable. */
async function upperDirOf(docker: Docker, id: string): Promise<string | undefined> {
  try {
    const info = (await docker.getContainer(id).inspect()) as { GraphDriver?: { Name?: string; Data?: Record<string, string> | null } };
    const dir = info.GraphDriver?.Data?.UpperDir;
    if (!dir) return undefined;
    await (await opendir(dir)).close();
    return dir;
  } catch {
    return undefined;
  }
}

/** Entries under root (files, directories, links; not root itself), counted up to stopAt. */
export async function countEntries(root: string, stopAt: number): Promise<number> {
  let n = 0;
  const dirs = [root];
  while (dirs.length > 0 && n < stopAt) {
    const d = dirs.pop()!;
    let handle;
    try {
      handle = await opendir(d, { bufferSize: 1024 });
    } catch {
      continue;
    }
    for await (const e of handle) {
      n++;
      if (e.isDirectory()) dirs.push(join(d, e.name));
      if (n >= stopAt) break;
    }
  }
  return n;
}

const storageOptCache = new WeakMap<Docker, Promise<boolean>>();

/**
 * Whether the engine's storage driver accepts a writable-layer size. overlay2 does only on xfs
 * mounted with pquota, which `docker info` does not tell: then one container is created to ask.
 */
export function storageOptSupported(docker: Docker, image: string): Promise<boolean> {
  let p = storageOptCache.get(docker);
  if (!p) {
    p = probeStorageOpt(docker, image).catch(() => false);
    storageOptCache.set(docker, p);
  }
  return p;
}

async function probeStorageOpt(docker: Docker, image: string): Promise<boolean> {
  const info = (await docker.info()) as { Driver?: string; DriverStatus?: Array<[string, string]> };
  const backing = info.DriverStatus?.find(([k]) => k === 'Backing Filesystem')?.[1] ?? '';
  if (info.Driver === 'overlay2' && backing !== 'xfs') return false;
  if (info.Driver === 'vfs') return false;
  try {
    const c = await docker.createContainer({ Image: image, Cmd: ['true'], Labels: containerLabels('probe'), HostConfig: { ...lockedHostConfig('probe'), StorageOpt: { size: '1G' } } });
    await c.remove({ force: true }).catch(() => undefined);
    return true;
  } catch (e) {
    logger.info({ driver: info.Driver, err: errorLine(e) }, 'the storage driver takes no size limit: the disk watchdog alone limits disk use');
    return false;
  }
}
