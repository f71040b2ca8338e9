/** The contract between the harness/generation layers and the Docker sandbox. */
import type { RepoState } from '../repo/state.js';

export type { RepoState };

export interface ResourceLimits {
  memoryBytes: number;
  pids: number;
  cpus: number;
  /** Wall clock; the container is killed when it runs out. */
  timeoutMs: number;
  /** What the container may write to its filesystem (/testbed, home); killed past it ("disk limit"). */
  diskBytes: number;
  /** Bytes of output kept (the tail) per run or exec. */
  outputBytes: number;
}

export const DEFAULT_LIMITS: ResourceLimits = {
  memoryBytes: 2 * 1024 ** 3,
  pids: 512,
  cpus: 1,
  timeoutMs: 5 * 60_000,
  diskBytes: 4 * 1024 ** 3,
  outputBytes: 64 * 1024,
};


export interface EnvironmentSpec {
  /** Path of a local git repository (working tree or bare mirror). */
  repo: string;
  /** Revision whose files are installed into the image at /testbed. */
  rev: string;
  /** A conventional reference (`node:18`, `python:3.11`); built offline when it cannot be pulled. */
  baseImage: string;
  /** References that serve as well when `baseImage` can only be stood in for offline, best first (older Pythons the project allows). */
  fallbackImages?: readonly string[];
  /** Shell command run in /testbed while the image is built, online through the egress proxy only; empty for none. */
  install: string;
  /**
   * Patches applied on top of `rev` before the install (base + a fix patch that changes the
   * manifests). The image still holds `rev`'s tracked files: runs overlay the rest.
   */
  patches?: string[];
  /**
   * Whose package cache the install shares and whose environment images it may reuse (a
   * repository's identity, e.g. `owner/name`); default: the repository's path on this host. Never
   * shared between repositories: it is part of the environment key and labels.
   */
  cacheScope?: string;
  /** The runner's ecosystem's steps around the install (failures ignored). */
  warm?: WarmUp;
  /** false for an install of an untrusted head (a fork's, or a non-writer's): it must not write into the repository's package cache. */
  cacheWrite?: boolean;
}

/**
 * What an ecosystem runs around an install: `before` (Ecosystem.beforeInstall: its caches seeded
 * from the package cache, the proxy where no variable reaches), `after` (Ecosystem.warm: offline,
 * into the image).
 */
export interface WarmUp {
  before?: string;
  after?: string;
  /** Its installs write only under /testbed and home: what one made is saved in the package cache, by environment key, and extracted in place of the same install (Ecosystem.savesInstall). */
  saveInstall?: boolean;
}

/** An environment image: base image + repository snapshot + installed dependencies. */
export interface Environment {
  image: string;
  /** Cache key: (base image, install command, hash of dependency manifests and lockfiles). */
  key: string;
  baseImage: string;
  /** Commit whose files are in /testbed inside the image; runs overlay only what differs from it. */
  snapshotRev: string;
  cached: boolean;
  buildMs: number;
  /** Built from this nearest environment layer (another revision's installed tree), not from the base image. */
  from?: string;
  /** The install's notes file as the build read it (undefined: an image from before the label; read it from the image). */
  installNotes?: string;
}

export interface RunRequest {
  env: Environment;
  repo: string;
  state: RepoState;
  /** Run with `sh -c` in /testbed, as a non-root user, with no network. */
  command: string;
  limits?: Partial<ResourceLimits>;
  /** Aborting it stops the run's container at once: SwtError('CANCELLED'). */
  signal?: AbortSignal;
  /**
   * Keep the container up after the command (RunOutcome.kept) for more commands of the same run:
   * the same state and the same trust only (a side's confirmation reruns); the caller releases it.
   */
  keep?: boolean;
}

/**
 * A run's container kept up after its command (RunRequest.keep): its writes and its /tmp (the
 * runners' caches) stay. It belongs to that run's state and trust: never give it another side's
 * or another request's commands.
 */
