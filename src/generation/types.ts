import type { RunResult } from '../results/types.js';
import type { SandboxSession } from '../sandbox/types.js';
import type { PatchApplication } from '../patch/types.js';

export type { PatchApplication };

/** An issue to reproduce. */
export interface IssueInput {
  title: string;
  body: string;
}

/**
 * Everything a strategy may touch, provided by the pipeline: a host checkout of the repository at
 * base (read only, for retrieval), and sandboxed execution on that revision.
 */
export interface Workbench {
  /** Host directory holding the repository at base. Never modified. */
  repoDir: string;
  /** Turns model output into a canonical diff against base, without touching repoDir. */
  applyPatch(text: string): Promise<PatchApplication>;
  /** Runs the test files touched by a canonical test patch (or the `files` given) on base, in the sandbox; with `fixPatch`, on base plus that source change (a stand-in fix). */
  runTests(testPatch: string, files?: string[], opts?: { fixPatch?: string }): Promise<RunResult>;
  /** A long-lived sandbox on base, for an agent's tools. */
  openSession(): Promise<SandboxSession>;
  /** The runner command template with `{files}`, e.g. `python3 -m pytest {files}`. */
  testCommand: string;
}

export type ReproductionStatus = 'reproduced' | 'not-reproduced';

export interface Reproduction {
  status: ReproductionStatus;
  strategy: string;
  /** Canonical unified diff adding the test(s). Empty when nothing usable was produced. */
  testPatch: string;
  /** Excerpt of the failure on base that shows the issue. */
  failureExcerpt?: string;
  /** Why it is not a reproduction, or what was matched. */
  reason: string;
  usage: { promptTokens: number; completionTokens: number; costUsd: number; steps: number; wallMs: number };
  /** What the status rests on: the runs on base, the judgement, the strategy's own notes. */
  evidence?: ReproductionEvidence;
  /** Set when the run stopped because a budget dimension ran out; what was produced is kept. */
  budgetExhausted?: 'tokens' | 'usd' | 'steps' | 'wallMs';
  /** The model the strategies could use (none for `snippet` alone); `local` when it ran in-process. */
  model?: { name: string; local: boolean };
  /** For `ensemble`: each strategy's own result, in the order they ran. */
  attempts?: Reproduction[];
}

/**
 * The test run with a fix the model wrote (a stand-in for the real one): `flips` — the reproducing
 * tests pass with it; `fails-on-fix` — they ran and still fail; `no-fix` — no usable fix (none
 * written, it did not apply, or the tests could not run with it: it says nothing about the test).
 */
export interface FixCheckEvidence {
  verdict: 'flips' | 'fails-on-fix' | 'no-fix';
  reason: string;
  /** Source files the stand-in fix changed. */
  fixFiles: string[];
  /** The end of the failure on the fix, when the tests still fail there. */
  failureExcerpt?: string;
}

/** A failing test on base, as the verification saw it. */
export interface FailureEvidence {
  id: string;
  kind: 'assertion' | 'issue-exception' | 'issue-symptom' | 'nothing-checked' | 'own-error' | 'other-exception' | 'timeout' | 'collection';
  /** Exception type named in the failure, when one could be read. */
  exception?: string;
  message?: string;
}

export interface ReproductionEvidence {
  /** Did the patch apply (and produce a non-empty test patch)? */
  applied: boolean;
  applyErrors?: string[];
  applyWarnings?: string[];
  /** Test files the patch adds or changes. */
  testFiles: string[];
  /** Each run on base (normally two: the second rules out flakiness). */
  runs: Array<{ exitCode: number | null; timedOut: boolean; durationMs: number; failures: FailureEvidence[]; passed: number }>;
  /** Tests counted as reproducing the issue. */
  reproducingTests: string[];
  /** Where the reproducing failure leaves the repository's source, from the run on base (verify.ts). */
  failureSite?: import('./verify.js').FailureSite;
  /** Free-form notes of the strategy: the snippet used, LIBRO clusters, agent steps, etc. */
  notes: string[];
  /** Every answer the model gave, as written (clipped), in order; set on the result `reproduce` returns. */
  answers?: import('./answers.js').RawAnswer[];
  /** Set when the test was chosen by a vote on the failure reason: samples sharing its reason, of those drawn. */
  vote?: { agree: number; samples: number };
  /** Set when the model's stand-in fix was tried (fixCheck.ts): does the test pass with it? */
  fixCheck?: FixCheckEvidence;
  /** Strategy-specific data (e.g. LIBRO's candidates, the agent's transcript summary). */
  details?: Record<string, unknown>;
}
