import { spawn } from 'node:child_process';

/** Runs git on the host (no shell), with a clean, predictable environment. */

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** The host environment minus every GIT_* variable (a caller's GIT_DIR or GIT_INDEX_FILE must not leak in). */
export function gitBaseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
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
    const child = spawn('git', ['-c', 'safe.directory=*', ...args], {
      cwd,
      env: { ...gitBaseEnv(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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

/**
 * Streams objects through one `git cat-file --batch` process, in the order asked.
 * `specs` are object names (`<sha>` or `<tree>:<path>`), one per line.
 */
export async function* catFileBatch(cwd: string, specs: string[], env: Record<string, string> = {}): AsyncGenerator<Blob> {
  if (specs.length === 0) return;
  const child = spawn('git', ['-c', 'safe.directory=*', 'cat-file', '--batch'], {
    cwd,
    env: { ...gitBaseEnv(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 128)));
  child.stdin.on('error', () => {});
  child.stdin.end(specs.map((s) => s.replace(/\n/g, '')).join('\n') + '\n');

  let buf: Buffer = Buffer.alloc(0);
  let i = 0;
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        const nl = buf.indexOf(10);
        if (nl < 0) break;
        const header = buf.subarray(0, nl).toString('utf8');
        if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
          buf = buf.subarray(nl + 1);
          yield { spec: specs[i++]!, content: null };
          continue;
        }
        const m = /^[0-9a-f]+ \w+ (\d+)$/.exec(header);
        if (!m) throw new Error(`unexpected git cat-file output: ${header}`);
        const size = Number(m[1]);
        if (buf.length < nl + 1 + size + 1) break;
        const content = Buffer.from(buf.subarray(nl + 1, nl + 1 + size));
        buf = buf.subarray(nl + 1 + size + 1);
        yield { spec: specs[i++]!, content };
      }
    }
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  const code = await exited;
  if (i < specs.length) throw new Error(`git cat-file --batch ended early (${code}): ${stderr.trim()}`);
}
