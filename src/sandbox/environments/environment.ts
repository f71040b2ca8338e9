import { realpath } from 'node:fs/promises';
import { envValues } from '../../settings/index.js';
import { SwtError } from '../../util/errors.js';
import type { Logger } from '../../util/logger.js';
import { shellQuote } from '../../util/shell.js';
import { ensureBaseImageInfo } from '../images/baseImages.js';
import type { CaBundle } from '../images/caCertificates.js';
import { readTarFiles, singleFileTar } from '../containers/containerIo.js';
import { INSTALL_NOTES_NAME } from '../../ecosystems/command.js';
import { storageOptSupported } from '../containers/diskWatch.js';
import { engineCpus, type Docker } from '../docker.js';
import { withInstallNetwork, type InstallNetwork } from '../egress/egress.js';
import type { EgressSettings } from '../egress/egressConfig.js';
import { markUsed, type EnvCacheSettings } from '../images/envCache.js';
import { ENV_LABELS, envImageTag, environmentFamily, environmentKey } from '../images/envKey.js';
import { isDependencyManifest } from '../../ecosystems/index.js';
import { openRepo, openState, type GitRepo, type StateTree } from '../../repo/git.js';
import { changedFiles, emptyTree, listTreeBlobs } from '../../repo/objects.js';
import { admitCopy, copyPlan } from '../containers/copyIn.js';
import { runGit } from '../../repo/gitExec.js';
import { containerLabels, hostConfigFor, resolveLimits } from '../containers/limits.js';
import { haltIfInterrupted, registerContainer, removeContainer, retireContainer, createTracked } from '../containers/liveContainers.js';
import { singleFlight, withFileLock } from '../../util/lock.js';
import { deletionScript, planOverlay, type OverlayPlan } from '../../repo/overlay.js';
import { installOrRestore, restoreOnly, saveInstall, TRACKED_LIST, trackedList } from './savedInstall.js';
import { CACHE_MOUNT, cacheEnv, cacheVolumeName, ensureCacheVolume, isNewEmptyVolume, markFilled, withThrowawayCache } from './packageCache.js';
import { scheduleUpkeep } from './upkeep.js';
import { findEnvironment, rememberEnvironment } from './envLookup.js';
import { nearestLayer, nearestLayerOn, type NearestLayer } from './nearestLayer.js';
import { NoSavedInstall, runInstall } from './installRun.js';
import type { Environment, EnvironmentSpec, ResourceLimits, WarmUp } from '../types.js';

/**
 * Environment images: base image + the repository's files at `rev` in /testbed (owned by the
 * sandbox user) + the install command run there. The install reaches only the package registries,
 * through the egress proxy, with the repository's package cache mounted (an untrusted head's: a
 * throwaway copy of it). Cached by a key over the repository's scope, the install's trust, the
 * base image id, the install command and the dependency manifests; an image is reused only when
 * its snapshot is in the history of the revision asked for, and a hit never runs the install
 * again. A state with patches (base + a fix that changes the manifests) is installed as patched,
 * then its tracked files are put back to `rev`'s, so the image always holds `rev` plus what the
 * install made. A build whose manifests no image matches starts from the nearest layer
 * (nearestLayer.ts), with the source brought to the new revision.
 */

export const DEFAULT_INSTALL_LIMITS: ResourceLimits = {
  memoryBytes: 4 * 1024 ** 3,
  pids: 4096,
  cpus: 2,
  timeoutMs: 20 * 60_000,
  diskBytes: 10 * 1024 ** 3,
  outputBytes: 256 * 1024,
};

export interface EnvironmentDeps {
  docker: Docker;
  log: Logger;
  caBundle?: CaBundle;
  /** Limits of the install step; timeoutMs defaults to 20 min or SWT_INSTALL_TIMEOUT_MS. */
  installLimits?: Partial<ResourceLimits>;
  /** Try `docker pull` for base images (default: unless SWT_PULL=never). */
  pull?: boolean;
  egress: EgressSettings;
  /** The host CPUs install containers may use (SWT_CPUSET_CPUS). */
  cpuset?: string;
  cache: EnvCacheSettings;
  /** Total size of the package caches (SWT_PKG_CACHE_GB); least recently used ones go past it. */
  packageCacheBytes: number;
}

