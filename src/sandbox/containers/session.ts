import { Readable } from 'node:stream';
import { SwtError } from '../../util/errors.js';
import { closeStream, demux, isBinary, readTarFiles, singleFileTar, TailBuffer, untilDeadline } from './containerIo.js';
import { watchLimits } from './diskWatch.js';
import { diskLimitText, type DiskLimitReason } from './limits.js';
import { killNow, type Docker } from '../docker.js';
import { openRepo, openState, SANDBOX_GID, SANDBOX_UID, type GitRepo, type StateTree } from '../../repo/git.js';
import { listTreeEntries, readTreeFiles } from '../../repo/objects.js';
import { removeContainer, haltIfInterrupted } from './liveContainers.js';
import { limitsFor, prepareContainer, overlayPrelude, SANDBOX_USER, type PreparedContainer, type SandboxDeps } from './container.js';
import { confineRepoPath } from '../../util/repoPath.js';
import { canonicalDiff, type CanonicalChange } from '../../patch/canonical.js';
import { WHOLE_READ_MAX_BYTES, type FileHead, type ResourceLimits, type RunRequest, type SandboxSession } from '../types.js';

/**
 * A long-lived sandbox (same limits, no network) for an agent's tools: exec, read/write files in
 * /testbed, and a diff of everything created, modified or deleted since the session started.
 */

const START_MARKER = '/tmp/.swt-session-start';
/** Uploads land here, not in /tmp: the archive API cannot write into a tmpfs. */
const UPLOAD_DIR = '/home/swt';

/** Directories whose contents never belong in a diff. */
export const DIFF_EXCLUDED_DIRS = ['.git', 'node_modules', '__pycache__', '.pytest_cache', '.mypy_cache', '.ruff_cache', '.tox', '.nox', '.cache', '.npm', '.nyc_output', '.venv'];

export function isExcludedFromDiff(path: string): boolean {
  const segs = path.split('/');
  return segs.some((s) => DIFF_EXCLUDED_DIRS.includes(s) || s.endsWith('.egg-info')) || path.endsWith('.pyc');
}

/** The largest file diff() reads back. */
const DIFF_FILE_MAX_BYTES = 16 * 1024 ** 2;

function findScript(): string {
  const prune = [...DIFF_EXCLUDED_DIRS.map((d) => `-name '${d}'`), `-name '*.egg-info'`].join(' -o ');
  const base = `find . \\( ${prune} \\) -prune -o`;
  return [
    'cd /testbed',
    `printf 'NEWER\\0'`,
    // Past the bound a file is not read back (diff() skips it): never tarred into memory.
    `${base} -type f -size -${DIFF_FILE_MAX_BYTES + 1}c -newer ${START_MARKER} ! -name '*.pyc' -print0`,
    `printf 'ALL\\0'`,
    `${base} \\( -type f -o -type l \\) -print0`,
  ].join('\n');
}

interface ExecOptions {
  timeoutMs: number;
  /** Bytes of combined output kept (the tail). */
  maxBytes: number;
  /** stdout apart from stderr (whole, up to maxStdoutBytes). */
  separate?: boolean;
  /** The most stdout kept when separate (default 320 MiB); past it the exec is cut off. */
  maxStdoutBytes?: number;
}

interface ExecResult {
  exitCode: number | null;
  timedOut: boolean;
  stdout: Buffer;
  output: string;
}

async function execIn(
  docker: Docker,
  container: Docker.Container,
  argv: string[],
  opts: ExecOptions,
): Promise<ExecResult> {
  try {
    return await execOnce(docker, container, argv, opts);
  } catch (e) {
    await haltIfInterrupted();
    throw e;
  }
}

