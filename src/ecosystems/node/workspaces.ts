/**
 * Monorepos: npm, yarn and pnpm workspaces (lerna, nx and turbo lay themselves over one of them).
 * Which directories are workspace packages, and which package owns a test file. Pure.
 */
import picomatch from 'picomatch';
import { parse as parseYaml } from 'yaml';

/** The files whose text workspace detection reads, besides the root package.json. */
export const WORKSPACE_FILES = ['pnpm-workspace.yaml', 'lerna.json'] as const;

/** Package manifests below the root worth reading: not installed, vendored or fixture copies. */
const SKIPPED_DIR = /(^|\/)(node_modules|fixtures?|__fixtures__|vendor|dist|build|\.[^/]+)\//;

/** At most this many nested package.json files are read (a repository of thousands is not a layout to guess at). */
export const MAX_PACKAGES = 300;

/** Nested package.json paths a workspace glob could name. */
export function nestedManifests(files: readonly string[]): string[] {
  return files.filter((f) => f.endsWith('/package.json') && !SKIPPED_DIR.test(f)).slice(0, MAX_PACKAGES);
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * The workspace globs the root declares: package.json `workspaces` (npm, yarn: an array, or yarn's
 * `{ packages: [...] }`), `pnpm-workspace.yaml` `packages`, `lerna.json` `packages`. Empty: not a monorepo.
 */
export function workspaceGlobs(rootPkg: any, texts: Readonly<Record<string, string>>): string[] {
  const globs: string[] = [];
  const ws = rootPkg?.workspaces;
  globs.push(...strings(ws), ...strings(ws?.packages));
  const pnpm = texts['pnpm-workspace.yaml'];
  if (pnpm !== undefined) {
    try {
      globs.push(...strings((parseYaml(pnpm) as any)?.packages));
    } catch {
      // An unreadable pnpm-workspace.yaml names no packages; pnpm itself will say why at install.
    }
  }
  const lerna = texts['lerna.json'];
  if (lerna !== undefined) {
    try {
      globs.push(...strings(JSON.parse(lerna)?.packages));
    } catch {
      // as above
    }
  }
  return [...new Set(globs.map((g) => g.trim().replace(/^\.\//, '').replace(/\/+$/, '')).filter(Boolean))];
}

/** The directories (repository-relative) of the workspace packages: a package.json under a glob, and no `!` glob excluding it. */
export function workspacePackages(files: readonly string[], globs: readonly string[]): string[] {
  const include = globs.filter((g) => !g.startsWith('!'));
  if (include.length === 0) return [];
  const exclude = globs.filter((g) => g.startsWith('!')).map((g) => g.slice(1));
  const isIn = picomatch(include, { dot: false });
  const isOut = exclude.length ? picomatch(exclude) : () => false;
  const dirs = nestedManifests(files).map((f) => f.slice(0, -'/package.json'.length));
  return dirs.filter((d) => isIn(d) && !isOut(d)).sort();
}

/** The workspace package that owns `file`: the deepest package directory holding it, or undefined (the root's). */
export function owningPackage(file: string, packageDirs: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const d of packageDirs) if (file.startsWith(`${d}/`) && (!best || d.length > best.length)) best = d;
  return best;
}
