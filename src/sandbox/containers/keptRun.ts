import { SwtError } from '../../util/errors.js';
import { closeStream, demux, TailBuffer, untilDeadline, withinMs } from './containerIo.js';
import { DoneWatch, doneTag, FILL_FAILED, firstCommandInput, WAITING_PROCESS } from './firstCommand.js';
import { watchLimits } from './diskWatch.js';
import { killNow, type Docker } from '../docker.js';
import { haltIfInterrupted, inBackground, onInterrupt, removeContainer } from './liveContainers.js';
import { attachWaiting, cancelled, collectOutFiles, commandScript, fillByArchive, prepareContainer, reportsFromStdout, runOutcome, SANDBOX_USER, takeExitStatus, type PreparedContainer, type SandboxDeps } from './container.js';
import { overlayTar, type StateTree } from '../../repo/git.js';
import type { KeptContainer, ResourceLimits, RunOutcome, RunRequest } from '../types.js';

/**
 * Kept runs (RunRequest.keep): the container's own process waits for the first command on its
 * stdin (firstCommand.ts), then only waits; each later command is an exec in it, so a second
 * command of the same run (a side's confirmation reruns) pays neither a container start nor a
 * cold /tmp, where jest and ts-jest keep their caches. Same limits, user, no network; killed for
 * time or disk as a one-shot run is; a command killed by a signal ends the container, whose
 * memory flag then says whether it was out of memory.
 */

/** Creates and starts a kept run's container: its process waits for the first command (firstCommand.ts), which brings the overlay. */
export async function startKept(deps: SandboxDeps, req: RunRequest, state: StateTree, limits: ResourceLimits, gate?: Promise<unknown>): Promise<PreparedContainer> {
  // A warm pool's idle container when there is one; else one started here, attached first.
  const { pool } = deps;
  const started = pool ? () => pool.take(req.env.image, limits) : undefined;
  let attach: NodeJS.ReadWriteStream | undefined;
  const attachAndStart = async (c: Docker.Container) => {
    attach = await attachWaiting(c);
    await c.start();
  };
  const prepared = await prepareContainer(deps, { env: req.env, repo: req.repo, state, role: 'run', cmd: () => WAITING_PROCESS, stdin: true, limits, meanwhile: attachAndStart, fillWithCommand: true, ...(started ? { started } : {}), ...(gate ? { gate } : {}), ...(req.signal ? { signal: req.signal } : {}) }).catch((e: unknown) => {
    closeStream(attach);
    throw e;
  });
  if (attach) prepared.waiting = attach;
  return prepared;
}

/** Runs `command` in a started kept container (prepared) and hands the container on when it is still usable. */
export async function runKept(deps: SandboxDeps, prepared: PreparedContainer, state: StateTree, command: string, limits: ResourceLimits, signal?: AbortSignal): Promise<RunOutcome> {
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    prepared.fillAhead?.cancel();
    closeStream(prepared.waiting);
    const removal = removeContainer(deps.docker, prepared.id)
      .catch(() => undefined)
      .finally(() => state.dispose());
    // With a warm pool the removal goes on off the run's path; the pool's close waits for it.
    if (deps.pool) inBackground(removal);
    else await removal;
  };
  let busy = false;
  const once = async (cmd: string, sig: AbortSignal | undefined, first: boolean): Promise<RunOutcome> => {
    if (released) throw new SwtError('BAD_INPUT', 'the kept container was released');
    if (busy) throw new SwtError('BAD_INPUT', 'a kept container runs one command at a time');
    busy = true;
    try {
      const { outcome, alive } = await execCommand(deps, prepared, cmd, limits, sig, first);
      if (!alive) await release();
      return alive ? { ...outcome, kept } : outcome;
    } catch (e) {
      await release();
      throw e;
    } finally {
      busy = false;
    }
  };
  const kept: KeptContainer = { rerun: (cmd, sig) => once(cmd, sig, false), release };
  return once(command, signal, true);
}

