/** Node.js (JavaScript / TypeScript): package.json, npm/yarn/pnpm, and its test runners. Pure. */
import type { PackageRunner, RunnerSpec } from '../../results/types.js';
import { REGISTRIES } from '../registries.js';
import type { Ecosystem, PathInfo, RepoFacts } from '../types.js';
import { DENO_CONFIGS, DENO_TEST, denoConfigOf, denoImportsInstall, denoTestOptions, denoTestTask } from './deno.js';
import { BUN_CLI, bunCliInstall, DENO_CLI, denoCliInstall, installCommand, packageManagerOf, PM_MANIFESTS, underPackageManager } from './packageManagers.js';
import { ownScriptRunner } from './ownScript.js';
import { NODE_RUNNERS } from './runners.js';
import { namedByConfig, nodeTestFileRules, testConfigFiles } from './testConfig.js';
import { isNodeTestStep, WORKFLOW_FILE, workflowTestEnv } from './workflowEnv.js';
import { nestedManifests, owningPackage, WORKSPACE_FILES, workspaceGlobs, workspacePackages } from './workspaces.js';
import { nodeDependencyManifest, nodeMachinery } from './machinery.js';

export { isTape } from './runners.js';

const DEFAULT_NODE_MAJOR = 22;
const OLDEST_NODE_MAJOR = 18;

/** Lowest major allowed by an engines range such as ">=18", "^20.3", ">= 0.8"; clamped to a supported one. */
export function nodeMajorFor(range: string | undefined): number {
  if (!range) return DEFAULT_NODE_MAJOR;
  const majors = [...range.matchAll(/(\d+)(?:\.\d+)*/g)].map((m) => Number(m[1]));
  if (majors.length === 0) return DEFAULT_NODE_MAJOR;
  const lowest = Math.min(...majors);
  return lowest < OLDEST_NODE_MAJOR ? DEFAULT_NODE_MAJOR : lowest;
}