/** Where the fixed state's own versions of patched files wait while the install runs. */
const HOME = '/home/swt';
const RESTORE_DIR = `${HOME}/.swt-restore`;

function installLimitsFrom(deps: EnvironmentDeps): ResourceLimits {
  const fromEnv = envValues().SWT_INSTALL_TIMEOUT_MS;
  const base = { ...DEFAULT_INSTALL_LIMITS, ...(fromEnv ? { timeoutMs: fromEnv } : {}) };
  return resolveLimits(base, deps.installLimits);
}

/**
 * The install script: the ecosystem's step before it (quiet), the command, then (for a patched
 * state) the tracked files put back to `rev`'s, then the warm-up on the files the image keeps
 * (quiet; neither's failure changes anything).
 */
export function installScript(install: string, restore?: OverlayPlan, warm?: WarmUp, remove: string[] = [], saved?: SavedUse): string {
  // Files the nearest layer holds that the revision no longer has go first.
  const gone = deletionScript(remove);
  const quiet = (step: string) => `sh -c ${shellQuote(step.trim())} > /dev/null 2>&1 </dev/null || true`;
  const before = install.trim() && warm?.before?.trim() ? [quiet(warm.before)] : [];
  const run = saved?.only ? restoreOnly(saved.key) : saved?.extract ? installOrRestore(install, saved.key) : `sh -c ${shellQuote(install)} || exit $?`;
  const lines = ['cd /testbed', ...(gone ? [gone] : []), ...before, run];
  if (restore) {
    if (restore.write.length) lines.push(`cp -a ${RESTORE_DIR}/. /testbed/ || exit 70`);
    lines.push(`rm -rf ${RESTORE_DIR}`);
    const del = deletionScript(restore.delete);
    if (del) lines.push(del);
  }
  if (warm?.after?.trim()) lines.push(quiet(warm.after));
  // Not quiet's `sh -c`: it reads whether this shell extracted a saved install.
  if (saved) lines.push(`{ ${saveInstall(saved.key)}; } > /dev/null 2>&1 </dev/null || true`);
  return lines.join('\n');
}

interface BuildInput {
  repo: GitRepo;
  state: StateTree;
  commit: string;
  baseImage: string;
  key: string;
  tag: string;
  install: string;
  warm?: WarmUp;
  scope: string;
  /** false: the install gets a throwaway copy of the package cache (EnvironmentSpec.cacheWrite). */
  cacheWrite: boolean;
  family: string;
  /** The nearest layer the build starts from (undefined: the base image). */
  from?: NearestLayer;
  onProgress?: (m: string) => void;
}

/** How a build uses the saved installs: `extract` one in the install's place when there is one; `only` that, with no install (and no network) at all. */
interface SavedUse {
  key: string;
  extract: boolean;
  only?: boolean;
}

/** Builds and commits the image; what the install wrote in its notes file. */
async function buildEnvironment(deps: EnvironmentDeps, o: BuildInput): Promise<string> {
  if (!o.install.trim()) return commitEnvironment(deps, o, 'none');
  const install = (volume: string) => withInstallNetwork(deps.docker, deps.egress, deps.log, (net) => commitEnvironment(deps, o, net, volume), o.onProgress);
  if (!o.cacheWrite) return withThrowawayCache(deps.docker, o.scope, o.baseImage, install);
  const volume = await ensureCacheVolume(deps.docker, o.scope, o.baseImage);
  // A trusted build whose key has a saved install needs no network: no install network and no
  // egress proxy are set up (and torn down) for it; without one, the install runs as usual.
  if (o.warm?.saveInstall && !o.from && !isNewEmptyVolume(volume)) {
    try {
      return await commitEnvironment(deps, o, 'none', volume, true);
    } catch (e) {
      if (!(e instanceof NoSavedInstall)) throw e;
    }
  }
  try {
    return await install(volume);
  } finally {
    markFilled(volume);
  }
}

