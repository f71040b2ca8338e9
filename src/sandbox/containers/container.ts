import { Readable } from 'node:stream';
import { SwtError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { clampLimits } from './ceilings.js';
import { closeStream, readTarFiles, type TailBuffer } from './containerIo.js';
import { FILL_FAILED, WAITING_PROCESS } from './firstCommand.js';
import { storageOptSupported, type DiskWatchResult } from './diskWatch.js';
import { engineCpus, isNotFound, type Docker } from '../docker.js';
import { markUsed } from '../images/envCache.js';
import { openRepo, planStateOverlay, openState, type StateTree } from '../../repo/git.js';
import { admitCopy, copyPlan, overlayAhead, OVERLAY_AHEAD_MAX_BYTES, type OverlayAhead } from './copyIn.js';
import { containerLabels, diskLimitText, hostConfigFor, resolveLimits, type ContainerRole } from './limits.js';
import { registerContainer, removeContainer, createTracked } from './liveContainers.js';
import { deletionScript, type OverlayPlan } from '../../repo/overlay.js';
import type { WarmPool } from './warmPool.js';
import type { Environment, ResourceLimits, RunOutcome, RunRequest } from '../types.js';

/**
 * Sandbox containers: from the environment image with no network, no capabilities, no new
 * privileges, the non-root user, pids/memory/cpu/nofile limits, a tmpfs /tmp; the state's changed
 * files overlaid into /testbed. Runs (run.ts, keptRun.ts) and sessions (session.ts) use them.
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
  /** The overlay is not in yet: the first command brings it on its stdin (fillWithCommand). */
  fillPending?: boolean;
  /** That overlay's archive, read ahead when it is small (overlayAhead); taken by the first command. */
  fillAhead?: OverlayAhead;
  /** The container's own process waits for the first command on this attached stdin (firstCommand.ts); taken by it. */
  waiting?: NodeJS.ReadWriteStream;
}

/** A started container whose process waits for its first command (WAITING_PROCESS), and its attached stdin and output. */
export interface WaitingContainer {
  container: Docker.Container;
  attach: NodeJS.ReadWriteStream;
}

/** Attaches to a waiting container (before it starts: no output is lost); a reset after its removal is no one's error. */
export async function attachWaiting(container: Docker.Container): Promise<NodeJS.ReadWriteStream> {
  const attach = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as NodeJS.ReadWriteStream;
  attach.on('error', () => undefined);
  return attach;
}

/** Prelude (run as the sandbox user) that applies the overlay's deletions. */
export function overlayPrelude(plan: OverlayPlan): string {
  const del = deletionScript(plan.delete);
  // Our images hold /swt-out: the test (a builtin) spares a process on every run.
  return [del, '[ -d /swt-out ] || mkdir -p /swt-out 2>/dev/null || true', 'cd /testbed'].filter(Boolean).join('\n');
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

/** An idle container for the warm pool: started, attached, its process waiting for the first command of the one run that takes it. */
export async function startIdleContainer(deps: SandboxDeps, image: string, limits: ResourceLimits): Promise<WaitingContainer> {
  await markUsed(image);
  const container = await createSandboxContainer(deps, { image, role: 'run', cmd: WAITING_PROCESS, limits, stdin: true });
  let attach: NodeJS.ReadWriteStream | undefined;
  try {
    attach = await attachWaiting(container);
    await container.start();
  } catch (e) {
    closeStream(attach);
    await removeContainer(deps.docker, container.id).catch(() => undefined);
    throw e;
  }
  return { container, attach };
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
    /** Already created and started (the warm pool's, taken once `gate` is passed): only the overlay goes in. */
    started?: () => WaitingContainer | undefined;
    /** Passed before any container is made or taken (an admission of other files): the plan and its size are worked out meanwhile. */
    gate?: Promise<unknown>;
    /** Ends the copy (and removes the container): SwtError('CANCELLED'). */
    signal?: AbortSignal;
    /** The overlay goes in on the first command's stdin (keptRun.ts), not by the engine's archive call: one round trip fewer. */
    fillWithCommand?: boolean;
  },
): Promise<PreparedContainer> {
  const { docker } = deps;
  const what = `the files of ${stateName(opts.state)}`;
  let container: Docker.Container | undefined;
  let ahead: OverlayAhead | undefined;
  let taken: WaitingContainer | undefined;
  try {
    const plan = await planStateOverlay(opts.state, opts.env.snapshotRev);
    if (plan.skipped.length) deps.log.warn({ submodules: plan.skipped }, 'submodules are not materialised in the sandbox');
    // Counted before any container is made for it: one over the run's disk or file limit is refused here.
    const size = await admitCopy(opts.state.repo, [plan], { env: opts.state.env, limits: opts.limits, what, role: opts.role });
    const pending = !!(plan.write.length || plan.dirs.length);
    ahead = pending && opts.fillWithCommand && size.bytes <= OVERLAY_AHEAD_MAX_BYTES ? overlayAhead(opts.state.repo, plan, opts.state.env) : undefined;
    await opts.gate;
    taken = opts.started?.();
    container = taken?.container;
    const started = !!taken;
    await markUsed(opts.env.image);
    container ??= await createSandboxContainer(deps, { image: opts.env.image, role: opts.role, cmd: opts.cmd(plan), limits: opts.limits, ...(opts.stdin ? { stdin: true } : {}) });
    const into = container;
    const prepared: PreparedContainer = { id: into.id, container: into, plan, state: opts.state, ...(pending && opts.fillWithCommand ? { fillPending: true } : {}), ...(ahead ? { fillAhead: ahead } : {}), ...(taken ? { waiting: taken.attach } : {}) };
    const fill = pending && !opts.fillWithCommand ? fillByArchive(prepared, opts.limits.timeoutMs, opts.signal) : Promise.resolve();
    const settled = await Promise.allSettled([fill, started ? undefined : opts.meanwhile?.(into)]);
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
    return prepared;
  } catch (e) {
    ahead?.cancel();
    closeStream(taken?.attach);
    if (container) await removeContainer(docker, container.id).catch(() => undefined);
    if (opts.signal?.aborted) throw cancelled();
    throw e;
  }
}

