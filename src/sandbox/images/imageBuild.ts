import type { Readable } from 'node:stream';
import tarStream from 'tar-stream';
import { SwtError } from '../../util/errors.js';
import { followProgress, inspectImage, type Docker } from '../docker.js';

/** Builds images with the engine's build API from an in-memory tar-stream context (no docker CLI). */

export interface ContextEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink';
  content?: Buffer | string;
  mode?: number;
  linkname?: string;
}

export function contextTar(entries: ContextEntry[]): Readable {
  const pack = tarStream.pack();
  const mtime = new Date(0);
  void (async () => {
    try {
      for (const e of entries) {
        const type = e.type ?? 'file';
        await new Promise<void>((res, rej) => {
          const cb = (err?: Error | null) => (err ? rej(err) : res());
          if (type === 'file') {
            const body = Buffer.isBuffer(e.content) ? e.content : Buffer.from(e.content ?? '', 'utf8');
            pack.entry({ name: e.name, type, mode: e.mode ?? 0o644, size: body.length, mtime, uid: 0, gid: 0 }, body, cb);
          } else if (type === 'symlink') {
            pack.entry({ name: e.name, type, mode: 0o777, linkname: e.linkname!, mtime, uid: 0, gid: 0 }, cb);
          } else {
            pack.entry({ name: e.name, type, mode: e.mode ?? 0o755, mtime, uid: 0, gid: 0 }, cb);
          }
        });
      }
      pack.finalize();
    } catch (err) {
      pack.destroy(err as Error);
    }
  })();
  return pack as unknown as Readable;
}

export interface BuildRequest {
  tag: string;
  entries: ContextEntry[];
  labels?: Record<string, string>;
  /** Every output line (for logs). */
  onLine?: (line: string) => void;
  /** Step lines ("Step 3/9 : RUN …"), for the user. */
  onStep?: (line: string) => void;
}

/** Builds and tags an image; returns its id. Failures become IMAGE_UNAVAILABLE with the build output's tail. */
export async function buildImageFromContext(docker: Docker, req: BuildRequest): Promise<string> {
  let output: string[] = [];
  try {
    const stream = await docker.buildImage(contextTar(req.entries), {
      t: req.tag,
      labels: req.labels,
      rm: true,
      forcerm: true,
      pull: false,
    } as Docker.ImageBuildOptions);
    const r = await followProgress(docker, stream, (line) => {
      req.onLine?.(line);
      if (/^Step \d+\/\d+ :/.test(line)) req.onStep?.(line);
    });
    output = r.lines;
  } catch (e) {
    const lines = ((e as { output?: string[] }).output ?? output).slice(-15).join('\n');
    throw new SwtError('IMAGE_UNAVAILABLE', `building ${req.tag} failed: ${(e as Error).message}${lines ? `\n${lines}` : ''}`, { cause: e });
  }
  const info = await inspectImage(docker, req.tag);
  if (!info) throw new SwtError('IMAGE_UNAVAILABLE', `building ${req.tag} produced no image:\n${output.slice(-15).join('\n')}`);
  return info.Id;
}
