/** Read-only views of the host checkout at base: its file list, package.json and runner. */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { tryConfineRepoPath } from '../util/repoPath.js';
import { FILE_LEVEL_KIND } from '../ecosystems/fileLevel.js';
import { isTape, runnerFromCommand } from '../harness/runners.js';
import { isTestFile } from '../harness/testFiles.js';
import { detectEcosystem, ecosystemOfRunner } from '../ecosystems/index.js';

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

/**
 * A file of the checkout, or undefined: paths come from traces and answers (untrusted), so one that
 * leaves the checkout, by `..` or through a link, reads nothing.
 */
export async function readRepoFile(root: string, rel: string, maxBytes = 2_000_000): Promise<string | undefined> {
  const confined = tryConfineRepoPath(rel);
  if (!confined) return undefined;
  try {
    const p = await realpath(join(root, confined));
    if (!p.startsWith((await realpath(root)) + sep)) return undefined;
    const s = await stat(p);
    if (!s.isFile() || s.size > maxBytes) return undefined;
    const text = await readFile(p, 'utf8');
    if (text.includes('\u0000')) return undefined; // binary
    return text;
  } catch {
    return undefined;
  }
}

/** A runner kind (`pytest`, `jest`, `go-test`, …), `tape` told apart from `tap`, or `unknown`. */
export type RunnerName = string;

/** The runner named by a test command template (the harness's recognition; tape told apart from tap). */
export function runnerOf(testCommand: string): RunnerName {
  try {
    const spec = runnerFromCommand(testCommand);
    if (spec.kind === FILE_LEVEL_KIND) return 'unknown';
    return isTape(spec) ? 'tape' : spec.kind;
  } catch {
    return 'unknown';
  }
}

/** The language a runner's tests are written in, as generation names it (`python`, `javascript`, `typescript`, `go`). */
function languageOfRunner(runner: RunnerName, files: string[]): string {
  const kind = runner === 'tape' ? 'tap' : runner;
  return ecosystemOfRunner({ kind })!.languageOf(files.filter((f) => isTestFile(f)), files);
}

export interface RepoInfo {
  files: string[];
  /** Reads a repository file (text; undefined when absent, binary or large). */
  read(path: string): Promise<string | undefined>;
  packageJson?: { name?: string; type?: string; main?: string; module?: string; exports?: unknown; [k: string]: unknown };
  runner: RunnerName;
  /** The language most tests are written in (`python`, `javascript`, `typescript`, `go`, …, or `unknown`). */
  language: string;
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
  let language = 'unknown';
  if (runner !== 'unknown') language = languageOfRunner(runner, files);
  else {
    // No runner named: the ecosystem the files say, with its default runner.
    const ecosystem = detectEcosystem({ files, ...(packageJson ? { packageJson } : {}) });
    if (ecosystem) {
      runner = ecosystem.defaultRunner({ files, ...(packageJson ? { packageJson } : {}) }).kind;
      language = ecosystem.languageOf(files.filter((f) => isTestFile(f)), files);
    }
  }
  return { files, packageJson, runner, language, read };
}
