/**
 * What a worker tells about the Docker engine it runs containers on (its local engine or
 * DOCKER_HOST): version, data root, what images and containers take, and the free disk of the data
 * root: looked at directly when the engine is on this machine, measured by a short container on
 * the engine when it is not (sandbox/containers/engineDisk.ts).
 */
import { statfs } from 'node:fs/promises';
import type { Docker } from '../sandbox/docker.js';
import { diskUsage, engineFreeDiskBytes } from '../sandbox/index.js';
import { dockerHost, envValues, type Environment } from '../settings/index.js';

export interface DockerHostReport {
  /** Where the engine is: DOCKER_HOST without credentials, or the local socket. */
  location: string;
  version: string;
  dataRoot: string;
  /** Bytes free on the data root's filesystem; null until it can be measured (a remote engine without our base images). */
  freeDiskBytes: number | null;
  imagesBytes: number;
  images: number;
  containers: number;
}

/** DOCKER_HOST as shown to people: scheme, host and port; never a user or a password. */
export function engineLocation(env?: Environment): string {
  const raw = envValues(env).DOCKER_HOST;
  if (!raw) return dockerHost(env);
  try {
    const u = new URL(raw);
    if (u.protocol === 'unix:' || u.protocol === 'npipe:') return `${u.protocol}//${u.pathname}`;
    return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ''}`;
  } catch {
    return 'DOCKER_HOST (unparsable)';
  }
}

function isLocal(env?: Environment): boolean {
  const h = envValues(env).DOCKER_HOST;
  return !h || h.startsWith('unix://');
}

/**
 * The engine's disk usage (GET /system/df) sizes every container's layer and every volume: seconds
 * of I/O on a busy engine, one at a time. Heartbeats come every few seconds; the figure is taken
 * once per interval per engine and reused in between.
 */
const DF_EVERY_MS = 5 * 60_000;
const layersSize = new WeakMap<Docker, { at: number; bytes: Promise<number> }>();

function imagesBytes(docker: Docker): Promise<number> {
  const seen = layersSize.get(docker);
  if (seen && Date.now() - seen.at < DF_EVERY_MS) return seen.bytes;
  const bytes = diskUsage(docker).then((df: { LayersSize?: number }) => df.LayersSize ?? 0);
  layersSize.set(docker, { at: Date.now(), bytes });
  bytes.catch(() => layersSize.delete(docker));
  return bytes;
}

/** A container per measure: once per interval per engine, as the layers' size. */
const remoteFree = new WeakMap<Docker, { at: number; bytes: Promise<number | null> }>();

function remoteFreeDisk(docker: Docker): Promise<number | null> {
  const seen = remoteFree.get(docker);
  if (seen && Date.now() - seen.at < DF_EVERY_MS) return seen.bytes;
  const bytes = engineFreeDiskBytes(docker);
  remoteFree.set(docker, { at: Date.now(), bytes });
  // A failed or empty measure is tried again at the next report.
  bytes.then((b) => b === null && remoteFree.delete(docker), () => remoteFree.delete(docker));
  return bytes;
}

export async function dockerHostReport(docker: Docker, env?: Environment): Promise<DockerHostReport> {
  const info = (await docker.info()) as { ServerVersion?: string; DockerRootDir?: string; Images?: number; Containers?: number };
  let freeDiskBytes: number | null = null;
  if (isLocal(env) && info.DockerRootDir) {
    freeDiskBytes = await statfs(info.DockerRootDir).then(
      (s) => s.bavail * s.bsize,
      () => null, // the engine runs here, but its data root is not visible to this user
    );
  }
  freeDiskBytes ??= await remoteFreeDisk(docker).catch(() => null);
  return {
    location: engineLocation(env),
    version: info.ServerVersion ?? 'unknown',
    dataRoot: info.DockerRootDir ?? 'unknown',
    freeDiskBytes,
    imagesBytes: await imagesBytes(docker),
    images: info.Images ?? 0,
    containers: info.Containers ?? 0,
  };
}
