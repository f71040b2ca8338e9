import pLimit from 'p-limit';
import { envValues } from '../settings/index.js';
import { logger as rootLogger, type Logger } from '../util/logger.js';
import { loadCaBundle, type CaBundle } from './images/caCertificates.js';
import { ceilingsFromEnv, clampLimits } from './containers/ceilings.js';
import { admitState, startIdleContainer, limitsFor, type SandboxDeps } from './containers/container.js';
import { discardWarm, prewarmRun, runInSandbox, warmKey, type PrewarmedRun } from './containers/run.js';
import { WarmPool, type WarmPoolSettings } from './containers/warmPool.js';
import { connectDocker, dockerLocation, inspectImage, pingDocker, type Docker } from './docker.js';
import { ensureBaseImage } from './images/baseImages.js';
import { baseImageName, egressProxyImageName, parseBaseRef } from './images/imageRecipes.js';
import { ensureEgressImage } from './egress/egress.js';
import { egressSettings, type EgressSettings } from './egress/egressConfig.js';
import { envCacheSettings, evictEnvironments, type EnvCacheSettings } from './images/envCache.js';
import { ensureEnvironmentImage, type EnvironmentDeps } from './environments/environment.js';
import { environmentUpkeep } from './environments/upkeep.js';
import { liveContainerIds, reapOrphans } from './containers/liveContainers.js';
import { cpusetFromEnv, resolveLimits } from './containers/limits.js';
import { reapOrphanTempDirs } from '../util/tempDirs.js';
import { openSandboxSession } from './containers/session.js';
import { DEFAULT_LIMITS, type PreparedImage, type ResourceLimits, type Sandbox } from './types.js';

/** The Docker sandbox: environments (cached images), one-shot runs and long-lived sessions. */

export interface DockerSandboxOptions {
  /** A dockerode client; default: DOCKER_HOST or the local socket. */
  docker?: Docker;
  /**
   * Extra CA certificates baked into every image. Default: SWT_EXTRA_CA_CERTS, else
   * NODE_EXTRA_CA_CERTS; null for none. `caPaths` loads the bundle from these files instead.
   */
  caBundle?: CaBundle | null;
  caPaths?: string[];
  /** Defaults for every run and session (each run may override some, up to the ceilings). */
  limits?: Partial<ResourceLimits>;
  /** No run or session gets more; default: SWT_MAX_* (see ceilings.ts). */
  ceilings?: Partial<ResourceLimits>;
  /** Limits of dependency installs; default 4 GiB, 4096 pids, 2 CPUs, 20 min, 10 GiB of disk. */
  installLimits?: Partial<ResourceLimits>;
  /** Try `docker pull` before building base images offline (default: unless SWT_PULL=never). */
  pull?: boolean;
  /** Bytes of output kept (the tail) per run or exec; default 64 KiB. */
  outputBytes?: number;
  /** Hosts an install may reach through the egress proxy; default: SWT_EGRESS_ALLOW + the registries. */
  egress?: EgressSettings;
  /** Environment image cache: namespace, total size, lease; default: SWT_ENV_NAMESPACE, SWT_ENV_CACHE_GB, SWT_ENV_LEASE_SECONDS. */
  envCache?: Partial<EnvCacheSettings>;
  logger?: Logger;
  /** Idle run containers started ahead per environment in use (default: none; the App keeps 3). */
  warmPool?: WarmPoolSettings;
}

/** Pre-warmed run containers by run key: each is taken by one run (a fresh container per run). */
function prewarmedRuns(deps: SandboxDeps) {
  const warm = new Map<string, PrewarmedRun[]>();
  return {
    waiting: () => warm.size,
    take(key: string): PrewarmedRun | undefined {
      const list = warm.get(key);
      const p = list?.shift();
      if (list && list.length === 0) warm.delete(key);
      return p;
    },
    /** Holds `p` for the run of its key; the release removes it when no run took it. */
    hold(p: PrewarmedRun): () => Promise<void> {
      warm.set(p.key, [...(warm.get(p.key) ?? []), p]);
      return async () => {
        const list = warm.get(p.key);
        if (!list?.includes(p)) return; // a run took it
        list.splice(list.indexOf(p), 1);
        if (list.length === 0) warm.delete(p.key);
        await discardWarm(deps, p);
      };
    },
  };
}

function warmPool(deps: SandboxDeps, settings: WarmPoolSettings, runsUnderWay: () => boolean): WarmPool {
  const pool: WarmPool = new WarmPool(deps, settings, (image, l) => startIdleContainer(deps, image, l), () => runsUnderWay() || liveContainerIds().some((id) => !pool.holds(id)));
  return pool;
}

/** Base images and the egress proxy's, found or built; two at a time (a build mostly waits on Debian's mirror; builds of one rootfs wait for it once). */
async function prepareImages(docker: Docker, log: Logger, refs: readonly string[], o: { caBundle?: CaBundle; pull?: boolean; onProgress?: (msg: string) => void }): Promise<PreparedImage[]> {
  const timed = async (ref: string, name: string, ensure: () => Promise<string>): Promise<PreparedImage> => {
    const started = Date.now();
    const built = !(await inspectImage(docker, name));
    return { ref, image: await ensure(), built, ms: Date.now() - started };
  };
  const limit = pLimit(2);
  return Promise.all([
    ...refs.map((ref) => limit(() => timed(ref, baseImageName(parseBaseRef(ref), o.caBundle), () => ensureBaseImage(ref, { docker, caBundle: o.caBundle, onProgress: o.onProgress, logger: log, pull: o.pull })))),
    limit(() => timed('egress-proxy', egressProxyImageName(), () => ensureEgressImage(docker, log, o.onProgress))),
  ]);
}

