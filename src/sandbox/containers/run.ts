import { SwtError } from '../../util/errors.js';
import { closeStream, demux, outputAfterExit, TailBuffer, untilDeadline, withinMs } from './containerIo.js';
import { watchLimits, type DiskWatch } from './diskWatch.js';
import { killNow, type Docker } from '../docker.js';
import { openRepo, openState, type StateTree } from '../../repo/git.js';
import { haltIfInterrupted, removeContainer } from './liveContainers.js';
import { cancelled, collectOutFiles, commandScript, limitsFor, prepareContainer, runOutcome, takeExitStatus, type PreparedContainer, type SandboxDeps } from './container.js';
import { runKept, startKept } from './keptRun.js';
import type { ResourceLimits, RunOutcome, RunRequest } from '../types.js';

/**
 * A run: `sh -c <command>` in a sandbox container of the state, killed at the wall-clock timeout or
 * past the disk limit, always removed. One-shot (the command is the container's process) or an
 * exec into a started container (keptRun.ts); either may be started ahead (pre-warmed).
 */

/** A one-shot run's container, created, filled and started ahead: its shell waits for a go line on stdin. */
export interface WarmRun {
  prepared: PreparedContainer;
  attach: NodeJS.ReadWriteStream;
  ended: Promise<void>;
  streamedTail: TailBuffer;
  limits: ResourceLimits;
}

/** Starts the container of `req` (pre-warmed when `waitForGo`: the command waits for `go`). */
async function startRun(deps: SandboxDeps, req: RunRequest, state: StateTree, limits: ResourceLimits, waitForGo: boolean, gate?: Promise<unknown>): Promise<WarmRun> {
  const streamedTail = new TailBuffer(limits.outputBytes);
  let attached: { attach: NodeJS.ReadWriteStream; ended: Promise<void> } | undefined;
  // Attached first (no output is lost), then started: a pre-warmed one while its overlay goes in.
  const attachAndStart = async (container: Docker.Container) => {
    const attach = (await container.attach({ stream: true, stdout: true, stderr: true, ...(waitForGo ? { stdin: true, hijack: true } : {}) })) as NodeJS.ReadWriteStream;
    attached = { attach, ended: demux(deps.docker, attach, (b) => streamedTail.push(b), (b) => streamedTail.push(b)) };
    if (waitForGo) await container.start();
  };
  // A pre-warmed shell reads its go line before the overlay's deletions; the command never gets that stdin.
  const cmd = (plan: PreparedContainer['plan']) => ['sh', '-c', commandScript(plan, waitForGo ? 'read -r _ || exit 75\n' : '', waitForGo), 'swt-run', req.command];
  const prepared = await prepareContainer(deps, { env: req.env, repo: req.repo, state, role: 'run', stdin: waitForGo, cmd, limits, meanwhile: attachAndStart, ...(gate ? { gate } : {}), ...(req.signal ? { signal: req.signal } : {}) }).catch((e: unknown) => {
    closeStream(attached?.attach);
    throw e;
  });
  return { prepared, attach: attached!.attach, ended: attached!.ended, streamedTail, limits };
}

/** The key a pre-warmed run is found by: the same image, repository, state, command and limits. */
export function warmKey(req: RunRequest, limits: ResourceLimits): string {
  return JSON.stringify([req.env.image, req.repo, req.state.rev, req.state.patches ?? [], req.command, limits, !!req.keep]);
}

export interface PrewarmedRun {
  key: string;
  /** Started as a kept run (its command an exec): asked for (RunRequest.keep), or a pool is in use. */
  viaKept: boolean;
  /** A one-shot run's container waiting for its go line, or a kept run's started container (startKept). */
  warm: Promise<WarmRun | PreparedContainer>;
  state: Promise<StateTree>;
}

const preparedOf = (w: WarmRun | PreparedContainer): PreparedContainer => ('prepared' in w ? w.prepared : w);

/** A run execs into a started container when it keeps it for more commands, or when a warm pool has started ones. */
function viaKeptRun(deps: SandboxDeps, req: RunRequest): boolean {
  return !!req.keep || !!deps.pool;
}

/** Creates and starts a run's container ahead of the run, once `gate` is passed (its files are planned and counted meanwhile); `discardWarm` or the run removes it. */
export function prewarmRun(deps: SandboxDeps, req: RunRequest, ready: Promise<unknown> = Promise.resolve(), gate?: Promise<unknown>): PrewarmedRun {
  const limits = limitsFor(deps, req.limits);
  const state = ready.then(() => openRepo(req.repo)).then((repo) => openState(repo, req.state));
  state.catch(() => undefined);
  const viaKept = viaKeptRun(deps, req);
  const warm = state.then((s): Promise<WarmRun | PreparedContainer> => (viaKept ? startKept(deps, req, s, limits, gate) : startRun(deps, req, s, limits, true, gate)));
  // Nobody may await it (a run that never comes): its failure is the run's to report, not unhandled.
  warm.catch(() => undefined);
  return { key: warmKey(req, limits), viaKept, warm, state };
}

/** Removes a pre-warmed run's container that no run took. */
export async function discardWarm(deps: SandboxDeps, p: PrewarmedRun): Promise<void> {
  const w = await p.warm.catch(() => undefined);
  if (w) {
    preparedOf(w).fillAhead?.cancel();
    closeStream(preparedOf(w).waiting);
    await removeContainer(deps.docker, preparedOf(w).id).catch(() => undefined);
  }
  await (await p.state.catch(() => undefined))?.dispose();
}

