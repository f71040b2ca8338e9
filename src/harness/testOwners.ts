/**
 * Which test files to run for the files a test patch touches. A test file runs itself; a file
 * that is not a test (a snapshot, a fixture, support code under a test directory) runs the test
 * files that own it and is never given to a runner. Pure: the caller lists the repository and
 * reads the texts asked for.
 *
 * Owners, most certain first:
 * - snapshots by name: tap's `tap-snapshots/<test path>.test.cjs` (and `.test.js`; tap ≤ 14's
 *   flattened `tap-snapshots/<path with - for />-TAP.test.js`), jest's and vitest's
 *   `__snapshots__/<test file>.snap`, syrupy's `__snapshots__/<test>.ambr` or
 *   `__snapshots__/<test>/…`, snapshottest's `snapshots/snap_<test>.py`;
 * - otherwise the test files whose text refers to the file: by its path relative to the test,
 *   else by a path suffix, else by its name, else (scripts) by its module name, else by the name
 *   of a directory it sits in. A touched
 *   test file that refers to it is enough; else the repository's test files nearest to it are
 *   searched (at most MAX_SEARCHED of them, at most MAX_OWNERS owners each), in a fixed order.
 */
import { posix } from 'node:path';
import { isTestFile, isTestPath, type ConfigRules } from './testFiles.js';

export const MAX_OWNERS = 10;
export const MAX_SEARCHED = 2000;

export interface TestTargets {
  /** Test files to run, in order: the touched ones, then owners in the order of what they own. */
  files: string[];
  /** Each touched file that is not a test, with the test files that run for it. */
  ownedBy: Record<string, string[]>;
  /** Touched files that are not tests and that no test file owns: nothing runs for them. */
  unowned: string[];
}

export interface TargetInput {
  /** Paths the patch adds or modifies, in patch order. */
  touched: readonly string[];
  /** Every file of the repository in the state the tests run in (the patch applied). */
  files: readonly string[];
  /** The text of a test file (from `filesToSearch`); undefined when unknown. */
  read?: (path: string) => string | undefined;
  /** The project's runner config rules (see testFiles.ts `configRules`): the files it names are test files too. */
  config?: ConfigRules;
}

const SCRIPT = /\.([cm]?[jt]sx?|py)$/;
/** Names too common to point at one file by themselves. */
const GENERIC_NAME = /^(index|main|mod|package|package-lock|readme|license|changelog|tsconfig|\.eslintrc|\.npmignore|\.gitignore)(\.[^.]+)?$/i;
const GENERIC_STEM = /^(index|main|mod|package|readme|license|changelog|config|setup|utils?|helpers?|common|data|test|tests|spec|specs|fixtures?|expected|actual|input|output|result|sample|example)$/i;
const SUPPORT_DIR = /^(tests?|specs?|__tests__|testing|fixtures?|__fixtures__|__snapshots__|snapshots|tap-snapshots|__mocks__|mocks|stubs|helpers?|support|utils?|data|testdata|test-data|resources|assets|src|lib)$/i;

function norm(p: string): string {
  return posix.normalize(p.replace(/\\/g, '/')).replace(/^(\.\/)+/, '');
}

function testFilesOf(files: readonly string[], config?: ConfigRules): string[] {
  return files.map(norm).filter((f) => isTestFile(f, config));
}