/** Puts the overlay's files into /testbed with the engine's archive call. */
export function fillByArchive(p: PreparedContainer, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return copyPlan(p.container, p.state.repo, p.plan, { path: '/testbed', env: p.state.env, timeoutMs, what: `the files of ${stateName(p.state)}`, ...(signal ? { signal } : {}) });
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
const EXIT_STATUS_FILE = '.swt-exit-status';


/**
 * A run's shell: `before`, the overlay's deletions, the command, then its own exit status written down.
 * `fill`: first the overlay, a tar on stdin (FILL_FAILED on stdout when it cannot). `reportsOut`:
 * the command's output all goes to stderr, and /swt-out comes out as a tar on stdout after it
 * (reportsFromStdout): the files a getArchive would read, without its round trip.
 */
export function commandScript(plan: OverlayPlan, before: string, stdinNull: boolean, io: { fill?: boolean; reportsOut?: boolean } = {}): string {
  const fill = io.fill ? `tar -xf - -C /testbed || { cat >/dev/null 2>&1; echo ${FILL_FAILED}; exit 97; }\n` : '';
  const reports = io.reportsOut ? '\ntar -cf - -C /swt-out . 2>/dev/null' : '';
  return `${fill}${before}${overlayPrelude(plan)}\nsh -c "$1"${stdinNull ? ' </dev/null' : ''}${io.reportsOut ? ' 1>&2' : ''}\nrc=$?\n{ echo "$rc" > /swt-out/${EXIT_STATUS_FILE}; } 2>/dev/null${reports}\nexit $rc`;
}

const REPORT_LIMITS = { strip: 1, maxFileBytes: 16 * 1024 ** 2, maxTotalBytes: 64 * 1024 ** 2 };

/**
 * The files of commandScript's `reportsOut` tar, when stdout holds a whole one (it ends in the
 * archive's zero blocks); else undefined, and the caller asks the engine (collectOutFiles). Its
 * bytes are as much the command's as /swt-out is: the command could write either.
 */
export async function reportsFromStdout(stdout: Buffer): Promise<Record<string, string> | undefined> {
  const end = stdout.subarray(-1024);
  if (stdout.length < 1024 || stdout.length % 512 !== 0 || end.some((b) => b !== 0)) return undefined;
  try {
    const files = await readTarFiles(Readable.from([stdout]), REPORT_LIMITS);
    // The wrapper's archive always holds the exit status it wrote.
    if (!files.has(EXIT_STATUS_FILE)) return undefined;
    return Object.fromEntries([...files].map(([name, f]) => [name, f.content.toString('utf8')]));
  } catch {
    return undefined;
  }
}

/** The exit status commandScript wrote, taken out of the run's files (a 137 or 143 the command gave itself is its result). */
export function takeExitStatus(files: Record<string, string>): string | undefined {
  const status = files[EXIT_STATUS_FILE]?.trim();
  delete files[EXIT_STATUS_FILE];
  return status;
}

/** A run's outcome: no exit code when killed for time or disk; a disk kill is said after the output. */
export function runOutcome(r: { code: number | null; timedOut: boolean; oomKilled: boolean; disk: DiskWatchResult; tail: TailBuffer; files: Record<string, string>; durationMs: number }, limits: ResourceLimits): RunOutcome {
  const diskLimit = r.disk.exceeded;
  return {
    exitCode: r.timedOut || diskLimit ? null : r.code,
    timedOut: r.timedOut && !diskLimit,
    oomKilled: r.oomKilled,
    ...(diskLimit ? { diskLimit } : {}),
    output: diskLimit ? `${r.tail.toString()}\n[swt: killed: ${diskLimitText(limits, r.disk.reason)}]` : r.tail.toString(),
    files: r.files,
    durationMs: r.durationMs,
  };
}

export async function collectOutFiles(container: Docker.Container): Promise<Record<string, string>> {
  try {
    const archive = await container.getArchive({ path: '/swt-out' });
    const files = await readTarFiles(archive, REPORT_LIMITS);
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