async function execOnce(
  docker: Docker,
  container: Docker.Container,
  argv: string[],
  opts: ExecOptions,
): Promise<ExecResult> {
  const exec = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true, User: SANDBOX_USER, WorkingDir: '/testbed' });
  const stream = await exec.start({ hijack: true, stdin: false });
  const combined = new TailBuffer(opts.maxBytes);
  const stdout: Buffer[] = [];
  const maxStdout = opts.maxStdoutBytes ?? 320 * 1024 ** 2;
  let kept = 0;
  const keep = (b: Buffer) => {
    if (kept >= maxStdout) return;
    stdout.push(b.subarray(0, maxStdout - kept));
    kept += Math.min(b.length, maxStdout - kept);
    // Bounded in what is kept and in what is read: past the bound, the stream is closed.
    if (kept >= maxStdout) closeStream(stream);
  };
  const started = Date.now();
  const ended = demux(
    docker,
    stream,
    (b) => (opts.separate ? keep(b) : combined.push(b)),
    (b) => combined.push(b),
  );
  const hung = (await untilDeadline(ended, opts.timeoutMs + 15_000)) === 'timeout';
  await haltIfInterrupted();
  if (hung) closeStream(stream);
  let info = await exec.inspect();
  for (let i = 0; info.Running && !hung && i < 20; i++) {
    await new Promise((r) => setTimeout(r, 50));
    info = await exec.inspect();
  }
  const elapsed = Date.now() - started;
  const exitCode = info.Running ? null : info.ExitCode;
  const timedOut = hung || (exitCode === 137 && elapsed >= opts.timeoutMs * 0.9);
  return { exitCode: timedOut ? null : exitCode, timedOut, stdout: Buffer.concat(stdout), output: combined.toString() };
}

function splitNul(buf: Buffer): string[] {
  return buf.toString('utf8').split('\0').filter(Boolean);
}

export async function openSandboxSession(deps: SandboxDeps, req: Omit<RunRequest, 'command'>): Promise<SandboxSession> {
  const { docker } = deps;
  const limits = limitsFor(deps, req.limits);
  const repo = await openRepo(req.repo);
  const state = await openState(repo, req.state);
  const { container } = await startSession(deps, req, state, limits);
  const disk = watchSessionDisk(deps, container, limits);
  let closed = false;
  let uploads = 0;
  const ensureOpen = () => {
    if (closed) throw new SwtError('BAD_INPUT', 'the sandbox session is closed');
    const over = disk.over();
    if (over) throw new SwtError('BAD_INPUT', over);
  };
  const session: SandboxSession = {
    async exec(command, opts = {}) {
      ensureOpen();
      return sessionExec(docker, container, command, { timeoutMs: opts.timeoutMs ?? limits.timeoutMs, maxBytes: limits.outputBytes }, disk.over);
    },

    async readFileHead(path, maxBytes) {
      ensureOpen();
      return readHead(docker, container, path, maxBytes);
    },

    async readFile(path) {
      const head = await session.readFileHead(path, WHOLE_READ_MAX_BYTES);
      if (head.cut) throw new SwtError('BAD_INPUT', `${confineRepoPath(path)} is ${head.bytes} bytes, more than the ${WHOLE_READ_MAX_BYTES / 1024 ** 2} MiB a whole read takes`);
      return head.text;
    },

    async writeFile(path, content) {
      ensureOpen();
      await writeInto(docker, container, path, content, ++uploads);
    },

    async diff() {
      ensureOpen();
      return sessionDiff(deps, container, repo, state);
    },

    async close() {
      if (closed) return;
      closed = true;
      try {
        await disk.stop();
        await removeContainer(docker, container.id);
      } finally {
        await state.dispose();
      }
    },
  };
  return session;
}

