import { envValues } from '../../settings/index.js';
import { errorLine, SwtError } from '../../util/errors.js';
import { logger as rootLogger, type Logger } from '../../util/logger.js';
import { caFiles, caFingerprint, type CaBundle } from './caCertificates.js';
import { connectDocker, followProgress, inspectImage, type Docker } from '../docker.js';
import { buildDebianRootfs, debianMirror } from './debianRootfs.js';
import { buildImageFromContext, type ContextEntry } from './imageBuild.js';
import {
  baseIdentity,
  baseImageName,
  DEBIAN_PYTHONS,
  DEBIAN_SUITE,
  debianSteps,
  finishDockerfile,
  finishScript,
  IMAGE_LABELS,
  nodeSteps,
  offlinePython,
  parseBaseRef,
  pythonSteps,
  RECIPE_VERSION,
  rootfsImageName,
  type BaseRef,
  TOOLCHAIN_RECIPES,
} from './imageRecipes.js';
import { singleFlight, withFileLock } from '../../util/lock.js';
import { nodeContextEntries } from './nodeDist.js';

/**
 * ensureBaseImage: (a) an image we built before, (b) `docker pull` with a short timeout plus the
 * finish layer, (c) an offline build (debootstrap rootfs + Debian packages, or Node from npm).
 */

export interface EnsureBaseOptions {
  /** Default: DOCKER_HOST or the local socket. */
  docker?: Docker;
  caBundle?: CaBundle;
  onProgress?: (msg: string) => void;
  /** Try `docker pull` first (default true unless SWT_PULL=never). */
  pull?: boolean;
  /** Give up a pull after this long without progress (default 20 s). */
  pullTimeoutMs?: number;
  logger?: Logger;
  /** References that serve as well as the asked one, best first: one an offline build has exactly is taken before a stand-in of another version. */
  fallbacks?: readonly string[];
}

const failedPulls = new Map<string, number>();
const PULL_RETRY_MS = 10 * 60_000;

/**
 * `docker pull` that gives up quickly when nothing happens (offline: DNS fails at once; a blocked
 * registry: no progress within `idleMs`), but lets a pull that is making progress finish.
 */
