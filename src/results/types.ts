/** Results of one test run, normalised across every ecosystem's runners. */

export type Outcome = 'passed' | 'failed' | 'skipped';

/**
 * Why a test failed: the report distinguishes a real assertion from a broken test file.
 * `skipped`: the test was skipped (or xfail/todo) on that side, which counts as not passing (SWT-bench).
 */
export type FailureKind = 'assertion' | 'error' | 'collection' | 'timeout' | 'disk' | 'missing' | 'skipped';

export interface TestResult {
  /** Stable across base and head: `<file>::<suite…>::<name>` (pytest style) or `<file> > <suite> > <name>`. */
  id: string;
  file?: string;
  outcome: Outcome;
  failureKind?: FailureKind;
  /** First lines of the failure message, trimmed. */
  message?: string;
  /** The verdict of a whole test file from its exit status (a runner swt cannot read): `id` is the file. */
  fileLevel?: boolean;
}

/** A test file that could not be collected or loaded at all (syntax error, import error). */
export interface FileError {
  file: string;
  /** `disk`: the run was killed for writing past its disk limit before reporting the file. */
  kind: 'collection' | 'timeout' | 'disk';
  message: string;
}

export interface RunResult {
  tests: TestResult[];
  fileErrors: FileError[];
  timedOut: boolean;
  /** Killed for writing past its disk limit. */
  diskLimit?: boolean;
  exitCode: number | null;
  /** Compiled languages: units whose tests did not build in this run (every test in them failed with the build). */
  buildFailures?: BuildFailure[];
  /** Combined output, trimmed to a bounded tail. */
  output: string;
  durationMs: number;
}

export type Transition = 'F2P' | 'F2F' | 'P2P' | 'P2F';

/** One test compared across base (before the fix) and head (after it). */
export interface TestTransition {
  id: string;
  base: 'pass' | 'fail';
  head: 'pass' | 'fail';
  transition: Transition;
  /** Outcome changed between runs on the same code: never decides S or the fix filter. */
  flaky: boolean;
  /**
   * The same transition shows without the test patch (the repository's own test, or the fix PR's):
   * shown, but not counted for S or the fix filter.
   */
  preexisting?: boolean;
  /**
   * Not judged, with the reason: its unit (a Go package) did not build at base because of another
   * test the patch adds or changes, so its base failure says nothing about the fix. Shown, not
   * counted for S or the fix filter, never F→P.
   */
  notJudged?: string;
  /** Which side was flaky. A flaky base counts as 'pass' (did not reliably reproduce), a flaky head as 'fail'. */
  baseFlaky?: boolean;
  headFlaky?: boolean;
  baseFailure?: { kind: FailureKind; message?: string };
  headFailure?: { kind: FailureKind; message?: string };
  /** Runs that observed this test and how many of them failed, per side (when it was run more than once). */
  runs?: { base: RunCount; head: RunCount };
  /**
   * A failure that went away when the test was rerun without the rest of its file: "fails only after
   * <test>" (the test the run order puts before it) or "fails only with its file". Flaky as well.
   */
  orderDependent?: string;
  /** Seen flaky on this repository before (the store's history): rerun first and labelled. */
  knownFlaky?: boolean;
  /** A whole test file judged by its exit status (no runner report to read): see TestResult.fileLevel. */
  fileLevel?: boolean;
}

export interface RunCount {
  runs: number;
  failed: number;
}

export interface Verdict {
  tests: TestTransition[];
  /** SWT-bench S: at least one F2P and no test failing after the fix. */
  success: boolean;
  /** Fix filter: every test F2P or P2P, at least one F2P, none flaky. */
  likelyCorrect: boolean;
  counts: Record<Transition, number>;
  /** When no test came out at all: why, each side's exit and the end of what its runner printed (harness/noTests.ts). */
  noTests?: string;
  /**
   * Tests F→P without the test patch (the baseline) that the patched runs no longer show F→P: the
   * test patch took a reproduction away, so not S whatever the rows say (classify's relativeTo).
   */
  lostReproductions?: string[];
}

/** How to run a repository's tests: a runner kind and a command template with `{files}`. */
/** A runner kind one of the ecosystem modules defines (`pytest`, `jest`, `go-test`, …; see src/ecosystems). */
export type RunnerKind = string;

export interface RunnerSpec {
  kind: RunnerKind;
  /** The plain command, without reporter options, e.g. `npx mocha --exit {files}`. */
  template: string;
  /** A file-level run (a command no runner recognises): the ecosystem the repository is, when known. */
  ecosystem?: string;
  /** Variables every test run sets: the project's own test environment (its CI workflow's literal `env:` values). */
  env?: Readonly<Record<string, string>>;
  /** Where `env` came from, for the comment and the JSON (`.github/workflows/test.yml, job test, step \`npm test\``). */
  envSource?: string;
  /**
   * A monorepo's packages that run their own test files: a file goes to the deepest package whose
   * `dir` holds it and runs from that directory with that package's runner; files outside every
   * package run with this spec from the root. Test ids stay repository-relative.
   */
  packages?: readonly PackageRunner[];
}

/** One package of a monorepo and the runner its own test files run with. */
export interface PackageRunner {
  /** Repository-relative directory of the package. */
  dir: string;
  runner: RunnerSpec;
}

/** A unit (Go package, crate target, module) whose build failed, so every test in it failed. */
export interface BuildFailure {
  /** The unit as the ecosystem names it (Go: the import path). */
  unit: string;
  /** Repository-relative directory of the unit, so test files can be matched to it. */
  dir: string;
  message: string;
}
