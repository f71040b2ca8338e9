/**
 * The shape every ecosystem module has (src/ecosystems/<id>/index.ts): everything particular to a
 * language and its tools. The harness, pipeline, generation and coverage ask the registry
 * (src/ecosystems/index.ts) and never test for a language by name. Pure: no I/O.
 */
import type { BuildFailure, FileError, RunnerSpec, TestResult } from '../results/types.js';
import type { Node as SyntaxNode } from 'web-tree-sitter';

/** What detection and environment defaults read of a repository at a revision. */
export interface RepoFacts {
  /** Repository file paths, relative to its root. */
  files: readonly string[];
  /** Text of the root files ecosystems name in `manifests`, by path (absent: no such file). */
  manifests?: Readonly<Record<string, string>>;
  /** Parsed package.json at the root (older callers give it parsed; the Node module reads it from `manifests` otherwise). */
  packageJson?: any;
  /**
   * The date unpinned dependencies resolve as of (start of the UTC day after the base commit's, as
   * RFC 3339): the install takes no release published after it. Absent: today's registries.
   */
  asOf?: string;
  /** The project's own version from its git tags (`git describe`), for builds that take it from git. */
  tagVersion?: string;
}

/**
 * Test files as a project's runner config names them (ava's `files`, jest's `testMatch`/`testRegex`,
 * vitest's `include`, mocha's `spec`): repository-relative globs, regular expressions on `/<path>`,
 * and where they were read. A file they name is a test file besides the conventions.
 */
export interface TestFileRules {
  globs: string[];
  /** Globs that take files back out (ava's `!…`, vitest's `exclude`). */
  excludes: string[];
  regexes: string[];
  /** `package.json "ava".files`, `vitest.config.ts test.include`, … */
  sources: string[];
}

/** A path split the way the test-file conventions look at it. */
export interface PathInfo {
  /** Normalised, repository-relative. */
  path: string;
  /** Directory segments. */
  dirs: string[];
  /** File name. */
  base: string;
}

/** What a runner's report says about one run (one report file). */
export interface OneReport {
  tests: TestResult[];
  fileErrors: FileError[];
  /** The report covers the whole run (false: the run stopped midway). */
  complete: boolean;
  /** Failures the report names outside any test or file. */
  errors: string[];
  /**
   * Compiled languages: units (a Go package, a crate, a module) whose tests did not build, so every
   * test of the unit failed with the build. Classification judges only the tests the patch adds or
   * changes there; the rest are "not judged".
   */
  buildFailures?: BuildFailure[];
}

export interface ReportContext {
  /** The requested test files, repository-relative. */
  files: string[];
  root?: string;
  output: string;
  /** Set when the runner ran one file per invocation: the file this report is for. */
  file?: string;
}

/** One runner kind: how to recognise it in a command, build the command, and read its report. */
export interface RunnerDef {
  kind: string;
  /** Recognise the runner in a user's command (checked in registry order; most specific first). */
  recognise: RegExp;
  /** Refine the recognition (tape vs tap): false lets the next runner try. */
  accepts?(template: string): boolean;
  /** The report file under the out dir. */
  reportFile: string;
  /** One invocation per file (the report cannot tell which file a test came from). */
  runsPerFile?(spec: RunnerSpec): boolean;
  /**
   * The shell command that runs `files` (repository-relative, already checked) and writes the
   * report to `${out}/${report}`. Receives the quoted words for `{files}`. See CommandOptions.
   */
  command(spec: RunnerSpec, files: string[], out: string, report: string, opts?: CommandOptions): string;
  /**
   * The shell command that runs only the tests `ids` (as `parse` reports them, all of one `file`)
   * and writes the report like `command`: confirmation reruns of the tests that moved. Absent: the
   * harness reruns the whole file. Selecting a few more (a name shared by two suites) is harmless;
   * tests it did not run are not counted.
   */
  commandForTests?(spec: RunnerSpec, file: string, ids: readonly string[], out: string, report: string): string;
  /** The command ends with its own `exit`: the harness runs it in a subshell. */
  exits?: boolean;
  /** Shell run before the command (e.g. writing the harness's own reporter), with a leading space; or ''. */
  prepare?(spec: RunnerSpec, out: string): string;
  /** Parse one report file. */
  parse(content: string, ctx: ReportContext): OneReport;
  /** When the report file is missing, a report recovered from the output (mocha's marker lines). */
  fromOutput?(output: string): string | undefined;
  /** The runner may report files it was not given (vitest's substring filters, mocha's config): keep only the requested. */
  onlyRequested?: boolean;
  /** Output lines that mean the runner itself is missing (besides the shell's "not found"). */
  notFound?: RegExp[];
  /**
   * Confirmation rounds inside the first run's own process (see RoundPlan): each round starts from
   * the state the process had before any test ran, so it sees what a new process would without
   * paying the runner's start again. Absent: confirmation reruns start new processes.
   */
  roundsInProcess?: {
    /** Shell run before the command (writing and enabling the harness's hook), with a leading space. */
    prepare(out: string, plan: RoundPlan): string;
    /** Round `round`'s (1-based) report, beside `report` under the out dir. */
    report(report: string, round: number): string;
    /** Output of a run without a report that means the hook kept it from running (it runs again without). */
    hookFailed: RegExp;
    /**
     * Each round starts from a copy of the process as it was before any test ran (pytest's fork),
     * so a round that differs from the run is evidence of a flaky test. Otherwise (jest, vitest, mocha:
     * process-level state carries over) a round that differs proves nothing: its test reruns in
     * new processes, which decide.
     */
    freshProcess: boolean;
  };
}

