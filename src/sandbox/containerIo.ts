import { PassThrough, type Readable } from 'node:stream';
import tarStream from 'tar-stream';
import type { Docker } from './docker.js';
import { parentDirs } from './overlay.js';

/** Bytes in and out of containers: bounded output tails, demuxing, reading and writing tar archives. */

export const DEFAULT_OUTPUT_BYTES = 64 * 1024;

/** Waits for p, but no longer than ms (and leaves no timer behind). */
export async function withinMs<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps the last `max` bytes written. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;
  private readonly max: number;
  constructor(max = DEFAULT_OUTPUT_BYTES) {
    this.max = max;
  }
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.max && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.size - this.max;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
        this.dropped += excess;
      }
    }
  }
  get truncated(): boolean {
    return this.dropped > 0;
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
  toString(): string {
    const text = this.buffer().toString('utf8');
    return this.dropped > 0 ? `[… ${this.dropped} bytes of output omitted]\n${text.replace(/^[\x80-\xBF]+/, '')}` : text;
  }
}

/** Splits Docker's multiplexed stdout/stderr stream into two sinks. Resolves when the stream ends. */
export function demux(docker: Docker, stream: NodeJS.ReadableStream, onStdout: (b: Buffer) => void, onStderr: (b: Buffer) => void): Promise<void> {
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', onStdout);
  err.on('data', onStderr);
  docker.modem.demuxStream(stream, out, err);
  return new Promise((resolve) => {
    const done = () => resolve();
    stream.on('end', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}

/** Files of a tar archive (from getArchive), by path with the first `strip` components removed. */
export async function readTarFiles(
  stream: NodeJS.ReadableStream,
  opts: { strip?: number; maxFileBytes?: number; maxTotalBytes?: number } = {},
): Promise<Map<string, { content: Buffer; mode: number }>> {
  const out = new Map<string, { content: Buffer; mode: number }>();
  const maxFile = opts.maxFileBytes ?? 8 * 1024 ** 2;
  const maxTotal = opts.maxTotalBytes ?? 64 * 1024 ** 2;
  let total = 0;
  const extract = tarStream.extract();
  (stream as Readable).pipe(extract);
  for await (const entry of extract) {
    const h = entry.header;
    const name = h.name.split('/').filter(Boolean).slice(opts.strip ?? 0).join('/');
    if (h.type !== 'file' || !name || (h.size ?? 0) > maxFile || total + (h.size ?? 0) > maxTotal) {
      entry.resume();
      continue;
    }
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    const content = Buffer.concat(chunks);
    total += content.length;
    out.set(name, { content, mode: h.mode ?? 0o644 });
  }
  return out;
}

/** A tar of one file (with its parent directories), owned by uid/gid, for putArchive into /testbed. */
export function singleFileTar(path: string, content: Buffer, owner: { uid: number; gid: number }): Readable {
  const pack = tarStream.pack();
  const base = { ...owner, uname: 'swt', gname: 'swt', mtime: new Date() };
  for (const d of parentDirs(path)) pack.entry({ ...base, name: d, type: 'directory', mode: 0o755 });
  pack.entry({ ...base, name: path, type: 'file', mode: 0o644, size: content.length }, content);
  pack.finalize();
  return pack as unknown as Readable;
}

/** A NUL byte in the first 8000 bytes, as git decides. */
export function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}