/** The session's disk watch: past its limit the container is killed, and `over` says so from then on. */
function watchSessionDisk(deps: SandboxDeps, container: Docker.Container, limits: ResourceLimits) {
  let reason: DiskLimitReason | undefined;
  const disk = watchLimits(deps.docker, container.id, limits, {
    minIntervalMs: 2_000,
    onExceeded: async (r) => {
      reason = r;
      deps.log.warn({ container: container.id, limit: diskLimitText(limits, r) }, 'session killed: disk limit');
      await killNow(container);
    },
  });
  return { stop: () => disk.stop(), over: () => (reason ? `killed: ${diskLimitText(limits, reason)}; the session is over` : undefined) };
}

/** A command of the session's, killed at its timeout; once the session is over for its disk, that is its output. */
async function sessionExec(docker: Docker, container: Docker.Container, command: string, o: { timeoutMs: number; maxBytes: number }, over: () => string | undefined) {
  try {
    const r = await execIn(docker, container, ['timeout', '-s', 'KILL', `${Math.max(0.1, o.timeoutMs / 1000)}s`, 'sh', '-c', command], o);
    const killed = over();
    if (killed) return { exitCode: null, output: `${r.output}\n[swt: ${killed}]`, timedOut: false };
    return { exitCode: r.exitCode, output: r.output, timedOut: r.timedOut };
  } catch (e) {
    const killed = over();
    if (killed) return { exitCode: null, output: `[swt: ${killed}]`, timedOut: false };
    throw e;
  }
}

/**
 * The head of a file in /testbed, read as the sandbox user (permissions apply, symlinks are
 * followed): stat's size, then at most max + 1 bytes (one more tells a device or a growing file is
 * longer): a huge (or sparse) file never crosses the socket, nor sits in memory.
 */
async function readHead(docker: Docker, container: Docker.Container, path: string, maxBytes: number): Promise<FileHead> {
  const rel = confineRepoPath(path);
  const max = Math.max(0, Math.floor(maxBytes));
  const r = await execIn(docker, container, ['sh', '-c', 'stat -L -c %s -- "$1" && head -c "$2" -- "$1"', 'swt-read', `/testbed/${rel}`, String(max + 1)], {
    timeoutMs: 60_000,
    maxBytes: 4096,
    separate: true,
    maxStdoutBytes: max + 65,
  });
  if (r.exitCode !== 0) throw new SwtError('BAD_INPUT', `cannot read ${rel} in the sandbox: ${r.output.trim().replace(/^(stat|head): /, '') || `exit ${r.exitCode}`}`);
  const nl = r.stdout.indexOf(10);
  const got = r.stdout.subarray(nl + 1);
  const bytes = Math.max(Number(r.stdout.subarray(0, nl).toString('utf8')) || 0, got.length);
  return { text: got.subarray(0, max).toString('utf8'), bytes, cut: bytes > max };
}