async function commitEnvironment(deps: EnvironmentDeps, o: BuildInput, net: InstallNetwork | 'none', volume?: string, restoreOnly = false): Promise<string> {
  const { docker, log } = deps;
  const limits = installLimitsFrom(deps);
  const { plan, restore, patched } = await planFiles(o);
  const install = o.install.trim();
  // Something to run: the install, or the warm-up alone (offline either way when there is no install).
  // A saved install stands for this key's only on a fresh tree (a nearest layer's would mix with it).
  const saved: SavedUse | undefined = install && volume && o.warm?.saveInstall ? { key: o.key, extract: !o.from, only: restoreOnly } : undefined;
  const script = install || o.warm?.after?.trim() ? installScript(install, restore, o.warm, plan.delete, saved) : '';
  const what = `the files of ${o.commit.slice(0, 12)}${patched ? ' (patched)' : ''}`;
  // Counted before the install container exists: the tree and the patched files' copies together.
  await admitCopy(o.repo, restore ? [plan, restore] : [plan], { env: o.state.env, limits, what, role: 'install' });
  const container = await createInstallContainer(deps, o.from?.image ?? o.baseImage, { script, limits, net, volume, restoreOnly });
  let committed = false;
  try {
    o.onProgress?.(`copying ${plan.write.length} files of ${o.commit.slice(0, 12)}${patched ? ' (patched)' : ''} into /testbed${o.from ? ` over the nearest layer ${o.from.image}` : ''}`);
    await copySnapshot(container, o, { plan, restore, what, timeoutMs: limits.timeoutMs });
    if (saved) await putTrackedList(o, container, patched);
    const run = { limits, install, volume, patched, restoreOnly, warmAfter: o.warm?.after, onProgress: o.onProgress };
    if (script) await runInstall({ docker, log, egressHosts: deps.egress.hosts }, container, run);
    const notes = install ? await installNotesOf(container) : '';
    await commitImage(deps, container, o, notes);
    committed = true;
    return notes;
  } catch (e) {
    await haltIfInterrupted();
    throw e;
  } finally {
    // Once committed, the container is removed off the build's path; not when its install network
    // is torn down next (a network goes only once its containers have), nor after a failure.
    if (committed && net === 'none') retireContainer(docker, container.id);
    else await removeContainer(docker, container.id).catch((e) => log.warn({ err: (e as Error).message }, 'removing the install container failed'));
  }
}

/**
 * The files to copy: from the nearest layer, what changed since its snapshot and every manifest
 * (an install may have rewritten one); for a patched state, the tracked files to put back after.
 */
async function planFiles(o: BuildInput): Promise<{ plan: OverlayPlan; restore?: OverlayPlan; patched: boolean }> {
  const changes = await changedFiles(o.repo, o.from ? `${o.from.snapshotRev}^{tree}` : await emptyTree(o.repo), o.state.tree, o.state.env);
  const all = o.from ? await changedFiles(o.repo, await emptyTree(o.repo), o.state.tree, o.state.env) : [];
  const manifests = all.filter((c) => isDependencyManifest(c.path) && !changes.some((d) => d.path === c.path));
  const plan = planOverlay([...changes, ...manifests]);
  const patched = o.state.tree !== (await runGit(o.repo.path, ['rev-parse', `${o.commit}^{tree}`])).stdout.toString('utf8').trim();
  const restore = patched ? planOverlay(await changedFiles(o.repo, o.state.tree, `${o.commit}^{tree}`, o.state.env)) : undefined;
  return { plan, restore, patched };
}