/** How a first run is asked for, beyond its files. */
export interface CommandOptions {
  /** The run's container stays up for this side's confirmation reruns, which may reuse what it leaves. */
  kept?: boolean;
  /** How many confirmation rounds the run holds in its own process (roundsInProcess, whose `prepare` ran before it). */
  rounds?: number;
}

/**
 * Extra rounds of the tests a test patch adds or changes, asked of the first run before it is
 * known which tests move: the tests whose lines hold an added line (new-file line numbers, per
 * repository-relative file), or whose name holds a literal of one, run `rounds` more times. Confirmation then uses them for the tests
 * that moved, and reruns only the rest.
 */
export interface RoundPlan {
  rounds: number;
  lines: Record<string, number[]>;
  /**
   * The string literals of those added lines: a test whose name holds one is asked for too (a
   * data-driven test's cases are rows the patch adds; their test's own lines are not new).
   */
  names?: string[];
}

/** Texts of the files a `TestMachinery.reads` named, at base and at head (absent: not in that revision). */
export interface MachineryTexts {
  base: Readonly<Record<string, string>>;
  head: Readonly<Record<string, string>>;
}

/**
 * Test machinery: the files whose change alters how tests run or how their results are reported
 * (conftest.py, a jest set-up file, a Go TestMain, build.rs). A head that changes one runs the
 * reproducing tests with base's instead; a fork's head waits for a maintainer, and a result that
 * needed the head's own is flagged and never likely correct.
 */
export interface TestMachinery {
  /** Files whose text `changes` reads, given the changed paths (root configs that name set-up files, a changed `_test.go`). */
  reads(changed: readonly string[]): string[];
  /** Whether the change to `p` (a path git finds changed from base to head) is one. */
  changes(p: PathInfo, texts: MachineryTexts): boolean;
}

/** A base image and install command for a repository, by the versions it declares. */
export interface EnvironmentChoice {
  image: string;
  install: string;
  /** Images that serve as well when `image` can only be stood in for (offline), best first: older Pythons the project allows. */
  fallbackImages?: readonly string[];
}

/** Which line counter measures ΔC for this ecosystem, or why none does. */
export type CoverageSupport =
  | {
      counter: 'python-trace' | 'v8' | 'go-cover' | 'gcov';
      /** Shell run before a coverage run's command, in its shell: what turns the ecosystem's builds into counting ones (gcov's `--coverage`). */
      setup?: string;
    }
  | { counter: null; reason: string };