/** The session's changes against its state, as a canonical diff: files newer than the start, and tracked files gone. */
async function sessionDiff(deps: SandboxDeps, container: Docker.Container, repo: GitRepo, state: StateTree): Promise<string> {
  const { docker, log } = deps;
  const listing = await execIn(docker, container, ['sh', '-c', findScript()], { timeoutMs: 120_000, maxBytes: 64 * 1024, separate: true });
  if (listing.exitCode !== 0) throw new Error(`listing changed files failed: ${listing.output.trim()}`);
  const parts = splitNul(listing.stdout);
  const allAt = parts.indexOf('ALL');
  const clean = (p: string) => p.replace(/^\.\//, '');
  const newer = parts.slice(1, allAt).map(clean).filter((p) => !isExcludedFromDiff(p));
  const present = new Set(parts.slice(allAt + 1).map(clean));
  const entries = (await listTreeEntries(repo, state.tree, state.env)).filter((e) => e.type === 'blob' && !isExcludedFromDiff(e.path));
  const modes = new Map(entries.map((e) => [e.path, e.mode]));
  const deleted = entries.map((e) => e.path).filter((p) => !present.has(p));

  const current = new Map<string, { content: Buffer; mode: number }>();
  for (let i = 0; i < newer.length; i += 200) {
    const chunk = newer.slice(i, i + 200);
    const r = await execIn(docker, container, ['tar', '-C', '/testbed', '-cf', '-', '--', ...chunk], {
      timeoutMs: 120_000,
      maxBytes: 64 * 1024,
      separate: true,
    });
    for (const [name, f] of await readTarFiles(Readable.from([r.stdout]), { maxFileBytes: DIFF_FILE_MAX_BYTES, maxTotalBytes: 256 * 1024 ** 2 })) current.set(name, f);
  }
  const before = await readTreeFiles(repo, state.tree, [...newer, ...deleted], state.env);
  const changes: CanonicalChange[] = [];
  const skipped: string[] = [];
  for (const p of newer) {
    const now = current.get(p);
    if (!now) continue;
    const old = before.get(p);
    if (old && old.equals(now.content)) continue;
    if (isBinary(now.content) || (old && isBinary(old))) {
      skipped.push(p);
      continue;
    }
    changes.push({ path: p, before: old ? old.toString('utf8') : null, after: now.content.toString('utf8'), mode: now.mode & 0o111 ? '100755' : '100644' });
  }
  for (const p of deleted) {
    const old = before.get(p);
    if (!old) continue;
    if (isBinary(old)) {
      skipped.push(p);
      continue;
    }
    changes.push({ path: p, before: old.toString('utf8'), after: null, oldMode: modes.get(p) });
  }
  if (skipped.length) log.warn({ files: skipped }, 'binary files left out of the session diff');
  return canonicalDiff(changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
}

/** Writes a file into /testbed as the sandbox user (upload `n` of the session). */
async function writeInto(docker: Docker, container: Docker.Container, path: string, content: string, n: number): Promise<void> {
  const rel = confineRepoPath(path);
  // Upload to /tmp, then write it in place as the sandbox user: permissions apply, an existing
  // file keeps its mode, and the mtime is a precise "now" (diff() relies on it).
  const upload = `.swt-upload-${process.pid}-${n}`;
  await container.putArchive(singleFileTar(upload, Buffer.from(content, 'utf8'), { uid: SANDBOX_UID, gid: SANDBOX_GID }) as unknown as NodeJS.ReadableStream, {
    path: UPLOAD_DIR,
  });
  const script = 'mkdir -p -- "$(dirname -- "$2")" && cat -- "$1" > "$2"; rc=$?; rm -f -- "$1"; exit $rc';
  const t = await execIn(docker, container, ['sh', '-c', script, 'swt-write', `${UPLOAD_DIR}/${upload}`, `/testbed/${rel}`], { timeoutMs: 60_000, maxBytes: 4096 });
  if (t.exitCode !== 0) throw new SwtError('BAD_INPUT', `cannot write ${rel} in the sandbox: ${t.output.trim() || `exit ${t.exitCode}`}`);
}

/** The session's container, started, with the state's overlay applied; on failure nothing is left. */
async function startSession(deps: SandboxDeps, req: Omit<RunRequest, 'command'>, state: StateTree, limits: ResourceLimits): Promise<PreparedContainer> {
  const { docker } = deps;
  let prepared: PreparedContainer | undefined;
  try {
    prepared = await prepareContainer(deps, { env: req.env, repo: req.repo, state, role: 'session', cmd: () => ['sleep', 'infinity'], limits });
    await prepared.container.start();
    const init = await execIn(docker, prepared.container, ['sh', '-c', `${overlayPrelude(prepared.plan)}\ntouch ${START_MARKER}`], {
      timeoutMs: 60_000,
      maxBytes: 16 * 1024,
    });
    if (init.exitCode !== 0) throw new Error(`preparing the session failed (${init.exitCode}): ${init.output.trim()}`);
  } catch (e) {
    await haltIfInterrupted();
    if (prepared) await removeContainer(docker, prepared.id).catch(() => undefined);
    await state.dispose();
    throw e;
  }
  return prepared;
}