/** The install container, created (not started) and tracked; the install's variables go in through `env`, so the committed image carries none. */
async function createInstallContainer(
  deps: EnvironmentDeps,
  image: string,
  c: { script: string; limits: ResourceLimits; net: InstallNetwork | 'none'; volume?: string; restoreOnly: boolean },
): Promise<Docker.Container> {
  const { docker } = deps;
  const secs = Math.max(1, Math.ceil(c.limits.timeoutMs / 1000));
  const vars = c.net === 'none' ? (c.restoreOnly ? cacheEnv() : []) : [...c.net.env, ...cacheEnv()];
  const [cpus, storageOpt] = await Promise.all([engineCpus(docker), storageOptSupported(docker, image)]);
  const container = await createTracked(() => docker.createContainer({
    Image: image,
    Cmd: c.script ? ['env', ...vars, 'sh', '-c', `exec timeout -s KILL ${secs} sh -c "$1"`, 'swt-install', c.script] : ['true'],
    Entrypoint: [],
    User: '1000:1000',
    WorkingDir: '/testbed',
    Env: [],
    Labels: containerLabels('install'),
    AttachStdout: true,
    AttachStderr: true,
    HostConfig: hostConfigFor({
      role: 'install',
      limits: c.limits,
      network: c.net === 'none' ? 'none' : c.net.network,
      engineCpus: cpus,
      storageOpt,
      mounts: c.volume ? [{ Type: 'volume', Source: c.volume, Target: CACHE_MOUNT }] : [],
      cpuset: deps.cpuset,
    }),
  }));
  registerContainer(docker, container.id);
  return container;
}

/** The install container committed as the environment image, labelled with what it holds and where it came from. */
async function commitImage(deps: EnvironmentDeps, container: Docker.Container, o: BuildInput, notes: string): Promise<void> {
  const [repoName, tag] = o.tag.split(':') as [string, string];
  await container.commit({
    repo: repoName,
    tag,
    changes: [
      `LABEL ${ENV_LABELS.key}=${o.key} ${ENV_LABELS.snapshotRev}=${o.commit} ${ENV_LABELS.baseImage}=${o.baseImage} ${ENV_LABELS.namespace}=${deps.cache.namespace} ${ENV_LABELS.scope}=${JSON.stringify(o.scope)} ${ENV_LABELS.trusted}=${o.cacheWrite} ${ENV_LABELS.family}=${o.family} ${ENV_LABELS.depth}=${o.from ? o.from.depth + 1 : 0} ${ENV_LABELS.fromBytes}=${o.from?.bytes ?? 0} ${ENV_LABELS.installNotes}=${Buffer.from(notes).toString('base64')} swt-bot.role=env-image swt-bot.pid=none swt-bot.host=none`,
      'CMD ["/bin/sh"]',
      'WORKDIR /testbed',
      'USER 1000:1000',
    ],
  } as object);
}

/** The state's files into /testbed, and the patched files' own versions aside (restore); both within the install's time limit. */
async function copySnapshot(container: Docker.Container, o: BuildInput, c: { plan: OverlayPlan; restore?: OverlayPlan; what: string; timeoutMs: number }): Promise<void> {
  const deadline = Date.now() + c.timeoutMs;
  await copyPlan(container, o.repo, c.plan, { env: o.state.env, what: c.what, timeoutMs: c.timeoutMs, path: '/testbed' });
  if (!c.restore?.write.length) return;
  const to = { prefix: RESTORE_DIR.split('/').pop()!, path: RESTORE_DIR.slice(0, RESTORE_DIR.lastIndexOf('/')) };
  await copyPlan(container, o.repo, c.restore, { env: o.state.env, what: c.what, timeoutMs: Math.max(1, deadline - Date.now()), ...to });
}

/** The install's notes file in the stopped install container (at most 8 KiB; none: empty), read through the engine, no container started. */
async function installNotesOf(container: Docker.Container): Promise<string> {
  try {
    const files = await readTarFiles((await container.getArchive({ path: `${HOME}/${INSTALL_NOTES_NAME}` })) as NodeJS.ReadableStream, { maxFileBytes: 8192, maxTotalBytes: 8192 });
    return files.get(INSTALL_NOTES_NAME)?.content.toString('utf8') ?? '';
  } catch {
    return '';
  }
}

/** The paths the repository tracks at the state and at its revision, which a saved install leaves out. */
async function putTrackedList(o: BuildInput, container: Docker.Container, patched: boolean): Promise<void> {
  const paths = (await listTreeBlobs(o.repo, o.state.tree, o.state.env)).map((f) => f.path);
  if (patched) paths.push(...(await listTreeBlobs(o.repo, `${o.commit}^{tree}`, o.state.env)).map((f) => f.path));
  const name = TRACKED_LIST.slice(TRACKED_LIST.lastIndexOf('/') + 1);
  await container.putArchive(singleFileTar(name, trackedList([...new Set(paths)]), { uid: 1000, gid: 1000 }) as unknown as NodeJS.ReadableStream, { path: TRACKED_LIST.slice(0, TRACKED_LIST.lastIndexOf('/')) });
}