/** Test files that own a snapshot by its name; undefined when the path is not a snapshot file. */
export function snapshotOwners(path: string, files: readonly string[]): string[] | undefined {
  const p = norm(path);
  const tests = testFilesOf(files);
  const has = new Set(tests);
  const pick = (cands: string[]) => [...new Set(cands.map(norm))].filter((c) => has.has(c));

  const tapAt = p.startsWith('tap-snapshots/') ? 0 : p.indexOf('/tap-snapshots/') + 1;
  if (tapAt > 0 || p.startsWith('tap-snapshots/')) {
    const prefix = p.slice(0, tapAt);
    const rest = p.slice(tapAt + 'tap-snapshots/'.length);
    const flat = /^(.+)-TAP\.test\.[cm]?js$/.exec(rest);
    if (flat) return tests.filter((t) => t.startsWith(prefix) && t.slice(prefix.length).replace(/\//g, '-') === flat[1]).sort();
    const named = /^(.+)\.test\.[cm]?js$/.exec(rest);
    return named ? pick([`${prefix}${named[1]}`]) : [];
  }

  const snaps = p.lastIndexOf('__snapshots__/');
  if (snaps >= 0 && (snaps === 0 || p[snaps - 1] === '/')) {
    const dir = p.slice(0, snaps);
    const rest = p.slice(snaps + '__snapshots__/'.length);
    const first = rest.split('/')[0];
    if (rest.endsWith('.snap')) return pick([`${dir}${rest.slice(0, -'.snap'.length)}`]);
    if (rest.endsWith('.ambr')) return pick([`${dir}${rest.slice(0, -'.ambr'.length)}.py`]);
    if (rest.includes('/')) return pick([`${dir}${first}`, `${dir}${first}.py`]);
    return [];
  }

  const snapshottest = /^(.*?)snapshots\/snap_([^/]+\.py)$/.exec(p);
  if (snapshottest && (snapshottest[1] === '' || snapshottest[1].endsWith('/'))) return pick([`${snapshottest[1]}${snapshottest[2]}`]);
  return undefined;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Ways a test's text may refer to a file, most specific first: its path suffixes (two segments
 * or more), its name, its module name (scripts), the names of the directories it sits in below
 * the test or fixture directory.
 */
export function referencePatterns(path: string): RegExp[] {
  const segs = norm(path).split('/');
  const base = segs[segs.length - 1];
  const stem = base.replace(/\.[^.]+$/, '');
  const quote = `['"\`]`;
  const before = '(?:^|[^\\w.-])';
  const after = '(?![\\w.-])';
  const out: RegExp[] = [];
  for (let i = 0; i <= segs.length - 2; i++) out.push(new RegExp(`${before}${escapeRe(segs.slice(i).join('/'))}${after}`));
  // path.join(__dirname, 'fixtures', 'a.json') and the like
  if (segs.length >= 2) out.push(new RegExp(segs.slice(-2).map((x) => `${quote}${escapeRe(x)}${quote}`).join('\\s*,\\s*')));
  if (!GENERIC_NAME.test(base)) out.push(new RegExp(`${before}${escapeRe(base)}${after}`));
  if (SCRIPT.test(base) && !GENERIC_STEM.test(stem)) out.push(new RegExp(`[${'\'"`'}/]${escapeRe(stem)}(?:\\.[cm]?[jt]sx?)?${quote}`));
  for (const dir of segs.slice(0, -1).reverse()) {
    if (SUPPORT_DIR.test(dir) || GENERIC_STEM.test(dir) || dir.length < 3) break;
    out.push(new RegExp(`[${'\'"`'}/]${escapeRe(dir)}[${'\'"`'}/]`));
  }
  return out;
}

/** Test files nearest to `path` first (most leading directories shared), then by path. */
function byNearness(path: string, tests: string[]): string[] {
  const segs = norm(path).split('/');
  const shared = (t: string) => {
    const ts = t.split('/');
    let n = 0;
    while (n < ts.length - 1 && n < segs.length - 1 && ts[n] === segs[n]) n++;
    return n;
  };
  return [...tests].sort((a, b) => shared(b) - shared(a) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Whether a touched path runs no test by itself and is owned by tests (snapshot, fixture, support code). */
function ownable(path: string, config?: ConfigRules): boolean {
  return !isTestFile(path, config) && (isTestPath(path, config) || snapshotOwners(path, []) !== undefined || /(^|\/)(fixtures?|__fixtures__|testdata|test-data)\//.test(norm(path)));
}

/** The test files whose texts `testTargets` needs for `touched` (none when every touched file is a test or a named snapshot). */
export function filesToSearch(touched: readonly string[], files: readonly string[], config?: ConfigRules): string[] {
  const tests = testFilesOf(files, config);
  const want = new Set<string>();
  for (const t of touched.map(norm)) {
    if (!ownable(t, config)) continue;
    const named = snapshotOwners(t, files);
    if (named && named.length) continue;
    for (const f of touched.map(norm).filter((x) => isTestFile(x, config))) want.add(f);
    for (const f of byNearness(t, tests).slice(0, MAX_SEARCHED)) want.add(f);
  }
  return [...want];
}

/** How a test in `from` names `path` relative to itself: `./fixtures/a.json`, `../helpers` (scripts also without extension). */
function relativeReference(from: string, path: string): RegExp {
  let rel = posix.relative(posix.dirname(from), norm(path));
  if (!rel.startsWith('.')) rel = `./${rel}`;
  const bare = SCRIPT.test(rel) ? rel.replace(/\.[^./]+$/, '') : rel;
  const alts = [...new Set([rel, bare, rel.replace(/^\.\//, '')])].map(escapeRe).join('|');
  return new RegExp(`['"\`](?:${alts})['"\`]`);
}

function referrers(path: string, candidates: string[], read: (p: string) => string | undefined): string[] {
  const self = norm(path);
  const pool = candidates.filter((c) => c !== self);
  const levels: Array<(c: string) => boolean> = [
    (c) => relativeReference(c, path).test(read(c) ?? ''),
    ...referencePatterns(path).map((re) => (c: string) => re.test(read(c) ?? '')),
  ];
  for (const hit of levels) {
    const hits = pool.filter(hit);
    if (hits.length) return hits.slice(0, MAX_OWNERS);
  }
  return [];
}

/** The test files to run for what a patch touches (see the module comment). */
export function testTargets(input: TargetInput): TestTargets {
  const touched = [...new Set(input.touched.map(norm))];
  const read = input.read ?? (() => undefined);
  const config = input.config;
  const tests = testFilesOf(input.files, config);
  const direct = touched.filter((t) => isTestFile(t, config));
  const run: string[] = [...direct];
  const ownedBy: Record<string, string[]> = {};
  const unowned: string[] = [];
  for (const t of touched) {
    if (isTestFile(t, config) || !ownable(t, config)) continue;
    let owners = snapshotOwners(t, input.files) ?? [];
    if (!owners.length) owners = referrers(t, direct, read);
    if (!owners.length) owners = referrers(t, byNearness(t, tests).slice(0, MAX_SEARCHED), read);
    if (owners.length) {
      ownedBy[t] = owners;
      for (const o of owners) if (!run.includes(o)) run.push(o);
    } else unowned.push(t);
  }
  return { files: run, ownedBy, unowned };
}