export interface KeptContainer {
  /** Runs another command there; its reports come from an emptied /swt-out. Not concurrent. */
  rerun(command: string, signal?: AbortSignal): Promise<RunOutcome>;
  /** Removes the container (idempotent). */
  release(): Promise<void>;
}

export interface RunOutcome {
  exitCode: number | null;
  timedOut: boolean;
  oomKilled: boolean;
  /** Killed for writing more than its disk limit. */
  diskLimit?: boolean;
  /** Combined stdout and stderr, tail-trimmed. */
  output: string;
  /** Files the command wrote under /swt-out (e.g. JUnit XML), by path relative to it. */
  files: Record<string, string>;
  durationMs: number;
  /** With RunRequest.keep, when the container survived the command (not killed for time, memory or disk). */
  kept?: KeptContainer;
}

/** The start of a file: `cut` when the file (of `bytes` bytes) holds more than `text`. */
export interface FileHead {
  text: string;
  bytes: number;
  cut: boolean;
}

/** The most a whole-file read takes from a container (edit_file reads, then writes back, a whole file). */
export const WHOLE_READ_MAX_BYTES = 8 * 1024 ** 2;

/** A long-lived sandboxed container on a repository state, for an agent's tools. */
export interface SandboxSession {
  exec(command: string, opts?: { timeoutMs?: number }): Promise<{ exitCode: number | null; output: string; timedOut: boolean }>;
  /** A whole file of /testbed; refused (BAD_INPUT) past WHOLE_READ_MAX_BYTES. */
  readFile(path: string): Promise<string>;
  /** At most `maxBytes` from the start of a file: never more is read from the container nor kept. */
  readFileHead(path: string, maxBytes: number): Promise<FileHead>;
  writeFile(path: string, content: string): Promise<void>;
  /** Unified diff of the working tree in /testbed against the state it started from. */
  diff(): Promise<string>;
  close(): Promise<void>;
}

export interface Sandbox {
  /** The operator's ceilings (SWT_MAX_*): no run gets more, whatever it asks for. */
  readonly ceilings?: ResourceLimits;
  ensureEnvironment(spec: EnvironmentSpec, onProgress?: (msg: string) => void): Promise<Environment>;
  run(req: RunRequest): Promise<RunOutcome>;
  openSession(req: Omit<RunRequest, 'command'>): Promise<SandboxSession>;
  /**
   * Refuses (SwtError STATE_TOO_LARGE) a state whose files would not fit a run's disk or file
   * limit in `req.env`, from git's object sizes alone, before any container: `what` names it in
   * the reason (`head's files`). Every run and session checks this too, with a plainer name.
   */
  admit?(req: Omit<RunRequest, 'command'>, what: string): Promise<void>;
  /**
   * Starts the container of a coming `run` with this request now (it waits for the run to start
   * its command); the next `run` with the same request takes it. Returns a release that removes it
   * when no run took it. `gate`: no container is made or taken before it resolves (one that
   * rejects makes none); the files are planned and counted meanwhile.
   */
  prewarm?(req: RunRequest, gate?: Promise<unknown>): () => Promise<void>;
  /** Removes least recently used environment images past the cache's size (never one in use); what it removed. */
  evictEnvironments?(): Promise<{ removed: string[]; totalBytes: number }>;
  /** Waits for the upkeep builds started after returning (eviction, package-cache pruning: off a build's path). */
  upkeep?(): Promise<void>;
  /** Waits until the warm pool holds what the runs so far asked of it (idle containers started ahead). */
  warmed?(): Promise<void>;
  /** Removes the warm pool's idle containers and waits for the upkeep: call once, when done with the sandbox. */
  close?(): Promise<void>;
  /**
   * Finds or builds these base images, and the install step's egress proxy image, now: a machine
   * prepared ahead does not make its first job wait minutes for them. In order; what each took.
   */
  prepareImages?(refs: readonly string[], onProgress?: (msg: string) => void): Promise<PreparedImage[]>;
}

export interface PreparedImage {
  /** As asked (`golang:1.24`), or `egress-proxy`. */
  ref: string;
  /** The local image that stands for it. */
  image: string;
  /** False when it was there already. */
  built: boolean;
  ms: number;
}
