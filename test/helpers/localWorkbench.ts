/**
 * TEST HELPER — not the product's Workbench (that one is Docker + harness + patch layer, built in
 * src/pipeline/). This one works on the host, for the generation layer's tests:
 * - repoDir: a temp copy of a small repository at base (a git repo with one commit);
 * - applyPatch: `git apply` of a unified diff in a scratch copy, or the patch layer's
 *   applyModelPatch (custom diff format too) once src/patch/applyModelPatch.ts exists;
 * - runTests: the touched test files with the host's `python3 -m pytest` (or `node --test`),
 *   JUnit report parsed by src/harness's parser, on base or base plus a fix patch;
 * - openSession: a scratch copy where commands run with `sh -c`, with no secret in their environment.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import type { RunResult } from '../../src/results/types.js';
import { parseJUnit } from '../../src/results/formats/junit.js';
import type { PatchApplication, Workbench } from '../../src/generation/types.js';
import type { SandboxSession } from '../../src/sandbox/types.js';
import { isSecretName } from '../../src/util/secrets.js';
import { splitDiff } from '../../src/patch/diffFiles.js';
import { isTestFile } from '../../src/harness/testFiles.js';

const run = promisify(execFile);
const GIT_ENV = { GIT_AUTHOR_NAME: 'swt-test', GIT_AUTHOR_EMAIL: 't@swt.invalid', GIT_COMMITTER_NAME: 'swt-test', GIT_COMMITTER_EMAIL: 't@swt.invalid' };

/** The host environment minus anything secret-named: what sandboxed commands get. */
export function sandboxEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!isSecretName(k)) env[k] = v;
  env.PYTHONDONTWRITEBYTECODE = '1';
  return env;
}

async function git(dir: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', '-c', 'core.autocrlf=false', ...args], {
    cwd: dir,
    env: { ...sandboxEnv(), ...GIT_ENV },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

async function copyRepo(src: string, prefix: string): Promise<{ root: string; dir: string }> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const dir = join(root, 'repo');
  await cp(src, dir, { recursive: true, filter: (p) => !p.split(sep).includes('.git') });
  await git(dir, 'init', '-q');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '--allow-empty', '-m', 'base');
  return { root, dir };
}

/** Writes a small repository from a map of files and returns its directory. */
export async function writeRepo(files: Record<string, string>): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'swt-genrepo-'));
  const dir = join(root, 'repo');
  for (const [p, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, p)), { recursive: true });
    await writeFile(join(dir, p), text);
  }
  return { dir, cleanup: () => rm(root, { recursive: true, force: true }) };
}

function sh(command: string, cwd: string, timeoutMs: number): Promise<{ exitCode: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolvePromise) => {
    const child = spawn('sh', ['-c', command], { cwd, env: sandboxEnv(), detached: true });
    let output = '';
    let timedOut = false;
    const add = (b: Buffer) => {
      output += b.toString('utf8');
      if (output.length > 2_000_000) output = output.slice(-1_000_000);
    };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ exitCode: timedOut ? null : code, output, timedOut });
    });
  });
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

type ModelPatchFn = (repoDir: string, text: string) => Promise<PatchApplication>;
let modelPatchFn: ModelPatchFn | null | undefined;

/** The patch layer's applyModelPatch, when it has landed (custom diff format + tolerant unified diffs). */
export async function patchLayer(): Promise<ModelPatchFn | null> {
  if (modelPatchFn !== undefined) return modelPatchFn;
  const path = '../../src/patch/applyModelPatch.js';
  try {
    const mod = await import(path);
    modelPatchFn = typeof mod.applyModelPatch === 'function' ? (mod.applyModelPatch as ModelPatchFn) : null;
  } catch {
    modelPatchFn = null;
  }
  return modelPatchFn;
}

export interface LocalWorkbench extends Workbench {
  /** Every command the sessions ran, and every runTests call, for assertions. */
  log: string[];
  cleanup(): Promise<void>;
}

export interface LocalWorkbenchOptions {
  /** `python3 -m pytest -p no:cacheprovider {files}` (default) or `node --test {files}`. */
  testCommand?: string;
  runTimeoutMs?: number;
}