/** package.json as detection reads it: parsed by the caller, or from the manifest text (any JSON; every field read is checked). */
function packageJsonOf(facts: RepoFacts): any {
  if (facts.packageJson && typeof facts.packageJson === 'object') return facts.packageJson;
  const text = facts.manifests?.['package.json'];
  if (text === undefined) return facts.files.includes('package.json') ? {} : undefined;
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

const JEST_CONFIGS = /^jest\.config\.(js|cjs|mjs|ts|cts|mts|json)$/;

/** The runner package.json names (dependencies, then scripts), else deno.json's `test` task, or undefined. */
function namedRunner(facts: RepoFacts): RunnerSpec | undefined {
  return runnerOfPackage(packageJsonOf(facts), facts.files) ?? denoTaskRunner(facts);
}

/** `deno test` with the project's own options: the `deno` npm package when it is a dependency, else the CLI the install fetches. */
function denoRunner(command: string, pkg: any): RunnerSpec {
  const viaNpm = !!(pkg?.dependencies?.deno ?? pkg?.devDependencies?.deno);
  const options = denoTestOptions(command).map((o) => `${o} `).join('');
  return { kind: 'deno-test', template: `${viaNpm ? 'npx deno' : DENO_CLI} test ${options}{files}` };
}

/** A deno.json/deno.jsonc `test` task (whatever it runs: `deno test` is Deno's runner), with the options of its `deno test`. */
function denoTaskRunner(facts: RepoFacts): RunnerSpec | undefined {
  const task = denoTestTask(denoConfigOf(facts));
  return task === undefined ? undefined : denoRunner(task, packageJsonOf(facts));
}

/** The runner a package.json names, given the files of its package (paths relative to it). */
function runnerOfPackage(pkg: any, files: readonly string[]): RunnerSpec | undefined {
  if (!pkg || typeof pkg !== 'object') return undefined;
  const deps: Record<string, unknown> = { ...(pkg.dependencies ?? {}), ...(pkg.devDependencies ?? {}), ...(pkg.peerDependencies ?? {}) };
  const scripts: string = Object.values(pkg.scripts ?? {}).filter((s) => typeof s === 'string').join(' ; ');
  const has = (name: string) => Object.prototype.hasOwnProperty.call(deps, name);
  const inScripts = (re: RegExp) => re.test(scripts);
  if (has('vitest') || inScripts(/\bvitest\b/)) return { kind: 'vitest', template: 'npx vitest run {files}' };
  if (has('jest') || inScripts(/\bjest\b/)) {
    const hasJestConfig = files.some((f) => JEST_CONFIGS.test(f)) || pkg.jest !== undefined;
    const tsJest = has('ts-jest') && !hasJestConfig;
    return { kind: 'jest', template: tsJest ? 'npx jest --preset ts-jest {files}' : 'npx jest {files}' };
  }
  if (has('ava') || inScripts(/(^|[\s;&|])ava(\s|$)/)) return { kind: 'ava', template: 'npx ava {files}' };
  if (inScripts(/(^|[\s;&|])bun\s+test(\s|$)/)) return { kind: 'bun-test', template: has('bun') ? 'npx bun test {files}' : `${BUN_CLI} test {files}` };
  const denoScript = Object.values(pkg.scripts ?? {}).find((v): v is string => typeof v === 'string' && DENO_TEST.test(v));
  if (denoScript) return denoRunner(denoScript, pkg);
  if (has('jasmine') || inScripts(/(^|[\s;&|])jasmine(\s|$)/)) return { kind: 'jasmine', template: 'npx jasmine {files}' };
  if (has('uvu') || inScripts(/(^|[\s;&|/])uvu(\s|$)/)) return { kind: 'uvu', template: `npx uvu ${uvuRequires(pkg.scripts)}{files}` };
  if (has('mocha') || inScripts(/\bmocha\b/)) return { kind: 'mocha', template: `${mochaLoaders(pkg.scripts)}npx mocha --exit ${mochaOptions(pkg.scripts)}{files}` };
  if (has('tape') || inScripts(/\btape\b/)) return { kind: 'tap', template: 'npx tape {files}' };
  if (has('tap') || inScripts(/(^|[\s;&|])tap(\s|$)/)) return { kind: 'tap', template: 'npx tap {files}' };
  if (inScripts(/\bnode\s+(?:[^;&|]*\s)?--test\b/)) return { kind: 'node-test', template: 'node --test {files}' };
  return undefined;
}

/** The package.json script segment that runs mocha (`a && B=1 mocha -r x t/*.ts` → `B=1 mocha -r x t/*.ts`), or ''. */
function mochaSegment(scripts: unknown): string {
  if (!scripts || typeof scripts !== 'object') return '';
  // The `test` script first: it is what CI runs.
  const ordered = Object.entries(scripts).sort(([a], [b]) => Number(b === 'test') - Number(a === 'test'));
  const runs = ordered.map(([, v]) => v).filter((v): v is string => typeof v === 'string').flatMap((v) => v.split(/&&|\|\||;/));
  return runs.map((r) => r.trim()).find((r) => /(^|[\s/])_?mocha(\s|$)/.test(r)) ?? '';
}

/**
 * What the project's mocha script needs for its files to load at all (TypeScript through
 * ts-node, a setup module): its `--require`/`-r` modules and `--extension`s. Other options (spec
 * globs, reporters, watch) are the harness's to choose.
 */
function mochaOptions(scripts: unknown): string {
  const words = mochaSegment(scripts).split(/\s+/);
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const m = /^(--require|-r|--extension)(?:=(.+))?$/.exec(words[i]!);
    const value = m && (m[2] ?? words[i + 1]);
    if (!m || !value || !SAFE_WORD.test(value)) continue;
    kept.push(`${m[1] === '-r' ? '--require' : m[1]} ${value}`);
    if (m[2] === undefined) i++;
  }
  return kept.map((k) => `${k} `).join('');
}

/** The `-r`/`--require` modules of the script that runs uvu (`uvu -r tsm test` → `-r tsm `): its files may not load without them. */
function uvuRequires(scripts: unknown): string {
  if (!scripts || typeof scripts !== 'object') return '';
  const run = Object.values(scripts).filter((v): v is string => typeof v === 'string').flatMap((v) => v.split(/&&|\|\||;/)).find((r) => /(^|[\s/])uvu(\s|$)/.test(r)) ?? '';
  const words = run.trim().split(/\s+/);
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const m = /^(-r|--require)(?:=(.+))?$/.exec(words[i]!);
    const value = m && (m[2] ?? words[i + 1]);
    if (!m || !value || !SAFE_WORD.test(value)) continue;
    kept.push(`-r ${value} `);
    if (m[2] === undefined) i++;
  }
  return kept.join('');
}

