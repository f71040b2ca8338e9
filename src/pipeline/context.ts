import { environmentDefaults } from './environmentDefaults.js';
import { ecosystemOfRunner, factPaths, INSTALL_NOTES, type RepoFacts } from '../ecosystems/index.js';
import type { Progress } from './progress.js';
import { silentProgress } from './progress.js';
import { detectRunner, isFileLevel, runnerFromCommand } from '../harness/runners.js';
import type { RunnerSpec } from '../results/types.js';
import { commitDateAndTag, listFiles, openRepo, readFileAt, resolveRev } from '../repo/git.js';
import { readTreeFiles } from '../repo/objects.js';
import { asOfModeFromEnv, installAsOf, versionFromDescribe, type AsOfMode } from './asOf.js';
import { capLimits, ceilingsFromEnv, type CappedLimit } from '../sandbox/containers/ceilings.js';
import type { Environment, ResourceLimits, Sandbox, WarmUp } from '../sandbox/types.js';
import { CONFIG_PATH, parseRepoConfig, type RepoConfig } from '../config/repoConfig.js';

/** Where and how a repository's tests run: resolved once, shared by validate, reproduce and eval. */
export interface RepoContext {
  repo: string;
  base: string;
  env: Environment;
  runner: RunnerSpec;
  /** `.github/swt.yml` at base; empty when the repository has none. */
  config: RepoConfig;
  /** Every file at base. */
  files: string[];
  /** What env was built from, to build another side's environment the same way. */
  baseImage: string;
  /** What stands in for baseImage offline, as EnvironmentSpec.fallbackImages. */
  fallbackImages?: readonly string[];
  install: string;
  /** The runner's ecosystem's steps around the install (EnvironmentSpec.warm). */
  warm?: WarmUp;
  /** Whose package cache installs share (see EnvironmentSpec.cacheScope). */
  cacheScope?: string;
  /** What the install's fallback did, when it had to (no registry answered). */
  installNotes: string[];
  /** The date the default install resolved unpinned dependencies as of (RepoFacts.asOf); absent: today's registries, or a named install. */
  dependenciesAsOf?: string;
}

export interface ContextInput {
  repo: string;
  base: string;
  image?: string;
  install?: string;
  testCmd?: string;
  /** Whose package cache installs share: the App passes `owner/name`; default, the repository's path. */
  cacheScope?: string;
  /** The repository's config as the caller read it (the App: through github/config.ts, with `_extends`); default, `.github/swt.yml` at base. */
  config?: RepoConfig;
  /** The files the test patch touches: a repository of several ecosystems runs the one they are in. */
  touched?: readonly string[];
  /** Which registry state the default install resolves against (default: SWT_DEPENDENCIES_AS_OF, then the config's `dependencies_as_of`, then `auto`). */
  dependenciesAsOf?: AsOfMode;
}

/** A context before its environment is built: everything read from the repository's files. */
export type RepoPlan = Omit<RepoContext, 'env' | 'installNotes'>;

export async function prepareContext(sandbox: Sandbox, input: ContextInput, progress: Progress = silentProgress, read?: Promise<RepoRead>): Promise<RepoContext> {
  return buildEnvironment(sandbox, await planContext(input, progress, read), progress);
}

/** What planContext reads of the repository at base, whatever the touched files: a caller may start it early (readRepo). */
export interface RepoRead {
  repo: string;
  base: string;
  config: RepoConfig;
  files: string[];
  facts: RepoFacts;
  asOfMode: AsOfMode;
}

/** The repository's config and facts at base (git only); `touched` plays no part. */
export async function readRepo(input: Omit<ContextInput, 'touched'>): Promise<RepoRead> {
  const repo = (await openRepo(input.repo)).path;
  const base = await resolveRev(repo, input.base);
  const files = await listFiles(repo, base);
  // Precedence: what the caller says, then the repository's config, then what its files suggest.
  const config = input.config ?? (files.includes(CONFIG_PATH) ? parseRepoConfig(await readFileAt(repo, base, CONFIG_PATH)) : {});
  // Read even with everything named: the project's own test environment comes from its files.
  const asOfMode = input.dependenciesAsOf ?? asOfModeFromEnv() ?? config.dependencies_as_of ?? 'auto';
  return { repo, base, config, files, facts: await repoFacts(repo, base, files, asOfMode), asOfMode };
}

/** Where and how the tests would run, from the repository's files alone: no container yet. `read`: readRepo of the same input, started earlier. */
export async function planContext(input: ContextInput, progress: Progress = silentProgress, read: Promise<RepoRead> = readRepo(input)): Promise<RepoPlan> {
  const { repo, base, config, files, facts, asOfMode } = await read;
  const image = input.image || config.image;
  const install = input.install ?? config.install;
  const testCmd = input.testCmd || config.test_command;
  const touched = input.touched ?? [];
  const named = testCmd ? runnerFromCommand(testCmd, facts, touched) : detectRunner(facts, touched);
  const testEnv = ecosystemOfRunner(named)?.testEnvironment?.(facts);
  const runner: RunnerSpec = testEnv ? { ...named, env: testEnv.env, envSource: testEnv.source } : named;
  const defaults = environmentDefaults(facts, runner, touched);
  const baseImage = image || defaults!.image;
  const fallbackImages = image ? undefined : defaults!.fallbackImages;
  const installCmd = install ?? defaults!.install;
  // Only the default install takes the date: a named command is run as it is.
  const asOf = install === undefined && facts.asOf && installCmd.trim() ? facts.asOf : undefined;
  if (asOf) progress.step(`dependencies as of ${asOf.slice(0, 10)}, the base commit's date (dependencies_as_of: ${asOfMode})`);
  progress.step(`environment ${baseImage}${installCmd ? ` + ${installCmd}` : ''}`);
  const cacheScope = input.cacheScope;
  const eco = ecosystemOfRunner(runner);
  const steps: WarmUp = { ...(eco?.beforeInstall ? { before: eco.beforeInstall } : {}), ...(eco?.warm ? { after: eco.warm } : {}), ...(eco?.savesInstall ? { saveInstall: true } : {}) };
  const warm = Object.keys(steps).length ? steps : undefined;
  return { repo, base, runner, config, files, baseImage, ...(fallbackImages ? { fallbackImages } : {}), install: installCmd, ...(warm ? { warm } : {}), ...(cacheScope ? { cacheScope } : {}), ...(asOf ? { dependenciesAsOf: asOf } : {}) };
}