export async function tryPull(docker: Docker, ref: string, idleMs: number, log: Logger): Promise<boolean> {
  if (await inspectImage(docker, ref)) return true;
  const failedAt = failedPulls.get(ref);
  if (failedAt && Date.now() - failedAt < PULL_RETRY_MS) return false;
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let fail: (e: Error) => void = () => {};
  const idle = new Promise<never>((_, reject) => (fail = reject));
  idle.catch(() => undefined);
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      ac.abort();
      fail(new Error(`no progress within ${idleMs} ms`));
    }, idleMs);
  };
  rearm();
  try {
    const stream = await Promise.race([docker.pull(ref, { abortSignal: ac.signal }), idle]);
    await Promise.race([followProgress(docker, stream, () => rearm()), idle]);
    return !!(await inspectImage(docker, ref));
  } catch (e) {
    failedPulls.set(ref, Date.now());
    log.info({ ref, err: errorLine(e) }, 'docker pull failed; building the base image offline');
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function finishEntries(ca: CaBundle | undefined, dockerfile: string, extra: ContextEntry[] = []): ContextEntry[] {
  const certs = caFiles(ca);
  return [
    { name: 'Dockerfile', content: dockerfile },
    { name: 'swt-finish/finish.sh', content: finishScript(certs.map((c) => c.name)), mode: 0o755 },
    { name: 'swt-finish/certs/.keep', content: '' },
    ...certs.map((c) => ({ name: `swt-finish/certs/${c.name}`, content: c.content })),
    ...extra,
  ];
}

function labelsFor(ref: BaseRef, source: string, ca: CaBundle | undefined): Record<string, string> {
  return {
    [IMAGE_LABELS.ref]: ref.ref,
    [IMAGE_LABELS.source]: source,
    [IMAGE_LABELS.ca]: caFingerprint(ca),
    [IMAGE_LABELS.recipe]: String(RECIPE_VERSION),
  };
}

/** The imported debootstrap rootfs for a Debian suite (built once, shared by every offline recipe). */
export async function ensureRootfs(docker: Docker, suite: string, opts: EnsureBaseOptions, log: Logger = opts.logger ?? rootLogger): Promise<string> {
  const name = rootfsImageName(suite);
  if (await inspectImage(docker, name)) return name;
  return singleFlight(`rootfs:${name}`, () =>
    withFileLock(
      `rootfs-${suite}`,
      async () => {
        if (await inspectImage(docker, name)) return name;
        return buildDebianRootfs(docker, { suite, mirror: debianMirror(), onProgress: opts.onProgress, log });
      },
      { onWait: () => opts.onProgress?.(`waiting for another process building ${name}`) },
    ),
  );
}

async function buildOffline(docker: Docker, ref: BaseRef, name: string, opts: EnsureBaseOptions, log: Logger): Promise<string> {
  const ca = opts.caBundle;
  const recipe = ref.recipe;
  const onStep = (l: string) => opts.onProgress?.(`${name}: ${l}`);
  const onLine = (l: string) => log.debug({ image: name, build: l });
  const started = Date.now();
  if (recipe.kind === 'debian' || recipe.kind === 'python') {
    const suite = recipe.kind === 'debian' ? recipe.suite : DEBIAN_PYTHONS[offlinePython(recipe.version)]!;
    const rootfs = await ensureRootfs(docker, suite, opts, log);
    const steps = recipe.kind === 'python' ? pythonSteps() : debianSteps();
    opts.onProgress?.(`building ${name} offline from ${rootfs}`);
    await buildImageFromContext(docker, {
      tag: name,
      entries: finishEntries(ca, finishDockerfile({ from: rootfs, steps, withCa: !!ca })),
      labels: labelsFor(ref, 'offline', ca),
      onLine,
      onStep,
    });
  } else if (recipe.kind === 'node') {
    const rootfs = await ensureRootfs(docker, DEBIAN_SUITE, opts, log);
    const dist = await nodeContextEntries(recipe.version, opts.onProgress);
    opts.onProgress?.(`building ${name} offline (node ${dist.version}, npm ${dist.npmVersion})`);
    await buildImageFromContext(docker, {
      tag: name,
      entries: finishEntries(ca, finishDockerfile({ from: rootfs, steps: nodeSteps(), withCa: !!ca }), dist.entries),
      labels: { ...labelsFor(ref, 'offline', ca), 'swt-bot.base.node': dist.version, 'swt-bot.base.npm': dist.npmVersion },
      onLine,
      onStep,
    });
  } else if (recipe.kind === 'toolchain') {
    const r = TOOLCHAIN_RECIPES[recipe.image]!;
    const rootfs = await ensureRootfs(docker, r.suite, opts, log);
    opts.onProgress?.(`building ${name} offline from ${rootfs}: ${r.holds}`);
    await buildImageFromContext(docker, {
      tag: name,
      entries: finishEntries(ca, finishDockerfile({ from: rootfs, steps: r.steps, withCa: !!ca })),
      labels: { ...labelsFor(ref, 'offline', ca), 'swt-bot.base.holds': r.holds },
      onLine,
      onStep,
    });
  } else {
    throw new SwtError('IMAGE_UNAVAILABLE', `cannot get the base image ${ref.ref}: it could not be pulled and there is no offline recipe for it`, {
      hint: `use node:<version>, python:<version>, ${Object.keys(TOOLCHAIN_RECIPES).map((i) => `${i}:<version>`).join(', ')} or debian:bookworm, or \`docker load\` the image`,
    });
  }
  log.info({ image: name, ms: Date.now() - started }, 'built base image offline');
  return name;
}

/** Returns the name of a local base image for `ref` (e.g. `swt-base/python:3.11-1a2b3c4d`), building it if needed. */
export async function ensureBaseImage(refText: string, opts: EnsureBaseOptions = {}): Promise<string> {
  const docker = opts.docker ?? connectDocker();
  const log = opts.logger ?? rootLogger;
  const ref = parseBaseRef(refText);
  const name = baseImageName(ref, opts.caBundle);
  if (await inspectImage(docker, name)) return name;

  const wantPull = opts.pull ?? envValues().SWT_PULL;
  // A Python no Debian suite here ships is served offline by an older one the project allows, else the nearest one.
  const served = ref.recipe.kind === 'python' ? servingPython(ref.recipe.version, opts.fallbacks ?? []) : undefined;
  return singleFlight(`base:${name}`, () =>
    withFileLock(
      `base-${name}`,
      async () => {
        if (await inspectImage(docker, name)) return name;
        // SWT_PULL=never asks no registry; an image already here (`docker load`) is still used.
        const present = wantPull ? await tryPull(docker, ref.ref, opts.pullTimeoutMs ?? 20_000, log) : !!(await inspectImage(docker, ref.ref));
        if (present) {
          opts.onProgress?.(`adding CA certificates, git and the swt user to ${ref.ref}`);
          try {
            await buildImageFromContext(docker, {
              tag: name,
              entries: finishEntries(opts.caBundle, finishDockerfile({ from: ref.ref, steps: [], withCa: !!opts.caBundle })),
              labels: labelsFor(ref, 'pulled', opts.caBundle),
              onLine: (l) => log.debug({ image: name, build: l }),
              onStep: (l) => opts.onProgress?.(`${name}: ${l}`),
            });
            return name;
          } catch (e) {
            if (ref.recipe.kind === 'other') throw e;
            log.warn({ ref: ref.ref, err: errorLine(e) }, 'finishing the pulled image failed; building offline');
          }
        }
        if (served) {
          log.warn({ asked: ref.ref, building: `python:${served.version}` }, `offline builds have Python ${Object.keys(DEBIAN_PYTHONS).join(' and ')} only`);
          opts.onProgress?.(`warning: ${ref.ref} is not available offline; using Python ${served.version} (Debian ${DEBIAN_PYTHONS[served.version]})${served.allowed ? ', which the project allows' : ''}`);
          return null;
        }
        return buildOffline(docker, ref, name, opts, log);
      },
      { onWait: () => opts.onProgress?.(`waiting for another process building ${name}`) },
    ),
  ).then((built) => built ?? ensureBaseImage(`python:${served!.version}`, { ...opts, docker, pull: false, fallbacks: [] }));
}

/** The base image (as ensureBaseImage) and the engine's view of it: one look-up when it is here already. */
export async function ensureBaseImageInfo(refText: string, opts: EnsureBaseOptions = {}): Promise<{ name: string; info: Docker.ImageInspectInfo }> {
  const docker = opts.docker ?? connectDocker();
  const here = baseImageName(parseBaseRef(refText), opts.caBundle);
  const seen = await inspectImage(docker, here);
  const name = seen ? here : await ensureBaseImage(refText, { ...opts, docker });
  const info = seen ?? (await inspectImage(docker, name));
  if (!info) throw new SwtError('IMAGE_UNAVAILABLE', `base image ${name} disappeared`);
  return { name, info };
}

/** The offline Python that stands in for `version`: a fallback an offline build has exactly (`allowed`), else the nearest. */
function servingPython(version: string, fallbacks: readonly string[]): { version: string; allowed: boolean } | undefined {
  if (!otherPython(version)) return undefined;
  for (const f of fallbacks) {
    const r = parseBaseRef(f).recipe;
    if (r.kind === 'python' && !otherPython(r.version)) return { version: offlinePython(r.version), allowed: true };
  }
  return { version: otherPython(version)!, allowed: false };
}

/** The offline Python that stands in for `version`, unless it is `3` or that Python itself (a minor or patch release of it). */
function otherPython(version: string): string | undefined {
  const minor = offlinePython(version);
  return version === '3' || version === minor || version.startsWith(`${minor}.`) ? undefined : minor;
}

export { baseIdentity, baseImageName, parseBaseRef };
