import { SwtError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { demux, outputAfterExit, TailBuffer, untilDeadline } from '../containers/containerIo.js';
import { watchLimits, type DiskWatchResult } from '../containers/diskWatch.js';
import { killNow, type Docker } from '../docker.js';
import { diskLimitText } from '../containers/limits.js';
import { haltIfInterrupted } from '../containers/liveContainers.js';
import { NO_SAVED_INSTALL } from './savedInstall.js';
import { CACHE_MOUNT } from './packageCache.js';
import type { ResourceLimits } from '../types.js';

/** The install (or warm-up) in its started container: output logged, disk and time watched, a failure explained. */

const INSTALL_LOG_LINES = 25;

/** A restore-only build found no saved install of its key. */
export class NoSavedInstall extends Error {}

export interface InstallRun {
  limits: ResourceLimits;
  install: string;
  /** The package cache volume mounted (its growth counts against the disk limit). */
  volume?: string;
  /** The state is patched: the script puts the tracked files back after the install (exit 70 when that fails). */
  patched: boolean;
  restoreOnly?: boolean;
  warmAfter?: string;
  onProgress?: (m: string) => void;
}

export async function runInstall(deps: { docker: Docker; log: Logger; egressHosts: string[] }, container: Docker.Container, run: InstallRun): Promise<void> {
  const { docker, log } = deps;
  const { limits, install } = run;
  run.onProgress?.(run.restoreOnly ? `restoring the saved install of \`${install}\`` : install ? `installing dependencies: ${install}` : `warming up: ${run.warmAfter}`);
  const streamedTail = new TailBuffer(limits.outputBytes);
  const attach = await container.attach({ stream: true, stdout: true, stderr: true });
  let partial = '';
  const onData = (b: Buffer) => {
    streamedTail.push(b);
    const lines = (partial + b.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.trim()) log.debug({ install: l });
  };
  const ended = demux(docker, attach, onData, onData);
  await container.start();
  const cacheStart: { bytes?: number } = {};
  // An install's layer holds every installed file: looking costs more, so look less often.
  const extraBytes = run.volume ? () => cacheGrowth(docker, container.id, cacheStart) : undefined;
  const disk = watchLimits(docker, container.id, limits, { minIntervalMs: 3_000, extraBytes, onExceeded: () => killNow(container) });
  let timedOut: boolean;
  let seen: DiskWatchResult;
  try {
    const waited = container.wait() as Promise<{ StatusCode: number }>;
    timedOut = (await untilDeadline(waited, limits.timeoutMs + 10_000)) === 'timeout';
    if (timedOut) await killNow(container);
    // A successful install needs no last look at its (large) layer.
    seen = await disk.stop(timedOut || (await waited).StatusCode !== 0);
  } finally {
    await disk.stop(false);
  }
  const { tail } = await outputAfterExit(container, ended, streamedTail);
  await haltIfInterrupted();
  const info = await container.inspect();
  const code = info.State.ExitCode;
  if (run.restoreOnly && !timedOut && !seen.exceeded && code === NO_SAVED_INSTALL) throw new NoSavedInstall();
  if (timedOut || code !== 0 || seen.exceeded) throw installFailure(run, deps.egressHosts, { timedOut, code, oomKilled: info.State.OOMKilled, disk: seen, output: tail.toString() });
}

/** Why the install failed, with the last lines of its output; the hint says who can fix it. */
function installFailure(run: InstallRun, egressHosts: string[], r: { timedOut: boolean; code: number; oomKilled: boolean; disk: DiskWatchResult; output: string }): SwtError {
  const { limits } = run;
  // ENOSPC from the engine's own disk, not our limit: the operator, not the repository, can fix it.
  const noSpace = !r.disk.exceeded && /No space left on device/i.test(r.output);
  const why = r.disk.exceeded
    ? `was killed: ${diskLimitText(limits, r.disk.reason)}`
    : r.oomKilled
      ? `ran out of memory (${Math.round(limits.memoryBytes / 1024 ** 2)} MiB)`
      : r.timedOut || r.code === 137
        ? `was killed (timeout ${Math.round(limits.timeoutMs / 60_000)} min, or memory)`
        : r.code === 70 && run.patched
          ? 'succeeded, but putting the tracked files back failed'
          : noSpace
            ? `exited with ${r.code}: no space left on the Docker engine's disk`
            : `exited with ${r.code}`;
  return new SwtError('INSTALL_FAILED', `install command \`${run.install}\` ${why}; last lines of its output:\n${lastLines(r.output, INSTALL_LOG_LINES)}`, {
    hint: noSpace
      ? "free space on the Docker engine's disk (docker system prune; a smaller SWT_ENV_CACHE_GB keeps fewer environment images)"
      : `fix the install command (it runs in /testbed as a non-root user and reaches only ${egressHosts.join(', ')} through the egress proxy; an operator adds hosts with SWT_EGRESS_ALLOW)`,
  });
}

function lastLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

/** Bytes the install added to its package cache so far (what `du` sees, as the sandbox user). */
async function cacheGrowth(docker: Docker, id: string, start: { bytes?: number }): Promise<number> {
  try {
    const exec = await docker.getContainer(id).exec({ Cmd: ['du', '-sk', CACHE_MOUNT], AttachStdout: true, AttachStderr: false, User: '1000:1000' });
    const stream = await exec.start({ hijack: true, stdin: false });
    let out = '';
    await demux(docker, stream, (b) => (out += b.toString('utf8')), () => undefined);
    const kib = Number(out.trim().split(/\s+/)[0]);
    if (!Number.isFinite(kib)) return 0;
    start.bytes ??= kib * 1024;
    return Math.max(0, kib * 1024 - start.bytes);
  } catch {
    return 0;
  }
}
