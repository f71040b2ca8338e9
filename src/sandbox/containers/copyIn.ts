import type { Readable } from 'node:stream';
import { SwtError } from '../../util/errors.js';
import { overlayTar, planSize, type GitRepo, type PlanSize } from '../../repo/git.js';
import type { OverlayPlan } from '../../repo/overlay.js';
import type { Docker } from '../docker.js';
import { copyRefusal } from './limits.js';
import { onInterrupt } from './liveContainers.js';
import type { ResourceLimits } from '../types.js';

/**
 * What enters a container counts against its limits before it is copied: a plan's size comes from
 * git's object sizes (nothing read, nothing checked out) and a plan over the disk or file limit is
 * refused before any container exists. The copy itself runs under the run's time limit and the
 * caller's signal, and a blob streams through it.
 */

/** Refuses (STATE_TOO_LARGE) plans that would not fit these limits together; their size otherwise. */
export async function admitCopy(
  repo: GitRepo,
  plans: OverlayPlan[],
  o: { env?: Record<string, string>; limits: ResourceLimits; what: string; role?: string },
): Promise<PlanSize> {
  const size: PlanSize = { bytes: 0, files: 0 };
  for (const p of plans) {
    const s = await planSize(repo, p, o.env ?? {});
    size.bytes += s.bytes;
    size.files += s.files;
  }
  const why = copyRefusal(size, o.limits, o.what, o.role);
  if (why) throw new SwtError('STATE_TOO_LARGE', why, { hint: 'nothing was copied and no container was started; a smaller state, or a higher disk limit (`disk_mib` in .github/swt.yml, up to the operator\'s SWT_MAX_DISK_MIB)' });
  return size;
}

/**
 * Puts a plan's files into the container at `path`: ended (the archive and git destroyed, the
 * request aborted) when `timeoutMs` passes (STATE_TOO_LARGE) or `signal` aborts (its reason).
 */
export async function copyPlan(
  container: Docker.Container,
  repo: GitRepo,
  plan: OverlayPlan,
  o: { path: string; env?: Record<string, string>; prefix?: string; timeoutMs: number; signal?: AbortSignal; what: string },
): Promise<void> {
  const tar = overlayTar(repo, plan, { ...(o.env ? { env: o.env } : {}), ...(o.prefix ? { prefix: o.prefix } : {}) });
  await copyTar(container, tar, o);
}

/** An overlay's archive read into memory ahead of the exec that brings it in (PreparedContainer.fillAhead). */
export interface OverlayAhead {
  /** The whole archive; rejects when git could not give a blob or the read was cancelled. */
  archive: Promise<Buffer>;
  /** Ends the read (git with it) when nobody will take the archive. */
  cancel(): void;
}

/**
 * The most an overlay read ahead may hold: a test patch and a fix are kilobytes, and a bigger
 * overlay streams in as it is read instead of waiting in memory.
 */
export const OVERLAY_AHEAD_MAX_BYTES = 4 * 1024 ** 2;

/**
 * Reads a plan's archive while the container is taken, so the first command's tar never waits
 * for git's start and read (~4 ms alone, 20-30 ms beside a validation's other work): that command
 * reaches a waiting process in ~5 ms (firstCommand.ts), where an exec's start (60-80 ms) hid it.
 */
export function overlayAhead(repo: GitRepo, plan: OverlayPlan, env: Record<string, string>): OverlayAhead {
  const tar = overlayTar(repo, plan, { env });
  const forget = onInterrupt(() => tar.destroy(new Error('the process is stopping')));
  const archive = new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    tar.on('data', (b: Buffer) => parts.push(b));
    tar.once('end', () => resolve(wholeRecords(Buffer.concat(parts))));
    tar.once('error', reject);
    tar.once('close', () => reject(new Error('the overlay read was cancelled')));
  }).finally(forget);
  // Nobody may take it (the container was not needed): its failure is then nobody's.
  archive.catch(() => undefined);
  return { archive, cancel: () => tar.destroy() };
}

/** tar's record (20 blocks of 512 bytes): reading a pipe, GNU tar waits for a whole one, or for the end of the input. */
const TAR_RECORD = 10_240;

/** The archive padded with zeros to whole records: the exec's tar is done at the end-of-archive blocks, not once stdin closes. */
function wholeRecords(archive: Buffer): Buffer {
  const short = archive.length % TAR_RECORD;
  return short ? Buffer.concat([archive, Buffer.alloc(TAR_RECORD - short)]) : archive;
}

/** Puts a tar stream into the container under a deadline and a signal; the stream is destroyed on any failure. */
export async function copyTar(container: Docker.Container, tar: Readable, o: { path: string; timeoutMs: number; signal?: AbortSignal; what: string }): Promise<void> {
  const stop = new AbortController();
  let why: Error | undefined;
  const end = (e: Error) => {
    why ??= e;
    stop.abort(e);
    tar.destroy(e);
  };
  const timer = setTimeout(() => end(new SwtError('STATE_TOO_LARGE', `copying ${o.what} into the container took longer than the run's time limit of ${Math.round(o.timeoutMs / 1000)} s`)), o.timeoutMs);
  const onAbort = () => end(o.signal?.reason instanceof Error ? o.signal.reason : new Error('the copy was cancelled'));
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  // A blob git could not give (or git killed): the archive is broken, the request must not wait for more.
  tar.once('error', (e: Error) => end(e));
  const forget = onInterrupt(() => end(new Error('the process is stopping')));
  try {
    if (why) throw why;
    await container.putArchive(tar as unknown as NodeJS.ReadableStream, { path: o.path, abortSignal: stop.signal } as { path: string });
    if (why) throw why;
  } catch (e) {
    tar.destroy();
    throw why ?? e;
  } finally {
    clearTimeout(timer);
    forget();
    o.signal?.removeEventListener('abort', onAbort);
  }
}