/** The plan's environment, built (or found cached), and what its install noted. */
export async function buildEnvironment(sandbox: Sandbox, plan: RepoPlan, progress: Progress = silentProgress): Promise<RepoContext> {
  const { repo, base, baseImage, fallbackImages, install, warm, cacheScope } = plan;
  const env = await sandbox.ensureEnvironment({ repo, rev: base, baseImage, ...(fallbackImages ? { fallbackImages } : {}), install, ...(warm ? { warm } : {}), ...(cacheScope ? { cacheScope } : {}) }, (m) => progress.step(m));
  const installNotes = await readInstallNotes(sandbox, env, repo, base, install);
  for (const n of installNotes) progress.step(n);
  return { ...plan, env, installNotes };
}

/** What an install's fallback recorded (air-gapped: installed from what the image holds), one note a line. */
/** Notes by environment image: an image's notes never change, and reading them costs a container. */
const notesOfImage = new Map<string, string[]>();

async function readInstallNotes(sandbox: Sandbox, env: Environment, repo: string, rev: string, install: string): Promise<string[]> {
  if (!install.includes(INSTALL_NOTES)) return [];
  const keep = (text: string) => [...new Set(text.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('swt: ')))];
  // Read at the build and kept on the image: no container.
  if (env.installNotes !== undefined) return keep(env.installNotes);
  // A tag built again (evicted, then rebuilt) may hold other notes: read those afresh.
  const known = env.cached ? notesOfImage.get(env.image) : undefined;
  if (known) return known;
  const r = await sandbox.run({ env, repo, state: { rev, patches: [] }, command: `cat ${INSTALL_NOTES} 2>/dev/null; true` });
  const notes = keep(r.output ?? '');
  if (notesOfImage.size >= 1000) notesOfImage.delete(notesOfImage.keys().next().value!);
  notesOfImage.set(env.image, notes);
  return notes;
}

/** A request above the operator's ceiling, lowered to it: who asked, and for what. */
export interface CappedNote extends CappedLimit {
  /** `.github/swt.yml` or `the caller` (command-line flags, the App's own settings). */
  source: string;
}

export interface LimitsDecision {
  /** What the runs get: the config's limits, overridden by the caller's, none above a ceiling. */
  limits: Partial<ResourceLimits>;
  capped: CappedNote[];
}

/**
 * Limits from the repository's config, overridden by the caller's, then capped at the operator's
 * ceilings (a config can lower the limits, never raise them past the ceilings).
 */
export function decideLimits(config: RepoConfig, limits: Partial<ResourceLimits> = {}, ceilings: ResourceLimits = ceilingsFromEnv()): LimitsDecision {
  const c = config.limits ?? {};
  const fromConfig: Partial<ResourceLimits> = {
    timeoutMs: c.timeout_seconds === undefined ? undefined : c.timeout_seconds * 1000,
    memoryBytes: c.memory_mib === undefined ? undefined : c.memory_mib * 1024 ** 2,
    pids: c.pids,
    cpus: c.cpus,
    diskBytes: c.disk_mib === undefined ? undefined : c.disk_mib * 1024 ** 2,
    outputBytes: c.output_kib === undefined ? undefined : c.output_kib * 1024,
  };
  const defined = (o: Partial<ResourceLimits>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<ResourceLimits>;
  const fromCaller = defined(limits);
  const { limits: capped, capped: notes } = capLimits({ ...defined(fromConfig), ...fromCaller }, ceilings);
  return { limits: capped, capped: notes.map((n) => ({ ...n, source: n.limit in fromCaller ? 'the caller' : CONFIG_PATH })) };
}

/** The files and the ones ecosystems read (root manifests such as package.json and go.mod, a monorepo's packages, CI workflows), at `rev`. */
async function repoFacts(repo: string, rev: string, files: string[], asOfMode: AsOfMode): Promise<RepoFacts> {
  const manifests: Record<string, string> = {};
  const git = await openRepo(repo);
  // One batch read: a monorepo has hundreds of package manifests. An unreadable one (a submodule, a
  // symlink elsewhere) is absent: detection sees the file without its text.
  const [texts, { date, describe }] = await Promise.all([readTreeFiles(git, `${await resolveRev(git, rev)}^{tree}`, factPaths(files)), commitDateAndTag(git, rev)]);
  for (const [path, content] of texts) manifests[path] = content.toString('utf8');
  const asOf = installAsOf(date, asOfMode);
  const tagVersion = describe ? versionFromDescribe(describe) : undefined;
  return { files, manifests, ...(asOf ? { asOf } : {}), ...(tagVersion ? { tagVersion } : {}) };
}
