import { SwtError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { clampLimits } from './ceilings.js';
import { demux, outputAfterExit, readTarFiles, TailBuffer, withinMs } from './containerIo.js';
import { storageOptSupported, watchDisk } from './diskWatch.js';
import { engineCpus, isNotFound, type Docker } from '../docker.js';
import { markUsed } from '../images/envCache.js';
import { openRepo, planStateOverlay, openState, type StateTree } from '../../repo/git.js';
import { admitCopy, copyPlan } from './copyIn.js';
import { containerLabels, diskLimitText, hostConfigFor, inodeLimit, resolveLimits, type ContainerRole } from './limits.js';
import { registerContainer, removeContainer, haltIfInterrupted, createTracked } from './liveContainers.js';
import { deletionScript, type OverlayPlan } from '../../repo/overlay.js';
import { runKept, startKept } from './keptRun.js';
import type { WarmPool } from './warmPool.js';
import type { Environment, ResourceLimits, RunOutcome, RunRequest } from '../types.js';

/**
 * One-shot sandboxed runs: a container from the environment image with no network, no
 * capabilities, no new privileges, the non-root user, pids/memory/cpu/nofile limits, a tmpfs /tmp;
 * the state's changed files overlaid into /testbed; `sh -c <command>`; killed at the wall-clock
 * timeout or past the disk limit; always removed.
 */

export interface SandboxDeps {
  docker: Docker;
  log: Logger;
  /** Defaults for every run and session. */
  limits: ResourceLimits;
  /** No run or session gets more than these (the operator's SWT_MAX_*). */
  ceilings: ResourceLimits;
  /** The host CPUs containers may use (SWT_CPUSET_CPUS). */
  cpuset?: string;
  /** Idle run containers started ahead (warmPool.ts); runs then exec into one (keptRun.ts). */
  pool?: WarmPool;
}

/** A run's or session's limits: defaults, then the request, then no more than the ceilings. */
export function limitsFor(deps: SandboxDeps, requested?: Partial<ResourceLimits>): ResourceLimits {
  return clampLimits(resolveLimits(deps.limits, requested), deps.ceilings);
}

export const SANDBOX_USER = '1000:1000';


export interface PreparedContainer {
  id: string;
  container: Docker.Container;
  plan: OverlayPlan;
  state: StateTree;
}

/** Prelude (run as the sandbox user) that applies the overlay's deletions. */
export function overlayPrelude(plan: OverlayPlan): string {
  const del = deletionScript(plan.delete);
  return [del, 'mkdir -p /swt-out 2>/dev/null || true', 'cd /testbed'].filter(Boolean).join('\n');
}

/** Creates (not starts) a sandbox container of `image`, registered for clean-up; the caller removes it. */
export async function createSandboxContainer(
  deps: SandboxDeps,
  opts: { image: string; role: ContainerRole; cmd: string[]; limits: ResourceLimits; stdin?: boolean },
): Promise<Docker.Container> {
  const { docker } = deps;
  const hostConfig = hostConfigFor({
    role: opts.role,
    limits: opts.limits,
    network: 'none',
    engineCpus: await engineCpus(docker),
    storageOpt: await storageOptSupported(docker, opts.image),
    cpuset: deps.cpuset,
  });
  let container: Docker.Container;
  try {
    container = await createTracked(() => docker.createContainer({
      Image: opts.image,
      Cmd: opts.cmd,
      Entrypoint: [],
      User: SANDBOX_USER,
      WorkingDir: '/testbed',
      Hostname: 'sandbox',
      // No host variables: the image's own (CA paths, PATH, LANG) only.
      Env: [],
      Labels: containerLabels(opts.role),
      // NetworkMode 'none' (HostConfig) isolates; NetworkDisabled would also drop /etc/hosts, and 'localhost' stops resolving.
      AttachStdout: true,
      AttachStderr: true,
      ...(opts.stdin ? { OpenStdin: true, StdinOnce: true, AttachStdin: true } : {}),
      HostConfig: hostConfig,
    }));
  } catch (e) {
    if (isNotFound(e)) {
      throw new SwtError('IMAGE_UNAVAILABLE', `the environment image ${opts.image} is gone`, { hint: 'run ensureEnvironment again', cause: e });
    }
    throw e;
  }
  registerContainer(docker, container.id);
  return container;
}

/** An idle container for the warm pool: started, its process only waits for the execs of the one run that takes it. */
export async function startIdleContainer(deps: SandboxDeps, image: string, limits: ResourceLimits): Promise<Docker.Container> {
  await markUsed(image);
  const container = await createSandboxContainer(deps, { image, role: 'run', cmd: ['sleep', 'infinity'], limits });
  try {
    await container.start();
  } catch (e) {
    await removeContainer(deps.docker, container.id).catch(() => undefined);
    throw e;
  }
  return container;
}

/**
 * A container for a state with the overlay copied in: created (not started) for it, or `started`,
 * a warm pool's idle one. The caller owns the returned state tree and container (and must
 * dispose/remove both).
 */
export async function prepareContainer(
  deps: SandboxDeps,
  opts: {
    env: Environment;
    repo: string;
    state: StateTree;
    role: ContainerRole;
    cmd: (plan: OverlayPlan) => string[];
    limits: ResourceLimits;
    stdin?: boolean;
    /** Done while the overlay goes in (starting a container whose process waits before it reads /testbed): each costs a round trip or more. */
    meanwhile?: (container: Docker.Container) => Promise<unknown>;
    /** Already created and started (the warm pool's): only the overlay goes in. */
    started?: Docker.Container;
    /** Ends the copy (and removes the container): SwtError('CANCELLED'). */
    signal?: AbortSignal;
  },
): Promise<PreparedContainer> {
  const { docker } = deps;
  const what = `the files of ${stateName(opts.state)}`;
  let container = opts.started;
  try {
    const plan = await planStateOverlay(opts.state, opts.env.snapshotRev);
    if (plan.skipped.length) deps.log.warn({ submodules: plan.skipped }, 'submodules are not materialised in the sandbox');
    // Counted before any container is made for it: one over the run's disk or file limit is refused here.
    await admitCopy(opts.state.repo, [plan], { env: opts.state.env, limits: opts.limits, what, role: opts.role });
    await markUsed(opts.env.image);
    container ??= await createSandboxContainer(deps, { image: opts.env.image, role: opts.role, cmd: opts.cmd(plan), limits: opts.limits, ...(opts.stdin ? { stdin: true } : {}) });
    const into = container;
    const copy = { path: '/testbed', env: opts.state.env, timeoutMs: opts.limits.timeoutMs, what, ...(opts.signal ? { signal: opts.signal } : {}) };
    const fill = plan.write.length || plan.dirs.length ? copyPlan(into, opts.state.repo, plan, copy) : Promise.resolve();
    const settled = await Promise.allSettled([fill, opts.started ? undefined : opts.meanwhile?.(into)]);
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
    return { id: into.id, container: into, plan, state: opts.state };
  } catch (e) {
    if (container) await removeContainer(docker, container.id).catch(() => undefined);
    if (opts.signal?.aborted) throw cancelled();
    throw e;
  }
}

/**
 * Refuses (STATE_TOO_LARGE) a state whose files, copied into a run's container of `req.env`, would
 * not fit the run's limits; `what` names it (`head's files`). Only git is asked: no container.
 */
export async function admitState(deps: SandboxDeps, req: Omit<RunRequest, 'command'>, what: string): Promise<void> {
  const state = await openState(await openRepo(req.repo), req.state);
  try {
    const plan = await planStateOverlay(state, req.env.snapshotRev);
    await admitCopy(state.repo, [plan], { env: state.env, limits: limitsFor(deps, req.limits), what });
  } finally {
    await state.dispose();
  }
}

/** A state as a person reads it: `a1b2c3d4e5f6`, `a1b2c3d4e5f6 with patches`. */
export function stateName(st: StateTree): string {
  return `${st.commit.slice(0, 12)}${Object.keys(st.env).length ? ' with patches' : ''}`;
}

/** Where the run's wrapper writes the command's exit status, under /swt-out; not a report. */
export const EXIT_STATUS_FILE = '.swt-exit-status';

export async function collectOutFiles(container: Docker.Container): Promise<Record<string, string>> {
  try {
    const archive = await container.getArchive({ path: '/swt-out' });
    const files = await readTarFiles(archive, { strip: 1, maxFileBytes: 16 * 1024 ** 2, maxTotalBytes: 64 * 1024 ** 2 });
    const out: Record<string, string> = {};
    for (const [name, f] of files) out[name] = f.content.toString('utf8');
    return out;
  } catch (e) {
    if (isNotFound(e)) return {};
    throw e;
  }
}

export function cancelled(): SwtError {
  return new SwtError('CANCELLED', 'the test run was cancelled: a newer request supersedes it');
}

/**
 * A run's container, created, filled and started ahead of its run (pre-warmed): its shell waits
 * for one line on stdin before the command starts, so the run costs the command and little more.
 */
export interface WarmRun {
  prepared: PreparedContainer;
  attach: NodeJS.ReadWriteStream;
  ended: Promise<void>;
  streamedTail: TailBuffer;
  limits: ResourceLimits;
}

/** Starts the container of `req` (pre-warmed when `waitForGo`: the command waits for `go`). */
async function startRun(deps: SandboxDeps, req: RunRequest, state: StateTree, limits: ResourceLimits, waitForGo: boolean): Promise<WarmRun> {
  const { docker } = deps;
  const streamedTail = new TailBuffer(limits.outputBytes);
  let attached: { attach: NodeJS.ReadWriteStream; ended: Promise<void> } | undefined;
  // Attached first (no output is lost), then started: a pre-warmed one while its overlay goes in.
  const attachAndStart = async (container: Docker.Container) => {
    const attach = (await container.attach({ stream: true, stdout: true, stderr: true, ...(waitForGo ? { stdin: true, hijack: true } : {}) })) as NodeJS.ReadWriteStream;
    attached = { attach, ended: demux(docker, attach, (b) => streamedTail.push(b), (b) => streamedTail.push(b)) };
    if (waitForGo) await container.start();
  };
  const prepared = await prepareContainer(deps, {
    env: req.env,
    repo: req.repo,
    state,
    role: 'run',
    stdin: waitForGo,
    // The command's own exit status is written down: a 137 or 143 it gave itself is its result,
    // while a container stopped from outside dies with this shell and leaves no status. A
    // pre-warmed one reads its go line first (the overlay is in by then, and its deletions come
    // after it); the command itself never gets that stdin.
    cmd: (plan) => [
      'sh',
      '-c',
      `${waitForGo ? 'read -r _ || exit 75\n' : ''}${overlayPrelude(plan)}\n${waitForGo ? 'sh -c "$1" </dev/null' : 'sh -c "$1"'}\nrc=$?\n{ echo "$rc" > /swt-out/${EXIT_STATUS_FILE}; } 2>/dev/null\nexit $rc`,
      'swt-run',
      req.command,
    ],
    limits,
    meanwhile: attachAndStart,
    ...(req.signal ? { signal: req.signal } : {}),
  }).catch((e: unknown) => {
    // The attach of a container that never started outlives its removal: closed here.
    (attached?.attach as unknown as { destroy?: () => void } | undefined)?.destroy?.();
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

/** Creates and starts a run's container ahead of the run; `discardWarm` or the run removes it. */
export function prewarmRun(deps: SandboxDeps, req: RunRequest, ready: Promise<unknown> = Promise.resolve()): PrewarmedRun {
  const limits = limitsFor(deps, req.limits);
  const state = ready.then(() => openRepo(req.repo)).then((repo) => openState(repo, req.state));
  state.catch(() => undefined);
  const viaKept = viaKeptRun(deps, req);
  const warm = state.then((s): Promise<WarmRun | PreparedContainer> => (viaKept ? startKept(deps, req, s, limits) : startRun(deps, req, s, limits, true)));
  // Nobody may await it (a run that never comes): its failure is the run's to report, not unhandled.
  warm.catch(() => undefined);
  return { key: warmKey(req, limits), viaKept, warm, state };
}

/** Removes a pre-warmed run's container that no run took. */
export async function discardWarm(deps: SandboxDeps, p: PrewarmedRun): Promise<void> {
  const w = await p.warm.catch(() => undefined);
  if (w) await removeContainer(deps.docker, preparedOf(w).id).catch(() => undefined);
  await (await p.state.catch(() => undefined))?.dispose();
}

/**
 * The last disk look, the output, the state and the reports, asked of the engine at once: each is
 * a round trip, and a short test run would otherwise pay them one after another.
 */
function askAfterExit(container: Docker.Container, disk: ReturnType<typeof watchDisk>, ended: Parameters<typeof outputAfterExit>[1], streamedTail: Parameters<typeof outputAfterExit>[2]) {
  return Promise.all([
    disk.stop(),
    outputAfterExit(container, ended, streamedTail),
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
  let disk: ReturnType<typeof watchDisk> | undefined;
  try {
    // A pre-warmed container whose start failed leaves the run to a cold start.
    let w: WarmRun | undefined;
    if (prewarmed) {
      w = (await prewarmed.warm.catch(() => undefined)) as WarmRun | undefined;
      if (w) state = await prewarmed.state;
      else await discardWarm(deps, prewarmed);
    }
    state ??= await openState(await openRepo(req.repo), req.state);
    const cold = !w;
    w ??= await startRun(deps, req, state, limits, false);
    prepared = w.prepared;
    const { container } = prepared;
    const { attach, ended, streamedTail } = w;

    const started = Date.now();
    if (cold) await container.start();
    else {
      attach.write('go\n');
      attach.end();
    }
    disk = watchDisk(docker, prepared.id, {
      limitBytes: limits.diskBytes,
      limitInodes: inodeLimit(limits),
      onExceeded: () => container.kill({ signal: 'SIGKILL' }).catch(() => undefined),
    });
    const { timedOut } = await waitOrKill(container, limits.timeoutMs, req.signal);
    const durationMs = Date.now() - started;
    const [{ exceeded: diskLimit, reason: diskReason }, { tail, fromLog }, info, collected] = await askAfterExit(container, disk, ended, streamedTail);
    await haltIfInterrupted();
    (attach as unknown as { destroy?: () => void }).destroy?.();
    if (fromLog) log.debug({ image: req.env.image }, 'the output stream ended late: output read from the log');
    const code = info.State.ExitCode;
    const suspect = !timedOut && !diskLimit && !info.State.OOMKilled && (code === 137 || code === 143);
    // After an engine restart the container may not give its files back: then it was stopped from outside.
    if (collected.error && !suspect) throw collected.error;
    const files = collected.files;
    const ownStatus = files[EXIT_STATUS_FILE]?.trim();
    delete files[EXIT_STATUS_FILE];
    // Killed by a signal we did not send, not by the memory limit, and not the command's own exit:
    // the engine stopped it (a restart, `docker stop`). What it printed is no result: run it again.
    if (suspect && ownStatus !== String(code)) {
      throw new SwtError('INTERRUPTED', `the test container was stopped from outside the run (exit ${code}: the Docker engine restarting, or someone stopping it)`);
    }
    const outcome: RunOutcome = {
      exitCode: timedOut || diskLimit ? null : info.State.ExitCode,
      timedOut: timedOut && !diskLimit,
      oomKilled: !!info.State.OOMKilled,
      ...(diskLimit ? { diskLimit } : {}),
      output: diskLimit ? `${tail.toString()}\n[swt: killed: ${diskLimitText(limits, diskReason)}]` : tail.toString(),
      files,
      durationMs,
    };
    log.debug({ image: req.env.image, exitCode: outcome.exitCode, timedOut, oomKilled: outcome.oomKilled, diskLimit, durationMs, overlay: prepared.plan.write.length }, 'sandbox run');
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
  const w = prewarmed ? ((await prewarmed.warm.catch(() => undefined)) as PreparedContainer | undefined) : undefined;
  if (prewarmed && !w) await discardWarm(deps, prewarmed);
  const state = w ? await prewarmed!.state : await openState(await openRepo(req.repo), req.state);
  let prepared = w;
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
  let timer: NodeJS.Timeout | undefined;
  const waited = container.wait() as Promise<{ StatusCode: number }>;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    if (signal?.aborted) resolve('aborted');
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  const first = await Promise.race([waited, timeout, aborted]);
  clearTimeout(timer);
  if (onAbort) signal?.removeEventListener('abort', onAbort);
  if (first !== 'aborted' && first !== 'timeout') return { timedOut: false };
  await container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
  await withinMs(waited.catch(() => undefined), 15_000);
  if (first === 'aborted') throw cancelled();
  return { timedOut: true };
}