/** The defaults and ceilings of runs and sessions, clamped; the CPU set read now, so a bad value fails here, not at some later container. */
function sandboxDeps(docker: Docker, log: Logger, opts: DockerSandboxOptions): SandboxDeps {
  const ceilings = { ...ceilingsFromEnv(), ...opts.ceilings };
  const limits = clampLimits(resolveLimits(DEFAULT_LIMITS, { ...(opts.outputBytes ? { outputBytes: opts.outputBytes } : {}), ...opts.limits }), ceilings);
  return { docker, log, limits, ceilings, cpuset: cpusetFromEnv() };
}

/** What environment builds need but the CAs (loaded lazily); read now, so a bad setting fails here. */
function environmentDeps(deps: SandboxDeps, opts: DockerSandboxOptions): EnvironmentDeps {
  return {
    docker: deps.docker,
    log: deps.log,
    installLimits: opts.installLimits,
    pull: opts.pull,
    cpuset: deps.cpuset,
    egress: opts.egress ?? egressSettings(),
    cache: envCacheSettings(undefined, opts.envCache),
    packageCacheBytes: envValues().SWT_PKG_CACHE_GB * 1e9,
  };
}

/** Lazy, once (again after a failure): the engine checked (DOCKER_UNREACHABLE), orphans reaped, the CAs loaded. */
function engineReady(docker: Docker, log: Logger, opts: DockerSandboxOptions): () => Promise<{ caBundle?: CaBundle }> {
  let ready: Promise<{ caBundle?: CaBundle }> | undefined;
  return () =>
    (ready ??= (async () => {
      await pingDocker(docker, { where: opts.docker ? 'the given Docker client' : dockerLocation() });
      await reapOrphans(docker).catch((e) => log.debug({ err: (e as Error).message }, 'reaping orphans failed'));
      await reapOrphanTempDirs();
      const caBundle = opts.caBundle === null ? undefined : (opts.caBundle ?? (await loadCaBundle({ paths: opts.caPaths })));
      return { caBundle };
    })().catch((e) => {
      ready = undefined;
      throw e;
    }));
}

export function createDockerSandbox(opts: DockerSandboxOptions = {}): Sandbox {
  const docker = opts.docker ?? connectDocker();
  const log = (opts.logger ?? rootLogger).child({ mod: 'sandbox' });
  const deps = sandboxDeps(docker, log, opts);
  const envDeps = environmentDeps(deps, opts);
  const init = engineReady(docker, log, opts);
  const warm = prewarmedRuns(deps);
  // The pool refills only while no run is under way or pre-warmed (nor any other container of this process).
  let running = 0;
  if (opts.warmPool && opts.warmPool.size > 0) deps.pool = warmPool(deps, opts.warmPool, () => running > 0 || warm.waiting() > 0);

  return {
    ceilings: deps.ceilings,
    async ensureEnvironment(spec, onProgress) {
      const { caBundle } = await init();
      return ensureEnvironmentImage({ ...envDeps, caBundle }, spec, onProgress);
    },
    async run(req) {
      await init();
      running++;
      try {
        return await runInSandbox(deps, req, warm.take(warmKey(req, limitsFor(deps, req.limits))));
      } finally {
        running--;
      }
    },
    prewarm(req, gate) {
      // After init: the engine is checked and orphans reaped before this container exists.
      return warm.hold(prewarmRun(deps, req, init(), gate));
    },
    admit: (req, what) => admitState(deps, req, what),
    async openSession(req) {
      await init();
      return openSandboxSession(deps, req);
    },
    async evictEnvironments() {
      await init();
      await environmentUpkeep();
      return evictEnvironments(docker, envDeps.cache);
    },
    upkeep: environmentUpkeep,
    async warmed() {
      await deps.pool?.settled();
    },
    async close() {
      await deps.pool?.drain();
      await environmentUpkeep();
    },
    async prepareImages(refs, onProgress) {
      const { caBundle } = await init();
      return prepareImages(docker, log, refs, { caBundle, pull: opts.pull, onProgress });
    },
  };
}

export { ensureBaseImage } from './images/baseImages.js';
export { capLimits, ceilingsFromEnv, describeCap, type CappedLimit } from './containers/ceilings.js';
export { loadCaBundle, type CaBundle } from './images/caCertificates.js';
export { connectDocker, diskUsage, pingDocker } from './docker.js';
export { removeAllLive } from './containers/liveContainers.js';
export type { WarmPoolSettings } from './containers/warmPool.js';
export type { PreparedImage, Sandbox, SandboxSession, Environment, EnvironmentSpec, RunRequest, RunOutcome, RepoState, ResourceLimits } from './types.js';
export { DEFAULT_LIMITS } from './types.js';
export { engineFreeDiskBytes } from './containers/engineDisk.js';