/** The pre-warmed run's container and state when its start succeeded; else it is discarded (the run starts cold). */
async function takeWarm<W extends WarmRun | PreparedContainer>(deps: SandboxDeps, prewarmed?: PrewarmedRun): Promise<{ w: W; state: StateTree } | undefined> {
  const w = prewarmed && ((await prewarmed.warm.catch(() => undefined)) as W | undefined);
  if (w) return { w, state: await prewarmed.state };
  if (prewarmed) await discardWarm(deps, prewarmed);
  return undefined;
}

/**
 * The last disk look, the output, the state and the reports, asked of the engine at once: each is
 * a round trip, and a short test run would otherwise pay them one after another.
 */
function askAfterExit(container: Docker.Container, disk: DiskWatch, run: WarmRun) {
  return Promise.all([
    disk.stop(),
    outputAfterExit(container, run.ended, run.streamedTail),
    container.inspect(),
    collectOutFiles(container).then(
      (f) => ({ files: f, error: undefined }),
      (e: unknown) => ({ files: {} as Record<string, string>, error: e }),
    ),
  ]);
}

export async function runInSandbox(deps: SandboxDeps, req: RunRequest, prewarmed?: PrewarmedRun): Promise<RunOutcome> {
  const { docker, log } = deps;
  if (req.signal?.aborted) {
    if (prewarmed) await discardWarm(deps, prewarmed);
    throw cancelled();
  }
  const limits = limitsFor(deps, req.limits);
  if (prewarmed ? prewarmed.viaKept : viaKeptRun(deps, req)) return keptOrOnce(deps, req, limits, prewarmed);
  let state: StateTree | undefined;
  let prepared: PreparedContainer | undefined;
  let disk: DiskWatch | undefined;
  try {
    const warm = await takeWarm<WarmRun>(deps, prewarmed);
    state = warm?.state ?? (await openState(await openRepo(req.repo), req.state));
    const run = warm?.w ?? (await startRun(deps, req, state, limits, false));
    prepared = run.prepared;
    const { container } = prepared;
    const started = Date.now();
    if (warm) run.attach.end('go\n');
    else await container.start();
    disk = watchLimits(docker, prepared.id, limits, { onExceeded: () => killNow(container) });
    const { timedOut } = await waitOrKill(container, limits.timeoutMs, req.signal);
    const durationMs = Date.now() - started;
    const [diskSeen, { tail, fromLog }, info, collected] = await askAfterExit(container, disk, run);
    await haltIfInterrupted();
    closeStream(run.attach);
    if (fromLog) log.debug({ image: req.env.image }, 'the output stream ended late: output read from the log');
    const code = info.State.ExitCode;
    const suspect = !timedOut && !diskSeen.exceeded && !info.State.OOMKilled && (code === 137 || code === 143);
    // After an engine restart the container may not give its files back: then it was stopped from outside.
    if (collected.error && !suspect) throw collected.error;
    const ownStatus = takeExitStatus(collected.files);
    // Killed by a signal we did not send, not by the memory limit, not the command's own exit: the
    // engine stopped it (a restart, `docker stop`). What it printed is no result: run it again.
    if (suspect && ownStatus !== String(code)) {
      throw new SwtError('INTERRUPTED', `the test container was stopped from outside the run (exit ${code}: the Docker engine restarting, or someone stopping it)`);
    }
    const outcome = runOutcome({ code, timedOut, oomKilled: !!info.State.OOMKilled, disk: diskSeen, tail, files: collected.files, durationMs }, limits);
    log.debug({ image: req.env.image, exitCode: outcome.exitCode, timedOut, oomKilled: outcome.oomKilled, diskLimit: diskSeen.exceeded, durationMs, overlay: prepared.plan.write.length }, 'sandbox run');
    return outcome;
  } catch (e) {
    await haltIfInterrupted();
    throw e;
  } finally {
    await disk?.stop();
    if (prepared) await removeContainer(docker, prepared.id).catch(() => undefined);
    await state?.dispose();
  }
}

/** A run exec'd into a started container: handed on when kept (RunRequest.keep), else removed after its one command. */
async function keptOrOnce(deps: SandboxDeps, req: RunRequest, limits: ResourceLimits, prewarmed?: PrewarmedRun): Promise<RunOutcome> {
  const outcome = await keptRunInSandbox(deps, req, limits, prewarmed);
  if (req.keep) return outcome;
  const { kept, ...once } = outcome;
  await kept?.release();
  return once;
}

/** A kept run (RunRequest.keep): its pre-warmed container when one started, else a new one; exec'd into (keptRun.ts). */
async function keptRunInSandbox(deps: SandboxDeps, req: RunRequest, limits: ResourceLimits, prewarmed?: PrewarmedRun): Promise<RunOutcome> {
  const warm = await takeWarm<PreparedContainer>(deps, prewarmed);
  const state = warm?.state ?? (await openState(await openRepo(req.repo), req.state));
  let prepared = warm?.w;
  try {
    prepared ??= await startKept(deps, req, state, limits);
  } catch (e) {
    await state.dispose();
    await haltIfInterrupted();
    throw e;
  }
  // runKept owns the container and the state from here: it removes both when the container cannot go on.
  return runKept(deps, prepared, state, req.command, limits, req.signal);
}

/**
 * Waits for the container's end; past the time limit, or when the caller gives up (a newer push),
 * kills it now instead of waiting (the latter throws CANCELLED).
 */
async function waitOrKill(container: Docker.Container, timeoutMs: number, signal?: AbortSignal): Promise<{ timedOut: boolean }> {
  const waited = container.wait() as Promise<{ StatusCode: number }>;
  const first = await untilDeadline(waited, timeoutMs, signal);
  if (!first) return { timedOut: false };
  await killNow(container);
  await withinMs(waited.catch(() => undefined), 15_000);
  if (first === 'aborted') throw cancelled();
  return { timedOut: true };
}
