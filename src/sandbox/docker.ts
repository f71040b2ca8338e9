import Docker from 'dockerode';
import { dockerHost, envValues, type Environment } from '../settings/index.js';
import { SwtError } from '../util/errors.js';

/** The Docker engine connection: DOCKER_HOST when set, else the local socket. */

export type { Docker };

export function dockerLocation(env?: Environment): string {
  return dockerHost(env);
}

export function connectDocker(env?: Environment): Docker {
  // docker-modem reads DOCKER_HOST (unix://, tcp://, npipe://, ssh://) and DOCKER_TLS_VERIFY/DOCKER_CERT_PATH itself.
  if (envValues(env).DOCKER_HOST) return new Docker();
  return new Docker({ socketPath: '/var/run/docker.sock' });
}

export const DOCKER_HINT = 'start one with `scripts/dev setup` or `sudo dockerd &`, or set DOCKER_HOST';

function unreachable(where: string, cause?: unknown): SwtError {
  // Why, in a few words (refused, no socket, no answer): a slow engine and a missing one need different fixes.
  const why = (cause as { code?: string; message?: string } | undefined)?.code ?? (cause as Error | undefined)?.message?.split('\n')[0]?.slice(0, 80);
  return new SwtError('DOCKER_UNREACHABLE', `cannot reach the Docker engine at ${where}${why ? ` (${why})` : ''}`, { hint: DOCKER_HINT, cause });
}

/** Pings the engine; any failure (refused, missing socket, timeout) becomes DOCKER_UNREACHABLE. */
export async function pingDocker(docker: Docker = connectDocker(), opts: { where?: string; timeoutMs?: number } = {}): Promise<void> {
  const where = opts.where ?? dockerLocation();
  const timeoutMs = opts.timeoutMs ?? 5000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      docker.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (e) {
    throw unreachable(where, e);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export function isNotFound(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { statusCode?: number }).statusCode === 404;
}

/**
 * The engine's disk usage (GET /system/df). The engine runs one at a time for all its clients and
 * refuses a second meanwhile ("a disk usage operation is already running"): that one is asked
 * again, for up to a minute, rather than failing a caller because another process measured.
 */
export async function diskUsage(docker: Docker): Promise<Record<string, unknown>> {
  const giveUpAt = Date.now() + 60_000;
  for (;;) {
    try {
      return (await docker.df()) as Record<string, unknown>;
    } catch (e) {
      if (!/disk usage operation is already running/.test((e as Error).message ?? '') || Date.now() >= giveUpAt) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function inspectImage(docker: Docker, name: string): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await docker.getImage(name).inspect();
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

interface ProgressEvent {
  stream?: string;
  status?: string;
  progress?: string;
  id?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

/**
 * Follows a build/pull/import progress stream. Resolves with the collected output lines; rejects
 * with the engine's error message (and the output) when the stream reports one.
 */
export function followProgress(
  docker: Docker,
  stream: NodeJS.ReadableStream,
  onLine?: (line: string) => void,
): Promise<{ lines: string[]; imageId?: string }> {
  const lines: string[] = [];
  let imageId: string | undefined;
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, events: ProgressEvent[]) => {
        if (err) return reject(err);
        const failed = events.find((e) => e.error || e.errorDetail);
        if (failed) {
          const msg = failed.errorDetail?.message ?? failed.error ?? 'unknown error';
          return reject(Object.assign(new Error(msg), { output: lines }));
        }
        resolve({ lines, imageId });
      },
      (e: ProgressEvent) => {
        if (e.aux?.ID) imageId = e.aux.ID;
        const text = e.stream ?? (e.status ? `${e.status}${e.id ? ` ${e.id}` : ''}${e.progress ? ` ${e.progress}` : ''}` : undefined);
        if (!text) return;
        for (const l of text.split('\n')) {
          const line = l.trimEnd();
          if (!line) continue;
          lines.push(line);
          if (lines.length > 2000) lines.splice(0, lines.length - 1000);
          onLine?.(line);
        }
      },
    );
  });
}

let cachedCpus: { docker: Docker; n: number } | undefined;

/** CPUs of the engine's host (NanoCpus must not exceed it). */
export async function engineCpus(docker: Docker): Promise<number> {
  if (cachedCpus?.docker === docker) return cachedCpus.n;
  const info = (await docker.info()) as { NCPU?: number };
  const n = info.NCPU && info.NCPU > 0 ? info.NCPU : 1;
  cachedCpus = { docker, n };
  return n;
}

/** Kills the container now (SIGKILL); one already gone is no error. */
export function killNow(container: Docker.Container): Promise<unknown> {
  return container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
}