async function execCommand(
  deps: SandboxDeps,
  prepared: PreparedContainer,
  command: string,
  limits: ResourceLimits,
  signal: AbortSignal | undefined,
  first: boolean,
): Promise<{ outcome: RunOutcome; alive: boolean }> {
  const { docker } = deps;
  const { container } = prepared;
  if (signal?.aborted) throw cancelled();
  // The overlay comes in on the first command's stdin, and the reports go out on stdout: no archive round trips.
  const fill = first && !!prepared.fillPending;
  // A later command's reports must be its own: /swt-out is emptied first.
  const script = commandScript(prepared.plan, first ? '' : 'find /swt-out -mindepth 1 -delete 2>/dev/null\n', true, { fill, reportsOut: true });
  const waiting = first ? prepared.waiting : undefined;
  delete prepared.waiting;
  const tail = new TailBuffer(limits.outputBytes);
  const stdout = new CappedBuffer(STDOUT_MAX);
  const delivery = (waiting && toWaitingProcess(deps, waiting, script, command, { stdout, tail })) || (await throughExec(deps, container, script, command, fill, { stdout, tail }));
  const { stream, ended } = delivery;
  // How the overlay goes in, for the run's log: read before the command, or read as it goes in.
  const overlay = fill ? (prepared.fillAhead ? 'read ahead' : 'streamed') : undefined;
  const feed = fill ? feedOverlay(prepared, stream) : undefined;
  if (!fill && delivery.via === 'stdin') stream.end();
  const started = Date.now();
  let killed = false;
  const kill = () => {
    killed = true;
    return killNow(container);
  };
  const disk = watchLimits(docker, prepared.id, limits, { onExceeded: kill });
  let ending: 'timeout' | 'aborted' | undefined;
  try {
    ending = await untilDeadline(delivery.finished, limits.timeoutMs, signal);
    if (ending) {
      await kill();
      await withinMs(ended, 15_000);
    }
  } finally {
    if (ending === 'aborted') {
      await disk.stop(false);
      await feed?.end();
    }
  }
  if (ending === 'aborted') throw cancelled();
  const durationMs = Date.now() - started;
  // The archive was whole, or the files the command saw were not the state's: no result then.
  const feedError = feed && (await feed.end());
  const out = delivery.output();
  // The waiting process says so too when it could not read its payload, with or without an overlay.
  const nothingRan = (fill || delivery.via === 'stdin') && out.subarray(0, FILL_FAILED.length).toString('latin1') === FILL_FAILED;
  if (feedError || nothingRan) {
    await disk.stop(false);
    closeStream(stream);
    if (feedError) throw feedError;
    // No tar in the image, or it could not extract there, or no dd to read the payload; nothing else ran: the engine's copy, and the command again as an exec.
    deps.log.debug({ output: tail.toString().slice(-500), via: delivery.via }, 'the command did not run: its overlay by the engine, and the command as an exec');
    if (fill) await fillByArchive(prepared, limits.timeoutMs, signal);
    prepared.fillPending = false;
    return execCommand(deps, prepared, command, limits, signal, first);
  }
  prepared.fillPending = false;
  const fromStdout = ending ? undefined : await reportsFromStdout(out);
  const [diskSeen, files, code, state] = await Promise.all([disk.stop(), fromStdout ?? collectOutFiles(container), delivery.exitCode(), container.inspect().then((i) => i.State)]);
  await haltIfInterrupted();
  closeStream(stream);
  const timedOut = ending === 'timeout';
  const exit = await judgeExit(container, kill, { killed, code, state, ownStatus: takeExitStatus(files) });
  const outcome = runOutcome({ ...exit, timedOut, disk: diskSeen, tail, files, durationMs }, limits);
  deps.log.debug({ exitCode: outcome.exitCode, timedOut: outcome.timedOut, oomKilled: exit.oomKilled, diskLimit: diskSeen.exceeded, durationMs, kept: true, via: delivery.via, ...(overlay ? { overlay } : {}) }, 'sandbox run');
  return { outcome, alive: !killed };
}

/** How a command reached its container, and how its end and exit status are known. */
interface Delivery {
  via: 'exec' | 'stdin';
  /** Its stdin (the overlay's archive goes on it) and multiplexed output. */
  stream: NodeJS.ReadWriteStream;
  /** The output stream's end: the container's, or the exec's. */
  ended: Promise<void>;
  /** Resolves once the command is over. */
  finished: Promise<unknown>;
  /** What the command's wrapper wrote on stdout (the reports' tar, or FILL_FAILED). */
  output: () => Buffer;
  exitCode: () => Promise<number | null>;
}

/** The command as an exec of its own. */
async function throughExec(deps: SandboxDeps, container: Docker.Container, script: string, command: string, fill: boolean, sinks: { stdout: CappedBuffer; tail: TailBuffer }): Promise<Delivery> {
  const exec = await container.exec({ Cmd: ['sh', '-c', script, 'swt-run', command], AttachStdin: fill, AttachStdout: true, AttachStderr: true, User: SANDBOX_USER, WorkingDir: '/testbed' });
  const stream = (await exec.start({ hijack: true, stdin: fill })) as NodeJS.ReadWriteStream;
  const ended = demux(deps.docker, stream, (b) => sinks.stdout.push(b), (b) => sinks.tail.push(b));
  // A background child may hold the output open after the command: its exec's end counts too.
  const finished = Promise.race([ended, execEnded(exec, ended).then(() => withinMs(ended, 2_000))]);
  return { via: 'exec', stream, ended, finished, output: () => sinks.stdout.buffer(), exitCode: () => execExit(exec) };
}

/** The command on the stdin of the container's waiting process; undefined when it is too large for it (an exec then, and the process only waits). */
function toWaitingProcess(deps: SandboxDeps, attach: NodeJS.ReadWriteStream, script: string, command: string, sinks: { stdout: CappedBuffer; tail: TailBuffer }): Delivery | undefined {
  const tag = doneTag();
  const input = firstCommandInput(script, command, tag);
  if (!input) {
    attach.end();
    closeStream(attach);
    return undefined;
  }
  const watch = new DoneWatch(tag);
  // Output after a marker is no longer the command's (a background child's): not kept.
  let outDone = false;
  let errDone = false;
  const ended = demux(
    deps.docker,
    attach,
    (b) => {
      if (outDone) return;
      sinks.stdout.push(b);
      outDone = watch.stdout(b);
    },
    (b) => {
      if (errDone) return;
      sinks.tail.push(b);
      errDone = watch.stderr(b);
    },
  );
  attach.write(input);
  const mark = watch.markerBytes;
  return {
    via: 'stdin',
    stream: attach,
    ended,
    finished: Promise.race([watch.done, ended]).then(() => sinks.tail.cutAt(mark)),
    output: () => {
      const all = sinks.stdout.buffer();
      const at = all.lastIndexOf(mark);
      return at < 0 ? all : all.subarray(0, at);
    },
    exitCode: async () => watch.code,
  };
}