export interface Ecosystem {
  /** Short id: `node`, `python`, `go`. */
  id: string;
  /** The language as people name it, for messages and prompts. */
  language: string;
  /** Root files whose text detection and defaults read (the pipeline loads them into facts.manifests). */
  manifests: readonly string[];
  /**
   * The root file that names the project, and so how a new test imports it (go.mod's module path,
   * package.json's name and module type): a small model's prompt shows its first lines.
   */
  projectFile?: string;
  /**
   * Further files, of the repository's, whose text detection and defaults read besides the root
   * `manifests` (a monorepo's package manifests, the CI workflows): loaded into `facts.manifests`
   * the same way, but not dependency manifests (they never decide an install).
   */
  readsFiles?(files: readonly string[]): string[];
  /**
   * The variables the project's own test runs set (its CI workflow's for the step that runs the
   * tests) and where they came from; undefined when it sets none. Applies to the default runner
   * and to a named test command alike.
   */
  testEnvironment?(facts: RepoFacts): { env: Record<string, string>; source: string } | undefined;
  /**
   * A dependency manifest or lockfile of its (any directory): a head that changes one gets its own
   * install, a fork's head waits for a maintainer, and the environment key hashes it.
   */
  dependencyManifest(p: PathInfo): boolean;
  testMachinery: TestMachinery;
  /** Its runners as users name them, for "supported runners: …" messages. */
  runnerNames: readonly string[];
  /** Whether a path is source of this ecosystem's language (decides which module a path's test-file question goes to). */
  ownsPath(p: PathInfo): boolean;
  /** How strongly the repository's files say it is this ecosystem: 0 = not at all, higher wins. */
  detect(facts: RepoFacts): number;
  /**
   * Test-file convention: a runner of this ecosystem would be given this file (only asked for owned
   * paths); `rules`, when given, are the project's own runner config (see `testFileRules`).
   */
  isTestFile(p: PathInfo, rules?: TestFileRules): boolean;
  /**
   * The project's runner config that names its test files: `reads(files)` the config files to read
   * (root only), `rules(texts, parse)` what they name (literal values only; `parse` gives a JS/TS
   * file's syntax tree when its grammar is loaded, so no config code runs). Undefined: conventions only.
   */
  testFileRules?: {
    reads(files: readonly string[]): string[];
    rules(texts: Readonly<Record<string, string>>, parse: (path: string, text: string) => SyntaxNode | undefined): TestFileRules | undefined;
  };
  /** Support code or data belonging to the tests beyond test directories (conftest.py, testdata/…). */
  isTestSupport?(p: PathInfo): boolean;
  /** The language its tests are written in, as generation names it (`python`, `typescript`, `go`), from the repository's test files and all its files. */
  languageOf(testFiles: readonly string[], files: readonly string[]): string;
  /** Default image and install command, by the version the project declares. */
  environment(facts: RepoFacts): EnvironmentChoice;
  /** The runner to use when nobody named one. */
  defaultRunner(facts: RepoFacts): RunnerSpec;
  runners: readonly RunnerDef[];
  /**
   * Run offline after the install, into the environment image (output discarded, failure ignored):
   * makes the first test run in a fresh container as fast as a later one (Python's bytecode, Go's
   * build cache). Must stay correct for any overlay a run adds (content-checked caches only).
   */
  warm?: string;
  /**
   * Run before every install of its projects (the default or one a repository names), with the
   * install's variables, never in a test run (output discarded, failure ignored): seeds the tools'
   * own caches from the package cache (`$SWT_PKG_CACHE`, when mounted) and hands them the egress
   * proxy where no variable reaches (Maven's settings). `warm` saves what the install fetched back.
   */
  beforeInstall?: string;
  /**
   * Its installs (the default and the usual named ones) write only under /testbed and the sandbox
   * user's home, or elsewhere only what `beforeInstall` brings back from the package cache: what
   * one made there can be saved into the package cache and stand for the same install (same
   * environment key) when its image is gone (sandbox/environments/savedInstall.ts).
   */
  savesInstall?: boolean;
  /**
   * Compiled languages: which tests a test patch adds or changes, as a predicate on test results.
   * With it, tests of a unit that did not build at base and that the patch did not touch are
   * reported as not judged (classification's changedTest).
   */
  changedTests?(testPatch: string): (t: { id: string; file?: string }) => boolean;
  /**
   * A run of one test file runs its unit's other test files too (Go: the whole package): a file of
   * `files` whose run runs that unit without `file`, so a new test file gets a baseline of the tests
   * it did not write (SWT-bench judges a patch by its own tests). Undefined: a file runs alone.
   */
  unitPeer?(file: string, files: readonly string[]): string | undefined;
  /** Registries its installs reach through the egress proxy (also in the default allowlist). */
  registries: readonly string[];
  coverage: CoverageSupport;
  /**
   * A new test file a model wrote, made to build as it meant, where a slip of the language is plain
   * from the file alone (Go: a test declaring the package it imports by its own module path).
   * `readFile` reads the repository at base (undefined: no such file). Undefined: leave it as written.
   */
  tidyNewTest?(file: { path: string; content: string }, readFile: (path: string) => string | undefined): string | undefined;
  /**
   * Failure text that means the test itself is broken: it calls what does not exist or does not
   * load (Python's `No module named`, Go's `undefined: X`). A reproduction failing only so is refused.
   */
  ownErrorText?: RegExp;
}
