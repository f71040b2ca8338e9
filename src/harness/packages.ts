/**
 * Runs split by the package that owns each test file (RunnerSpec.packages): one command per group,
 * from the package's directory, with the package's runner; paths and ids inside a group are
 * relative to its directory and are put back repository-relative here. Also the run's own
 * environment (RunnerSpec.env) as shell. Pure.
 */
import { SwtError } from '../util/errors.js';
import { shellQuote } from '../util/shell.js';
import type { FileError, RunnerSpec, TestResult } from '../results/types.js';

/** The test files one command runs: `dir` '' is the repository root. */
export interface RunGroup {
  dir: string;
  spec: RunnerSpec;
  /** Repository-relative. */
  files: string[];
  /** Relative to `dir` (what the group's command is given). */
  local: string[];
}

/** Whether the spec splits its runs by package. */
export function isGrouped(spec: RunnerSpec): boolean {
  return (spec.packages?.length ?? 0) > 0;
}

/** The package (its dir, '' for the root) and runner that own a repository-relative file. */
export function packageOf(spec: RunnerSpec, file: string): { dir: string; spec: RunnerSpec } {
  let best: { dir: string; spec: RunnerSpec } | undefined;
  for (const p of spec.packages ?? []) {
    const dir = p.dir.replace(/\/+$/, '');
    if (dir && file.startsWith(`${dir}/`) && (!best || dir.length > best.dir.length)) best = { dir, spec: p.runner };
  }
  return best ?? { dir: '', spec: rootSpec(spec) };
}

/** The spec without its packages or environment: what runs the root's own files. */
export function rootSpec(spec: RunnerSpec): RunnerSpec {
  return { kind: spec.kind, template: spec.template };
}

/** Groups `files` by owning package, in first-seen order. */
export function groupByPackage(spec: RunnerSpec, files: readonly string[]): RunGroup[] {
  const groups = new Map<string, RunGroup>();
  for (const f of files) {
    const { dir, spec: own } = packageOf(spec, f);
    let g = groups.get(dir);
    if (!g) groups.set(dir, (g = { dir, spec: own, files: [], local: [] }));
    g.files.push(f);
    g.local.push(toLocal(dir, f));
  }
  return [...groups.values()];
}

export function toLocal(dir: string, path: string): string {
  return dir && path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : path;
}

export function toRepo(dir: string, path: string): string {
  return dir ? `${dir}/${path}` : path;
}

/** A test id of a package's run, repository-relative: its file part (`test/x.js > …`) gets the package's dir. */
export function idToRepo(dir: string, id: string, localFile: string | undefined): string {
  if (!dir) return id;
  if (localFile && id.startsWith(localFile)) return `${dir}/${id}`;
  return id;
}

/** A repository-relative id as the package's own run names it (the inverse of idToRepo). */
export function idToLocal(dir: string, id: string): string {
  return dir && id.startsWith(`${dir}/`) ? id.slice(dir.length + 1) : id;
}

/** A group's results, repository-relative. */
export function resultsToRepo(dir: string, r: { tests: TestResult[]; fileErrors: FileError[] }): { tests: TestResult[]; fileErrors: FileError[] } {
  if (!dir) return r;
  return {
    tests: r.tests.map((t) => ({ ...t, id: idToRepo(dir, t.id, t.file), ...(t.file ? { file: toRepo(dir, t.file) } : {}) })),
    fileErrors: r.fileErrors.map((e) => ({ ...e, file: toRepo(dir, e.file) })),
  };
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `export A='1' B='2';` with a leading space, for the spec's environment; '' without one. */
export function envExports(spec: RunnerSpec): string {
  const entries = Object.entries(spec.env ?? {});
  if (entries.length === 0) return '';
  for (const [k, v] of entries) {
    if (!ENV_NAME.test(k)) throw new SwtError('BAD_INPUT', `the test environment variable name \`${k}\` is not a valid name`);
    if (/[\0\r\n]/.test(v)) throw new SwtError('BAD_INPUT', `the test environment variable ${k} must be a single line`);
  }
  return ` export ${entries.map(([k, v]) => `${k}=${shellQuote(v)}`).join(' ')};`;
}

/** The shell that runs `cmd` from the group's directory. */
export function inDir(dir: string, cmd: string): string {
  return dir ? `cd ${shellQuote(dir)} && ${cmd}` : cmd;
}