/** The command's exit code and memory flag; INTERRUPTED when the container or the command was stopped from outside the run. */
async function judgeExit(
  container: Docker.Container,
  kill: () => Promise<unknown>,
  r: { killed: boolean; code: number | null; state: { Running: boolean; OOMKilled: boolean }; ownStatus: string | undefined },
): Promise<{ code: number | null; oomKilled: boolean }> {
  let { code } = r;
  let oomKilled = !!r.state.OOMKilled;
  if (!r.killed && !r.state.Running && !oomKilled) {
    throw new SwtError('INTERRUPTED', 'the test container was stopped from outside the run (the Docker engine restarting, or someone stopping it)');
  }
  // Killed by a signal: the container's memory flag is set only once it ends, so it ends here.
  if (!r.killed && r.state.Running && (code === 137 || code === 143 || code === null)) {
    await kill();
    oomKilled = !!(await container.inspect()).State.OOMKilled;
    if (!oomKilled && r.ownStatus !== String(code)) throw new SwtError('INTERRUPTED', `the test command was killed from outside the run (exit ${code})`);
  }
  if (r.ownStatus !== undefined && code === null) code = Number(r.ownStatus);
  return { code, oomKilled };
}

/** What stdout may hold: the reports' tar (collectOutFiles' bounds) and its headers; past it, the engine is asked. */
const STDOUT_MAX = 66 * 1024 ** 2;

/** Keeps the first `max` bytes written; past them, nothing (overflowed). */
class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private over = false;
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  push(b: Buffer): void {
    if (this.over || this.size + b.length > this.max) {
      this.over = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(b);
    this.size += b.length;
  }
  buffer(): Buffer {
    return this.over ? Buffer.alloc(0) : Buffer.concat(this.chunks);
  }
}

/**
 * Streams the overlay into the exec's stdin (the archive read ahead, else read now) and closes it.
 * `end`, once the exec is over: the archive's failure (git could not give a blob; the exec's tar
 * saw a cut archive), or undefined when it was all sent; what was not sent by then is dropped (its
 * git stopped).
 */
function feedOverlay(prepared: PreparedContainer, stdin: NodeJS.WritableStream): { end: () => Promise<Error | undefined> } {
  // A container that stopped reading (its tar failed) ends the socket: FILL_FAILED says the rest.
  (stdin as unknown as { on: (e: string, f: () => void) => void }).on('error', () => undefined);
  const ahead = prepared.fillAhead;
  // Taken once: a retry through the engine's copy (FILL_FAILED) reads the overlay again.
  delete prepared.fillAhead;
  if (ahead) {
    let settled = false;
    let failed: Error | undefined;
    void ahead.archive.then(
      (archive) => {
        settled = true;
        stdin.end(archive);
      },
      (e: Error) => {
        settled = true;
        failed = e;
        stdin.end();
      },
    );
    return {
      async end() {
        // An exec over before its archive was read: the read stops, and what the exec saw says the rest.
        if (!settled) ahead.cancel();
        return settled ? failed : undefined;
      },
    };
  }
  const tar = overlayTar(prepared.state.repo, prepared.plan, { env: prepared.state.env });
  let failed: Error | undefined;
  let sent = false;
  tar.once('error', (e: Error) => {
    failed = e;
    stdin.end();
  });
  tar.once('end', () => (sent = true));
  // At a signal the copy ends first (git's readers with it), as the engine's copy does.
  const forget = onInterrupt(() => tar.destroy(new Error('the process is stopping')));
  tar.pipe(stdin);
  return {
    async end() {
      forget();
      if (!sent && !failed) tar.destroy();
      return failed;
    },
  };
}

/** The exec's exit code (null while it still runs: the stream can end a moment before the engine marks it exited). */
async function execExit(exec: Docker.Exec): Promise<number | null> {
  let info = await exec.inspect();
  for (let i = 0; info.Running && i < 40; i++) {
    await new Promise((r) => setTimeout(r, 25));
    info = await exec.inspect();
  }
  return info.Running ? null : info.ExitCode;
}

/** Resolves once the engine says the exec ended (looked at every half second). */
async function execEnded(exec: Docker.Exec, ended: Promise<void>): Promise<void> {
  let done = false;
  void ended.then(() => (done = true));
  while (!done) {
    await new Promise((r) => setTimeout(r, 500));
    if (done) return;
    const info = await exec.inspect().catch(() => ({ Running: false }));
    if (!info.Running) return;
  }
}
