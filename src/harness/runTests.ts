/** Run test files in the sandbox on one repository state and normalise the results. */
import { parsePatch } from 'diff';
import type { Environment, RepoState, ResourceLimits, Sandbox } from '../sandbox/types.js';
import { SwtError } from '../util/errors.js';
import { parseRunReports } from './parsers/index.js';
import { tail } from './parsers/common.js';
import { buildTestCommand, DEFAULT_OUT_DIR, missingTestCommand, type TestSelection } from './runners.js';
import { isTestFile } from './testFiles.js';
import type { RunnerSpec, RunResult } from './types.js';

export const OUTPUT_TAIL_CHARS = 16_000;
export const SANDBOX_ROOT = '/testbed';

export interface RunTestsOptions {
  env: Environment;
  repo: string;
  state: RepoState;
  runner: RunnerSpec;
  /** Repository-relative test files to run. */
  files: string[];
  limits?: Partial<ResourceLimits>;
  /** Run only these tests of their files, each file in its own invocation (confirmation reruns). */
  tests?: TestSelection;
  /** Stops the run when aborted (SwtError('CANCELLED')). */
  signal?: AbortSignal;
}

/**
 * Run `files` with `runner` on `state` and return the normalised result. Throws
 * SwtError('NO_TEST_FILES') for an empty file list and SwtError('TEST_COMMAND_NOT_FOUND')
 * when the run wrote no report because the test command itself does not exist.
 */
export async function runTests(sandbox: Pick<Sandbox, 'run'>, opts: RunTestsOptions): Promise<RunResult> {
  if (opts.files.length === 0) throw new SwtError('NO_TEST_FILES', 'There are no test files to run');
  const command = buildTestCommand(opts.runner, opts.files, DEFAULT_OUT_DIR, opts.tests);
  const outcome = await sandbox.run({ env: opts.env, repo: opts.repo, state: opts.state, command, limits: opts.limits, ...(opts.signal ? { signal: opts.signal } : {}) });
  const parsed = parseRunReports(opts.runner, {
    files: opts.files,
    reports: outcome.files ?? {},
    output: outcome.output ?? '',
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    oomKilled: outcome.oomKilled,
    diskLimit: outcome.diskLimit,
    root: SANDBOX_ROOT,
    ...(opts.tests ? { perFile: true } : {}),
  });
  if (!parsed.reportFound && !outcome.timedOut && !outcome.oomKilled && !outcome.diskLimit) {
    const why = missingTestCommand(outcome);
    if (why) {
      throw new SwtError('TEST_COMMAND_NOT_FOUND', `The test command \`${opts.runner.template}\` could not run: ${why}`, {
        hint: 'install the test runner in the environment (install command) or pass the right test command',
      });
    }
  }
  return {
    tests: parsed.tests,
    fileErrors: parsed.fileErrors,
    timedOut: outcome.timedOut,
    ...(outcome.diskLimit ? { diskLimit: true } : {}),
    exitCode: outcome.exitCode,
    output: tail(outcome.output ?? '', OUTPUT_TAIL_CHARS),
    durationMs: outcome.durationMs,
  };
}

function cleanName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  let n = name.trim();
  if (n.startsWith('"') && n.endsWith('"')) n = JSON.parse(n) as string;
  return n === '/dev/null' ? undefined : n;
}

/**
 * The test files a unified diff adds or modifies (deletions ignored), in patch order: what
 * SWT-bench runs. `isTest` decides which paths are tests (default isTestFile).
 */
export function filesTouchedByPatch(unifiedDiff: string, isTest: (path: string) => boolean = isTestFile): string[] {
  if (!unifiedDiff.trim()) return [];
  let patches;
  try {
    patches = parsePatch(unifiedDiff);
  } catch (e) {
    throw new SwtError('PATCH_MALFORMED', `Cannot parse the patch: ${(e as Error).message}`, { cause: e });
  }
  const out: string[] = [];
  for (const p of patches) {
    if ((p as { isDelete?: boolean }).isDelete) continue;
    let name = cleanName(p.newFileName);
    if (!name) continue; // deleted
    const old = cleanName(p.oldFileName);
    // git diffs carry a/ and b/ prefixes; plain `diff -u` ones do not.
    if ((p as { isGit?: boolean }).isGit || (name.startsWith('b/') && (old === undefined || old.startsWith('a/')))) name = name.replace(/^b\//, '');
    if (isTest(name) && !out.includes(name)) out.push(name);
  }
  return out;
}