/** The default package-cache scope: the repository's own path on this host. */
async function defaultScope(repo: GitRepo): Promise<string> {
  return realpath(repo.gitDir).catch(() => repo.gitDir);
}

/** Whose package cache installs of this spec use. */
export async function packageCacheScope(spec: Pick<EnvironmentSpec, 'repo' | 'cacheScope'>): Promise<string> {
  return spec.cacheScope ?? (await defaultScope(await openRepo(spec.repo)));
}

/** The package cache volume installs of this spec use. */
export async function packageCacheVolume(spec: Pick<EnvironmentSpec, 'repo' | 'cacheScope'>): Promise<string> {
  return cacheVolumeName(await packageCacheScope(spec));
}

export async function ensureEnvironmentImage(deps: EnvironmentDeps, spec: EnvironmentSpec, onProgress?: (msg: string) => void): Promise<Environment> {
  const started = Date.now();
  const { docker, log } = deps;
  const repo = await openRepo(spec.repo);
  const state = await openState(repo, { rev: spec.rev, patches: spec.patches ?? [] });
  try {
    const commit = state.commit;
    // The engine's answers and git's, side by side: a cached environment's look-up is only these.
    const gitSide = Promise.all([listTreeBlobs(repo, state.tree, state.env), spec.cacheScope ?? defaultScope(repo)]);
    gitSide.catch(() => undefined);
    const { name: baseImage, info: baseInfo } = await ensureBaseImageInfo(spec.baseImage, { docker, caBundle: deps.caBundle, onProgress, logger: log, pull: deps.pull, ...(spec.fallbackImages ? { fallbacks: spec.fallbackImages } : {}) });
    const [files, scope] = await gitSide;
    const cacheWrite = spec.cacheWrite !== false;
    const key = environmentKey({ scope, trusted: cacheWrite, baseImageId: baseInfo.Id, install: spec.install, ...(spec.warm ? { warm: spec.warm } : {}), files });
    const family = environmentFamily({ scope, baseImageId: baseInfo.Id, install: spec.install, ...(spec.warm ? { warm: spec.warm } : {}) });
    const ns = deps.cache.namespace;

    const query = { key, ns, scope, trusted: cacheWrite, commit, baseImage, started };
    const lookup = () => findEnvironment(docker, repo, query);
    const hit = await lookup();
    if (hit) return hit;
    const env = await singleFlight(`env:${ns}:${key}:${repo.gitDir}`, () =>
      withFileLock(
        `env-${ns}-${key.slice(0, 32)}`,
        async () => {
          const again = await lookup();
          if (again) return again;
          const tag = envImageTag(key, commit, ns);
          // Nothing installed: nothing to start from.
          const from = spec.install.trim() && nearestLayerOn() ? await nearestLayer(docker, repo, ns, family, commit) : undefined;
          // Kept from eviction while the build stands on it.
          if (from) await markUsed(from.image);
          const installNotes = await buildEnvironment(deps, { repo, state, commit, baseImage, key, tag, install: spec.install, ...(spec.warm ? { warm: spec.warm } : {}), scope, cacheWrite, family, ...(from ? { from } : {}), onProgress });
          await markUsed(tag);
          rememberEnvironment(query, tag);
          const built: Environment = { image: tag, key, baseImage, snapshotRev: commit, cached: false, buildMs: Date.now() - started, installNotes, ...(from ? { from: from.image } : {}) };
          log.info({ image: tag, base: baseImage, from: from?.image, ms: built.buildMs }, 'built environment image');
          return built;
        },
        { onWait: () => onProgress?.(`waiting for another process building the environment ${key.slice(0, 16)}`) },
      ),
    );
    if (!env.cached) scheduleUpkeep(deps, env.image);
    return env;
  } finally {
    await state.dispose();
  }
}
