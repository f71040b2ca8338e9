import { PassThrough, type Readable } from 'node:stream';
import tarStream from 'tar-stream';
import type { Docker } from '../docker.js';
import { parentDirs } from '../../repo/overlay.js';

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

/** Waits for p; 'timeout' past ms or 'aborted' on the signal when either comes first (the caller then kills). */
export async function untilDeadline(p: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<'timeout' | 'aborted' | undefined> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      p.then(() => undefined),
      new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms))),
      new Promise<'aborted'>((r) => {
        onAbort = () => r('aborted');
        if (signal?.aborted) r('aborted');
        else signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/** Closes an attach or exec stream (one whose container never started outlives the container's removal). */
export function closeStream(stream: unknown): void {
  (stream as { destroy?: () => void } | undefined)?.destroy?.();
}

/** Keeps the last `max` bytes written. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;
  readonly max: number;
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
  /** Drops the last `mark` and all after it (a wrapper's marker, and output that came later); false when it is not held. */
  cutAt(mark: Buffer): boolean {
    const all = this.buffer();
    const at = all.lastIndexOf(mark);
    if (at < 0) return false;
    this.chunks = [all.subarray(0, at)];
    this.size = at;
    return true;
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

/**
 * Splits Docker's multiplexed stdout/stderr stream into two sinks. Resolves when the stream ends and
 * both sinks have had every byte of it.
 */
export function demux(docker: Docker, stream: NodeJS.ReadableStream, onStdout: (b: Buffer) => void, onStderr: (b: Buffer) => void): Promise<void> {
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', onStdout);
  err.on('data', onStderr);
  docker.modem.demuxStream(stream, out, err);
  const drained = (p: PassThrough) => new Promise<void>((r) => p.on('end', r));
  const all = Promise.all([drained(out), drained(err)]).then(() => undefined);
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      out.end();
      err.end();
      resolve(all);
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
  });
}

/**
 * The frames of a whole multiplexed log (8-byte header: stream, three zeros, big-endian size), in
 * order, with their stream (1 stdout, 2 stderr). docker-modem's demuxer recurses once per frame.
 */
export function demuxBuffer(raw: Buffer, onFrame: (b: Buffer, stream: number) => void): void {
  for (let at = 0; at + 8 <= raw.length; ) {
    const size = raw.readUInt32BE(at + 4);
    onFrame(raw.subarray(at + 8, Math.min(raw.length, at + 8 + size)), raw[at]!);
    at += 8 + size;
  }
}

/**
 * The output of a container that has exited, given what its attach stream brought (`streamed`,
 * whole once `ended` resolves). The stream normally ends with the container, but a loaded engine
 * can deliver the last bytes late, and a run's verdict may sit in them. So when the stream has not
 * ended within `graceMs`, the output is read from the container's json-file log instead, in the same
 * bounds.
 */
export async function outputAfterExit(container: Docker.Container, ended: Promise<void>, streamed: TailBuffer, graceMs = 2_000): Promise<{ tail: TailBuffer; fromLog: boolean }> {
  if ((await withinMs(ended.then(() => true), graceMs)) === true) return { tail: streamed, fromLog: false };
  const raw = (await container.logs({ stdout: true, stderr: true, follow: false }).catch(() => undefined)) as unknown as Buffer | undefined;
  // No log to read (the engine went away): what the stream brought is all there is.
  if (!raw) return { tail: streamed, fromLog: false };
  const tail = new TailBuffer(streamed.max);
  demuxBuffer(raw, (b) => tail.push(b));
  return { tail, fromLog: true };
}

/**
 * Files of a tar archive (from getArchive), by path with the first `strip` components removed.
 * Bounded in what is kept (maxFileBytes, maxTotalBytes) and in what is read: once the entries seen
 * add up to more than maxReadBytes (default twice maxTotalBytes), the archive is closed unread.
 */
export async function readTarFiles(
  stream: NodeJS.ReadableStream,
  opts: { strip?: number; maxFileBytes?: number; maxTotalBytes?: number; maxReadBytes?: number } = {},
): Promise<Map<string, { content: Buffer; mode: number }>> {
  const out = new Map<string, { content: Buffer; mode: number }>();
  const maxFile = opts.maxFileBytes ?? 8 * 1024 ** 2;
  const maxTotal = opts.maxTotalBytes ?? 64 * 1024 ** 2;
  const maxRead = opts.maxReadBytes ?? 2 * maxTotal;
  let total = 0;
  let seen = 0;
  const extract = tarStream.extract();
  (stream as Readable).pipe(extract);
  for await (const entry of extract) {
    const h = entry.header;
    seen += h.size ?? 0;
    if (seen > maxRead) {
      (stream as Readable).unpipe(extract);
      (stream as Readable).destroy?.();
      entry.resume();
      extract.destroy();
      break;
    }
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