/** Variables the mocha script sets for itself (`TS_NODE_TRANSPILE_ONLY=true mocha …`), as a command prefix. */
function mochaLoaders(scripts: unknown): string {
  const env = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)+)(?:npx\s+)?_?mocha\b/.exec(mochaSegment(scripts));
  const vars = env ? env[1]!.trim().split(/\s+/).filter((v) => SAFE_WORD.test(v)) : [];
  return vars.map((v) => `${v} `).join('');
}

/** A word from package.json that goes into the command as it is: no shell syntax. */
const SAFE_WORD = /^[\w@./:=+-]+$/;

/**
 * A monorepo's packages that name their own runner, each run from its directory (install stays at
 * the root); empty when the root declares no workspaces.
 */
function packageRunners(facts: RepoFacts, rootPkg: any): PackageRunner[] {
  const texts = facts.manifests ?? {};
  const dirs = workspacePackages(facts.files, workspaceGlobs(rootPkg, texts));
  const out: PackageRunner[] = [];
  for (const dir of dirs) {
    const text = texts[`${dir}/package.json`];
    if (text === undefined) continue;
    let pkg: unknown;
    try {
      pkg = JSON.parse(text);
    } catch {
      continue;
    }
    const own = facts.files.filter((f) => f.startsWith(`${dir}/`) && owningPackage(f, dirs) === dir).map((f) => f.slice(dir.length + 1));
    const runner = runnerOfPackage(pkg, own);
    if (runner) out.push({ dir, runner });
  }
  return out;
}

/** The default runner: the root's, with the packages that name their own. */
function defaultRunnerOf(facts: RepoFacts): RunnerSpec {
  const pkg = packageJsonOf(facts);
  // Under Yarn Plug'n'Play the tools run through yarn: there is no node_modules/.bin.
  const pm = packageManagerOf(facts, pkg);
  const viaPm = (spec: RunnerSpec): RunnerSpec => ({ ...spec, template: underPackageManager(pm, spec.template) });
  const root = viaPm(namedRunner(facts) ?? ownScriptRunner(pkg) ?? { kind: 'node-test', template: 'node --test {files}' });
  const packages = packageRunners(facts, pkg).map((p) => ({ dir: p.dir, runner: viaPm(p.runner) }));
  return { ...root, ...(packages.length ? { packages } : {}) };
}

const SCRIPT = /\.[cm]?[jt]sx?$/;
/** `*.test.js`, `*.spec.js`, and jasmine's `*_spec.js` (its `*Spec.js` live under spec/; elsewhere the name is often source: `ApiSpec.ts`). */
const JS_TEST_NAME = /(\.(test|spec)|_spec)\.[cm]?[jt]sx?$/;
const TEST_DIR = /^(tests?|specs?|__tests__|testing)$/i;
/** ava's default globs beyond the above: `test.js` at the root or in src/source, and `test-*.js`. */
const AVA_TEST_NAME = /^test(-[^/]+)?\.[cm]?[jt]sx?$/;
const AVA_TEST_HOME = new Set(['src', 'source']);

/** Directories whose files tests read or import, but which no runner is given directly. */
const SUPPORT_DIRS = new Set([
  'fixture', 'fixtures', '__fixtures__', '__snapshots__', 'snapshots', 'tap-snapshots', '__mocks__', 'mocks', 'stubs',
  'helper', 'helpers', 'support', 'util', 'utils', 'data', 'testdata', 'test-data', 'resources', 'assets',
]);

/** Files that configure or support the runner. */
const SUPPORT_FILE =
  /^(setup\.[cm]?[jt]s|\.mocharc\.[^/]*|[^/]*\.d\.[cm]?ts|[^/]*\.config\.[cm]?[jt]s|(helpers?|utils?|common|support|fixtures?|global[-_]?(setup|teardown)|bootstrap|setup[-_]tests?|test[-_]?(helpers?|utils?|setup|common))\.[cm]?[jt]sx?)$/i;

