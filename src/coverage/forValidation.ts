/** ΔC beside a validation: the states validate already settled, measured again with line counting. */
import { filesTouchedByPatch } from '../harness/runTests.js';
import type { RunnerSpec } from '../results/types.js';
import type { Environment, RepoState, ResourceLimits, Sandbox } from '../sandbox/types.js';
import { errorLine, isSwtError } from '../util/errors.js';
import { changeCoverage, codePatchBetween, runsWithPatch, type ChangeCoverage } from './measure.js';

/** How a caller (eval, `swt validate --coverage`, the App) asks for ΔC. */
export interface CoverageRequest {
  /** Golden tests T*; they decide which changed lines are executable. Without them every changed code line is. */
  referenceTestPatch?: string;
  /** Reuse counts of identical earlier runs (default true). */
  cache?: boolean;
}

export interface ValidationStates {
  repo: string;
  env: Environment;
  runner: RunnerSpec;
  base: string;
  /** The fixed code without tests, and the fix as a patch when it was given as one. */
  fixedCode: RepoState;
  fixPatch?: string;
  /** The predicted tests on both sides, and the test files they run. */
  withTests: { base: RepoState; head: RepoState; files: string[] };
  /** The touched test files that exist without the tests, and the head state without them. */
  existing: { base: string[]; head: string[] };
  headBaseline: RepoState;
  limits?: Partial<ResourceLimits>;
}

/** Errors that end the whole job rather than only its coverage figure. */
const FATAL = new Set(['DOCKER_UNREACHABLE', 'INTERRUPTED']);

function failed(e: unknown): { coverageError: string } {
  if (isSwtError(e) && FATAL.has(e.code)) throw e;
  return { coverageError: errorLine(e) };
}

/** ΔC of a validation's tests; a failure becomes `coverageError`, never a failed validation. */
export async function coverageOfValidation(
  sandbox: Sandbox,
  s: ValidationStates,
  request: CoverageRequest,
): Promise<{ coverage?: ChangeCoverage; coverageError?: string }> {
  try {
    const baseCode: RepoState = { rev: s.base, patches: [] };
    const fixPatch = s.fixPatch ?? (await codePatchBetween(s.repo, s.base, s.fixedCode.rev));
    const ref = request.referenceTestPatch?.trim() ? request.referenceTestPatch : undefined;
    const coverage = await changeCoverage(sandbox, {
      repo: s.repo,
      env: s.env,
      runner: s.runner,
      fixPatch,
      base: baseCode,
      fixed: s.fixedCode,
      original: { base: { state: baseCode, files: s.existing.base }, head: { state: s.headBaseline, files: s.existing.head } },
      withTests: { base: { state: s.withTests.base, files: s.withTests.files }, head: { state: s.withTests.head, files: s.withTests.files } },
      reference: ref ? runsWithPatch(ref, filesTouchedByPatch(ref), baseCode, s.fixedCode) : null,
      limits: s.limits,
      cache: request.cache,
    });
    return { coverage };
  } catch (e) {
    return failed(e);
  }
}

/**
 * When no predicted tests applied: only the golden tests run, to tell whether the instance has
 * executable changed lines (then its ΔC is 0) or is left out of ΔC.
 */
export async function coverageOfReference(
  sandbox: Sandbox,
  s: { repo: string; env: Environment; runner: RunnerSpec; base: string; fixPatch: string; referenceTestPatch: string; limits?: Partial<ResourceLimits>; cache?: boolean },
): Promise<{ coverage?: ChangeCoverage; coverageError?: string }> {
  const baseCode: RepoState = { rev: s.base, patches: [] };
  const fixedCode: RepoState = { rev: s.base, patches: [s.fixPatch], patchNames: ['fix patch'] };
  const none = { base: { state: baseCode, files: [] }, head: { state: fixedCode, files: [] } };
  try {
    const coverage = await changeCoverage(sandbox, {
      repo: s.repo,
      env: s.env,
      runner: s.runner,
      fixPatch: s.fixPatch,
      base: baseCode,
      fixed: fixedCode,
      original: none,
      withTests: null,
      reference: runsWithPatch(s.referenceTestPatch, filesTouchedByPatch(s.referenceTestPatch), baseCode, fixedCode),
      limits: s.limits,
      cache: s.cache,
    });
    return { coverage };
  } catch (e) {
    return failed(e);
  }
}
