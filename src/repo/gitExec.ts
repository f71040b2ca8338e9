import { processEnvironment } from '../settings/index.js';
import { spawnGit } from './gitSpawner.js';

/** Runs git on the host (no shell), with a clean, predictable environment. */

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** The host environment minus every GIT_* variable (a caller's GIT_DIR or GIT_INDEX_FILE must not leak in). */
export function gitBaseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(processEnvironment())) if (!k.startsWith('GIT_')) env[k] = v;
  env.LC_ALL = 'C';
  env.LANGUAGE = 'C';
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

export function runGit(
  cwd: string,
  args: string[],
  opts: { env?: Record<string, string>; input?: string | Buffer; maxBytes?: number } = {},
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(['-c', 'safe.directory=*', ...args], { cwd, env: { ...gitBaseEnv(), ...opts.env } });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    const max = opts.maxBytes ?? 512 * 1024 ** 2;
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        child.kill('SIGKILL');
        reject(new Error(`git ${args[0]} produced more than ${max} bytes`));
        return;
      }
      out.push(c);
    });
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 128, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.on('error', () => {
      /* git may exit before reading all input; the exit code tells */
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** Like runGit but throws a plain Error (with git's stderr) on a non-zero exit. */
export async function git(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string | Buffer } = {}): Promise<string> {
  const r = await runGit(cwd, args, opts);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout.toString('utf8');
}

export interface Blob {
  spec: string;
  /** null when the object is missing. */
  content: Buffer | null;
}

/** One object of `git cat-file --batch`: its body streams (read it, or leave it: the next object skips what is left). */
export interface GitObject {
  spec: string;
  /** False when the object is missing (no body). */
  found: boolean;
  type: string;
  size: number;
  body(): AsyncGenerator<Buffer>;
}

/** Lines and counted bytes off a byte stream, pulled as asked: a large body is never held whole. */
class ByteReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Bytes of the current body not yet read. */
  pending = 0;
  private readonly it: AsyncIterator<Buffer>;
  constructor(it: AsyncIterator<Buffer>) {
    this.it = it;
  }
  private async more(): Promise<boolean> {
    const r = await this.it.next();
    if (r.done) return false;
    this.buf = this.buf.length ? Buffer.concat([this.buf, r.value]) : r.value;
    return true;
  }
  async line(): Promise<string | undefined> {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const l = this.buf.subarray(0, nl).toString('utf8');
        this.buf = this.buf.subarray(nl + 1);
        return l;
      }
      if (!(await this.more())) return undefined;
    }
  }
  /** The next `pending` bytes, as they come. */
  async *take(): AsyncGenerator<Buffer> {
    while (this.pending > 0) {
      if (!this.buf.length && !(await this.more())) throw new Error('git cat-file --batch ended inside an object');
      const c = this.buf.subarray(0, Math.min(this.pending, this.buf.length));
      this.buf = this.buf.subarray(c.length);
      this.pending -= c.length;
      yield c;
    }
  }
  async skip(n: number): Promise<void> {
    this.pending += n;
    const rest = this.take();
    while (!(await rest.next()).done);
  }
}

/**
 * Streams objects through one `git cat-file --batch` process, in the order asked, each body read
 * as it comes. `specs` are object names (`<sha>` or `<tree>:<path>`), one per line. Aborting
 * `signal` (or leaving the loop) kills git.
 */
export async function* catFileObjects(cwd: string, specs: string[], env: Record<string, string> = {}, signal?: AbortSignal): AsyncGenerator<GitObject> {
  if (specs.length === 0) return;
  const child = spawnGit(['-c', 'safe.directory=*', 'cat-file', '--batch'], { cwd, env: { ...gitBaseEnv(), ...env } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 128)));
  const kill = () => child.kill('SIGKILL');
  signal?.addEventListener('abort', kill, { once: true });
  child.stdin.on('error', () => {});
  child.stdin.end(specs.map((s) => s.replace(/\n/g, '')).join('\n') + '\n');
  const reader = new ByteReader((child.stdout as AsyncIterable<Buffer>)[Symbol.asyncIterator]());
  let i = 0;
  try {
    for (; i < specs.length; i++) {
      const header = await reader.line();
      if (header === undefined) break;
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        yield { spec: specs[i]!, found: false, type: '', size: 0, body: async function* () {} };
        continue;
      }
      const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
      if (!m) throw new Error(`unexpected git cat-file output: ${header}`);
      const size = Number(m[2]);
      reader.pending = size;
      yield { spec: specs[i]!, found: true, type: m[1]!, size, body: () => reader.take() };
      // What the caller left of the body, and the newline after it.
      await reader.skip(1);
    }
  } finally {
    signal?.removeEventListener('abort', kill);
    if (child.exitCode === null) kill();
  }
  const code = await exited;
  if (signal?.aborted) throw signal.reason ?? new Error('aborted');
  if (i < specs.length) throw new Error(`git cat-file --batch ended early (${code}): ${stderr.trim()}`);
}

/** Whole objects through one `git cat-file --batch` process, in the order asked (small files: manifests, sources). */
export async function* catFileBatch(cwd: string, specs: string[], env: Record<string, string> = {}): AsyncGenerator<Blob> {
  for await (const o of catFileObjects(cwd, specs, env)) {
    if (!o.found) {
      yield { spec: o.spec, content: null };
      continue;
    }
    const parts: Buffer[] = [];
    for await (const c of o.body()) parts.push(c);
    yield { spec: o.spec, content: Buffer.concat(parts, o.size) };
  }
}

/** Sizes of objects by name (`git cat-file --batch-check`), without reading them; missing ones are absent. */
export async function objectSizes(cwd: string, ids: string[], env: Record<string, string> = {}): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (ids.length === 0) return out;
  const r = await runGit(cwd, ['cat-file', '--batch-check=%(objectname) %(objectsize)'], { env, input: ids.join('\n') + '\n' });
  if (r.code !== 0) throw new Error(`git cat-file --batch-check failed (${r.code}): ${r.stderr.trim()}`);
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const m = /^([0-9a-f]+) (\d+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}