export async function createLocalWorkbench(srcRepo: string, opts: LocalWorkbenchOptions = {}): Promise<LocalWorkbench> {
  const base = await copyRepo(srcRepo, 'swt-wb-base-');
  const scratch: string[] = [base.root];
  const testCommand = opts.testCommand ?? 'python3 -m pytest -p no:cacheprovider {files}';
  const runner: 'pytest' | 'node' = /--test\b/.test(testCommand) ? 'node' : 'pytest';
  const timeoutMs = opts.runTimeoutMs ?? 60_000;
  const log: string[] = [];

  const fresh = async (prefix: string) => {
    const c = await copyRepo(base.dir, prefix);
    scratch.push(c.root);
    return c;
  };

  async function gitApply(dir: string, root: string, diff: string): Promise<string[]> {
    const pf = join(root, 'candidate.patch');
    await writeFile(pf, diff.endsWith('\n') ? diff : diff + '\n');
    try {
      await git(dir, 'apply', '--whitespace=nowarn', '--recount', pf);
      return [];
    } catch (e) {
      return [String((e as { stderr?: string }).stderr || (e as Error).message).trim()];
    }
  }

  const applyPatch = async (text: string): Promise<PatchApplication> => {
    const layer = await patchLayer();
    if (layer) return layer(base.dir, text);
    const c = await fresh('swt-wb-apply-');
    const errors = await gitApply(c.dir, c.root, text);
    if (errors.length) return { applied: false, diff: '', warnings: [], errors };
    await git(c.dir, 'add', '-A');
    const diff = await git(c.dir, 'diff', '--cached', '--no-color', '--no-ext-diff');
    return { applied: diff.trim().length > 0, diff, warnings: [], errors: diff.trim() ? [] : ['the patch changes nothing'] };
  };

  const runTests = async (testPatch: string, only?: string[], opts?: { fixPatch?: string }): Promise<RunResult> => {
    const t0 = Date.now();
    const c = await fresh('swt-wb-run-');
    // A stand-in fix goes in first, as the product's workbench stacks it under the test patch.
    const fixErrors = opts?.fixPatch?.trim() ? await gitApply(c.dir, c.root, opts.fixPatch) : [];
    if (fixErrors.length) throw new Error(`runTests: the fix patch does not apply: ${fixErrors.join('; ')}`);
    if (opts?.fixPatch) log.push('runTests with a fix');
    const errors = testPatch.trim() ? await gitApply(c.dir, c.root, testPatch) : [];
    if (errors.length) throw new Error(`runTests: the test patch does not apply: ${errors.join('; ')}`);
    const files =
      only ??
      splitDiff(testPatch)
        .filter((f) => !f.isDeleted && isTestFile(f.path))
        .map((f) => f.path);
    log.push(`runTests ${files.join(' ')}`);
    if (!files.length) return { tests: [], fileErrors: [], timedOut: false, exitCode: null, output: 'no test files in the patch', durationMs: 0 };
    const report = join(c.root, 'junit.xml');
    const cmd =
      runner === 'pytest'
        ? `python3 -m pytest -p no:cacheprovider -q --junitxml=${shq(report)} ${files.map(shq).join(' ')}`
        : `node --test --test-reporter=junit --test-reporter-destination=${shq(report)} ${files.map(shq).join(' ')}`;
    const r = await sh(cmd, c.dir, timeoutMs);
    let parsed = { tests: [] as RunResult['tests'], fileErrors: [] as RunResult['fileErrors'] };
    if (existsSync(report)) {
      const xml = await readFile(report, 'utf8');
      parsed = parseJUnit(xml, { flavor: runner === 'pytest' ? 'pytest' : 'node', files, root: c.dir, output: r.output, ...(runner === 'node' && files.length === 1 ? { file: files[0] } : {}) });
    }
    return { ...parsed, timedOut: r.timedOut, exitCode: r.exitCode, output: r.output.slice(-8000), durationMs: Date.now() - t0 };
  };

  const openSession = async (): Promise<SandboxSession> => {
    const c = await fresh('swt-wb-session-');
    const inside = (p: string) => {
      const abs = resolve(c.dir, p.replace(/^\/testbed\/?/, ''));
      if (abs !== c.dir && !abs.startsWith(c.dir + sep)) throw new Error(`path outside the repository: ${p}`);
      return abs;
    };
    return {
      exec: async (command, o) => {
        log.push(`exec ${command}`);
        return sh(command, c.dir, o?.timeoutMs ?? timeoutMs);
      },
      readFile: async (p) => readFile(inside(p), 'utf8'),
      readFileHead: async (p, maxBytes) => {
        const fh = await open(inside(p), 'r');
        try {
          const bytes = (await fh.stat()).size;
          const buf = Buffer.alloc(Math.min(bytes, maxBytes));
          await fh.read(buf, 0, buf.length, 0);
          return { text: buf.toString('utf8'), bytes, cut: bytes > buf.length };
        } finally {
          await fh.close();
        }
      },
      writeFile: async (p, content) => {
        const abs = inside(p);
        await mkdir(dirname(abs), { recursive: true });
        await writeFile(abs, content);
      },
      diff: async () => {
        await git(c.dir, 'add', '-A');
        return git(c.dir, 'diff', '--cached', '--no-color', '--no-ext-diff');
      },
      close: async () => {
        await rm(c.root, { recursive: true, force: true });
      },
    };
  };

  return {
    repoDir: base.dir,
    testCommand,
    applyPatch,
    runTests,
    openSession,
    log,
    cleanup: async () => {
      await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}