export const node: Ecosystem = {
  id: 'node',
  language: 'JavaScript/TypeScript',
  manifests: [...PM_MANIFESTS, ...DENO_CONFIGS, 'deno.lock'],
  projectFile: 'package.json',
  // A monorepo's workspace files and package manifests, and the CI workflows (the test environment).
  readsFiles: (files) => [...WORKSPACE_FILES, ...nestedManifests(files), ...files.filter((f) => WORKFLOW_FILE.test(f))],
  dependencyManifest: nodeDependencyManifest,
  testMachinery: nodeMachinery,
  runnerNames: ['jest', 'vitest', 'ava', 'jasmine', 'bun test', 'deno test', 'mocha', 'uvu', 'node --test', 'tap (node-tap)', 'tape'],
  ownsPath: (p: PathInfo) => SCRIPT.test(p.base) || p.base.startsWith('.mocharc.'),
  detect(facts) {
    // A Deno project may have no package.json: its deno.json's test task names the runner.
    if (!packageJsonOf(facts)) return denoTaskRunner(facts) ? 30 : 0;
    // A package without a named runner still runs under node --test, but a Python project's markers outrank it.
    return namedRunner(facts) ? 30 : 5;
  },
  isTestFile(p, rules) {
    if (!SCRIPT.test(p.base)) return false;
    if (SUPPORT_FILE.test(p.base) || p.dirs.some((d) => SUPPORT_DIRS.has(d))) return false;
    // The runner's own config adds the files it names; the conventions hold for the rest.
    if (rules && namedByConfig(p.path, rules)) return true;
    if (JS_TEST_NAME.test(p.base) || p.dirs.some((d) => TEST_DIR.test(d))) return true;
    if (!AVA_TEST_NAME.test(p.base)) return false;
    return p.base.startsWith('test-') || p.dirs.length === 0 || (p.dirs.length === 1 && AVA_TEST_HOME.has(p.dirs[0]));
  },
  isTestSupport: (p) => p.dirs.some((d) => d === '__snapshots__' || d === 'tap-snapshots'),
  testFileRules: { reads: testConfigFiles, rules: nodeTestFileRules },
  languageOf(testFiles, files) {
    const tests = testFiles.filter((f) => SCRIPT.test(f) && !/\.d\.[cm]?ts$/.test(f));
    const tsTests = tests.filter((f) => /\.[cm]?tsx?$/.test(f)).length;
    if (tests.length) return tsTests * 2 >= tests.length && tsTests > 0 ? 'typescript' : 'javascript';
    const ts = files.filter((f) => /\.[cm]?tsx?$/.test(f)).length;
    const js = files.filter((f) => /\.[cm]?jsx?$/.test(f)).length;
    return ts > js ? 'typescript' : 'javascript';
  },
  // node_modules and npm's, yarn's and pnpm's own files: all under /testbed and home.
  savesInstall: true,
  environment(facts) {
    const pkg = packageJsonOf(facts);
    const image = `node:${nodeMajorFor(typeof pkg?.engines?.node === 'string' ? pkg.engines.node : undefined)}`;
    const pm = packageManagerOf(facts, pkg);
    // `bun test` with no bun dependency runs the bun binary the install fetches (bun installs fetch it anyway).
    const runners = [namedRunner(facts), ...packageRunners(facts, pkg).map((p) => p.runner)];
    const needsBun = pm.name !== 'bun' && runners.some((r) => r?.template.startsWith(BUN_CLI));
    const needsDeno = runners.some((r) => r?.template.startsWith(DENO_CLI));
    // A Deno project with no package.json has nothing for npm to install: only the Deno CLI.
    const deno = needsDeno ? denoCliInstall() + denoImportsInstall(denoConfigOf(facts), facts.files.includes('deno.lock')) : '';
    const install = !pkg && needsDeno ? deno : installCommand(pm, facts.asOf) + (needsBun ? `; ${bunCliInstall()}` : '') + (needsDeno ? `; ${deno}` : '');
    return { image, install };
  },
  defaultRunner: defaultRunnerOf,
  testEnvironment(facts) {
    const ci = workflowTestEnv(facts.manifests ?? {}, isNodeTestStep);
    return ci ? { env: ci.env, source: ci.source } : undefined;
  },
  runners: NODE_RUNNERS,
  // a module or name the test uses does not exist, or the test does not parse (Deno: its own
  // "Module not found" and the type checker's missing module, name, export or property)
  ownErrorText: /Cannot find module|ERR_MODULE_NOT_FOUND|Failed to (load|resolve) (url|import)|Cannot use import statement outside a module|Unexpected token|is not defined\b|Module not found "|TS(2304|2305|2307|2339|2724) \[ERROR\]/,
  registries: REGISTRIES.node,
  coverage: { counter: 'v8' },
};
