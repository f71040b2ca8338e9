/**
 * The free disk of a Docker engine's data root, measured from inside the engine: a container's
 * root filesystem is an overlay whose upper layer lives in the data root, so statfs there reports
 * that filesystem, for an engine on another machine (DOCKER_HOST) as for a local one. It needs one
 * of our base images on the engine (coreutils' stat); an engine without one yet reports null.
 */
import type { Docker } from '../docker.js';
import { IMAGE_LABELS } from '../images/imageRecipes.js';
import { containerLabels, lockedHostConfig } from './limits.js';
import { registerContainer, removeContainer, createTracked } from './liveContainers.js';

/** `stat -f` prints blocks available to a non-root user and the block size. */
export function parseStatfs(output: string): number | null {
  const m = /(\d+)\s+(\d+)/.exec(output);
  return m ? Number(m[1]) * Number(m[2]) : null;
}

export async function engineFreeDiskBytes(docker: Docker): Promise<number | null> {
  const images = await docker.listImages({ filters: { label: [IMAGE_LABELS.ref] } });
  const image = images.sort((a, b) => a.Size - b.Size)[0];
  if (!image) return null;
  const c = await createTracked(() => docker.createContainer({
    Image: image.Id,
    Entrypoint: [],
    Cmd: ['stat', '-f', '-c', '%a %S', '/'],
    User: '1000:1000',
    // A terminal gives plain output (no stream frames) to read back from the logs.
    Tty: true,
    Labels: containerLabels('probe'),
    HostConfig: { ...lockedHostConfig('probe'), ReadonlyRootfs: true, Memory: 64 * 1024 ** 2, PidsLimit: 16 },
  }));
  registerContainer(docker, c.id);
  try {
    await c.start();
    const r = (await c.wait()) as { StatusCode: number };
    const out = String(await c.logs({ stdout: true, stderr: true }));
    if (r.StatusCode !== 0) throw new Error(`measuring the engine's free disk failed (exit ${r.StatusCode}): ${out.trim().split('\n')[0]}`);
    return parseStatfs(out);
  } finally {
    await removeContainer(docker, c.id).catch(() => undefined);
  }
}
