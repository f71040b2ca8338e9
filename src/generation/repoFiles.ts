/** Read-only views of the host checkout at base: its file list, package.json and runner. */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isTape, runnerFromCommand } from '../harness/runners.js';
import { isTestFile } from '../harness/testFiles.js';

const SKIP_DIRS = new Set([
  '.git', 'node_modules', '__pycache__', '.tox', '.nox', '.venv', 'venv', 'env', '.mypy_cache', '.pytest_cache',
  'dist', 'build', 'coverage', '.next', '.cache', '.idea', '.vscode', 'site-packages', '.eggs', 'htmlcov',
]);

/** Repository files (relative, posix), skipping VCS, dependency and build directories. */
export async function listRepoFiles(root: string, opts: { max?: number } = {}): Promise<string[]> {
  const max = opts.max ?? 20_000;
  const out: string[] = [];
  async function walk(rel: string): Promise<void> {
    if (out.length >= max) return;
    let entries;
    try {
      entries = await readdir(join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (out.length >= max) return;
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name) && !e.name.endsWith('.egg-info')) await walk(p);
      } else if (e.isFile()) out.push(p);
    }
  }
  await walk('');
  return out;
}

export async function readRepoFile(root: string, rel: string, maxBytes = 2_000_000): Promise<string | undefined> {
  try {
    const p = join(root, rel);
    const s = await stat(p);
    if (!s.isFile() || s.size > maxBytes) return undefined;
    const text = await readFile(p, 'utf8');
    if (text.includes('\u0000')) return undefined; // binary
    return text;
  } catch {
    return undefined;
  }
}

export type RunnerName = 'pytest' | 'jest' | 'vitest' | 'mocha' | 'node-test' | 'tap' | 'tape' | 'unknown';

/** The runner named by a test command template (the harness's recognition; tape told apart from tap). */
export function runnerOf(testCommand: string): RunnerName {
  try {
    const spec = runnerFromCommand(testCommand);
    return spec.kind === 'tap' && isTape(spec) ? 'tape' : spec.kind;
  } catch {
    return 'unknown';
  }
}

export interface RepoInfo {
  files: string[];
  /** Reads a repository file (text; undefined when absent, binary or large). */
  read(path: string): Promise<string | undefined>;
  packageJson?: { name?: string; type?: string; main?: string; module?: string; exports?: unknown; [k: string]: unknown };
  runner: RunnerName;
  /** The language most tests are written in. */
  language: 'python' | 'javascript' | 'typescript' | 'unknown';
}

export async function repoInfo(root: string, testCommand: string): Promise<RepoInfo> {
  const files = await listRepoFiles(root);
  const read = (rel: string) => readRepoFile(root, rel);
  return repoInfoOf(files, testCommand, files.includes('package.json') ? await read('package.json') : undefined, read);
}

/** RepoInfo from a file list, the test command and package.json's text. Pure. */
export function repoInfoOf(files: string[], testCommand: string, packageJsonText: string | undefined, read: RepoInfo['read']): RepoInfo {
  let packageJson: RepoInfo['packageJson'];
  if (packageJsonText) {
    try {
      packageJson = JSON.parse(packageJsonText);
    } catch {
      packageJson = undefined;
    }
  }
  let runner = runnerOf(testCommand);
  const count = (re: RegExp) => files.filter((f) => re.test(f)).length;
  const py = count(/\.py$/);
  const ts = count(/\.[cm]?tsx?$/);
  const js = count(/\.[cm]?jsx?$/);
  let language: RepoInfo['language'] = 'unknown';
  if (runner === 'pytest') language = 'python';
  else if (runner !== 'unknown') {
    // The language the tests are written in.
    const tests = files.filter((f) => /\.[cm]?[jt]sx?$/.test(f) && !/\.d\.[cm]?ts$/.test(f) && isTestFile(f));
    const tsTests = tests.filter((f) => /\.[cm]?tsx?$/.test(f)).length;
    language = tests.length ? (tsTests * 2 >= tests.length && tsTests > 0 ? 'typescript' : 'javascript') : ts > js ? 'typescript' : 'javascript';
  } else if (py >= ts + js && py > 0) {
    language = 'python';
    runner = 'pytest';
  } else if (ts + js > 0) language = ts > js ? 'typescript' : 'javascript';
  return { files, packageJson, runner, language, read };
}
