import type { RawAnswer } from '../generation/answers.js';
import type { ChangeCoverage } from '../coverage/measure.js';
import { judgedTests, reproduces } from '../harness/classify.js';
import { verdictReasons } from '../harness/render.js';
import type { TestTransition, Verdict } from '../results/types.js';
import { noTime, PHASES, type PhaseTimes } from './phases.js';

/** A test's transition as results.jsonl keeps it: failure messages trimmed to an excerpt. */
export type ResultTest = Pick<TestTransition, 'id' | 'base' | 'head' | 'transition' | 'flaky' | 'preexisting' | 'notJudged' | 'runs' | 'orderDependent' | 'fileLevel'> & {
  baseFailure?: string;
  headFailure?: string;
};

/** A failure message trimmed for results.jsonl and the report. */
const EXCERPT_CHARS = 800;

function excerpt(message: string | undefined): string | undefined {
  if (!message) return undefined;
  return message.length > EXCERPT_CHARS ? `${message.slice(0, EXCERPT_CHARS)}…` : message;
}

/** A test's row: what decides its part in the verdict (flaky, pre-existing, not judged) kept with it. */
export function resultTest(t: TestTransition): ResultTest {
  const out: ResultTest = { id: t.id, base: t.base, head: t.head, transition: t.transition, flaky: t.flaky };
  if (t.preexisting) out.preexisting = true;
  if (t.notJudged) out.notJudged = t.notJudged;
  if (t.flaky && t.runs) out.runs = t.runs;
  if (t.orderDependent) out.orderDependent = t.orderDependent;
  if (t.fileLevel) out.fileLevel = true;
  const base = t.base === 'fail' ? excerpt(t.baseFailure?.message) : undefined;
  const head = t.head === 'fail' ? excerpt(t.headFailure?.message) : undefined;
  if (base) out.baseFailure = base;
  if (head) out.headFailure = head;
  return out;
}

/**
 * What an eval row keeps of a validation's verdict: S, the fix filter, every test with what decides
 * its part, and the reasons in words, so that the row explains its verdict as `swt validate` does.
 */
export function verdictRow(v: Verdict): Pick<InstanceResult, 'success' | 'likelyCorrect' | 'tests' | 'noTests' | 'lostReproductions' | 'why'> {
  return {
    success: v.success,
    likelyCorrect: v.likelyCorrect,
    tests: v.tests.map(resultTest),
    ...(v.noTests ? { noTests: v.noTests } : {}),
    ...(v.lostReproductions?.length ? { lostReproductions: [...v.lostReproductions] } : {}),
    why: verdictReasons(v),
  };
}

/** ΔC of one instance as results.jsonl keeps it (the line lists included, for the report). */
export type InstanceCoverage = Pick<ChangeCoverage, 'counter' | 'dC' | 'referenceDC' | 'lines' | 'covered' | 'executableBy' | 'executable' | 'coveredLines' | 'runs' | 'reused' | 'durationMs'>;

/** How a strategy's tests for one instance came about: its status, why, and what it spent. */
export interface GenerationRecord {
  strategy: string;
  status: string;
  reason: string;
  /** The model that wrote it, when one did. */
  model?: string;
  usage?: { promptTokens: number; completionTokens: number; costUsd: number; steps?: number; wallMs: number };
  /** Every raw answer the model gave, so a person can see why an attempt failed. */
  answers?: RawAnswer[];
  /** The stand-in fix's verdict on the chosen test, when it was checked (flips, fails-on-fix, no-fix). */
  fixCheck?: string;
  /** Samples sharing the chosen test's failure reason, when a vote chose it. */
  vote?: { agree: number; samples: number };
}

/** One row of results.jsonl. */
export interface InstanceResult {
  instance_id: string;
  repo?: string;
  /** model_name_or_path of the prediction, when it had one. */
  model?: string;
  /** The predicted tests applied (W). */
  applied: boolean;
  success: boolean;
  likelyCorrect: boolean;
  tests: ResultTest[];
  /** Set when the instance could not be evaluated (unresolvable repo, missing commit, failed install…). */
  error?: string;
  /** Why validation yielded no test at all (each side's exit and the end of its runner's output). */
  noTests?: string;
  /** Baseline F→P tests the test patch took away (not S whatever the rows say; see Verdict). */
  lostReproductions?: string[];
  /** S and the fix filter in words, from the same rule and rows as `swt validate` says them. */
  why?: { success: string; likelyCorrect: string };
  /** What applying the predicted tests and the validation said (the install's notes among them). */
  warnings?: string[];
  testPatch?: string;
  /** Generation evidence when predictions were generated. */
  reproduction?: GenerationRecord;
  /** Change coverage, when measured (--coverage); coverageError when it could not be. */
  coverage?: InstanceCoverage;
  coverageError?: string;
  phases?: PhaseTimes;
  /** The environment image the instance used, and whether this run built it. */
  environment?: { image: string; built: boolean };
  durationMs: number;
}

export interface EvalReport {
  instances: number;
  errors: number;
  /** Percentages over all instances, 0–100, one decimal (paper Table 2). */
  W: number;
  S: number;
  F2X: number;
  F2P: number;
  P2P: number;
  /**
   * ΔC in % (paper Table 3): the mean of the instances' ΔC over those with executable changed
   * lines, over those with S and over those without; null when coverage was not measured.
   */
  dC: number | null;
  dC_S: number | null;
  dC_notS: number | null;
  /** Instances that count for dC. */
  dC_instances: number;
  /** Time per phase, summed over instances. */
  phases: PhaseTimes;
  /** Environment images this run built, and instances that used one that already existed. */
  images: { built: number; reused: number };
  /** Flaky tests (outcome changed between runs on one side; kept out of S), and the instances that had one. */
  flaky: { tests: number; instances: number };
}

const pct = (n: number, d: number): number => (d === 0 ? 0 : Math.round((1000 * n) / d) / 10);

function meanPct(values: number[]): number | null {
  if (values.length === 0) return null;
  return Math.round((1000 * values.reduce((a, b) => a + b, 0)) / values.length) / 10;
}

/** SWT-bench's summary metrics (§3.1, §3.3): each a share of all instances, errors counting as misses. */
export function summarize(results: readonly InstanceResult[]): EvalReport {
  const n = results.length;
  const ok = results.filter((r) => !r.error);
  const count = (pred: (r: InstanceResult) => boolean) => ok.filter(pred).length;
  // Pre-existing transitions (the same without the predicted tests) say nothing about the prediction.
  const judged = (r: InstanceResult) => judgedTests(r);
  const counted = ok.filter((r) => r.coverage && r.coverage.dC !== null);
  const dCs = (rows: InstanceResult[]) => rows.map((r) => r.coverage!.dC!);
  const measured = results.some((r) => r.coverage || r.coverageError);
  const phases = noTime();
  for (const r of results) for (const p of PHASES) phases[p] += r.phases?.[p] ?? 0;
  const built = new Set(results.filter((r) => r.environment?.built).map((r) => r.environment!.image)).size;
  const withEnv = results.filter((r) => r.environment).length;
  return {
    instances: n,
    errors: n - ok.length,
    W: pct(count((r) => r.applied), n),
    S: pct(count((r) => r.success), n),
    F2X: pct(count((r) => judged(r).some((t) => t.base === 'fail')), n),
    F2P: pct(count((r) => judged(r).some(reproduces)), n),
    P2P: pct(count((r) => judged(r).some((t) => t.transition === 'P2P')), n),
    dC: measured ? meanPct(dCs(counted)) : null,
    dC_S: measured ? meanPct(dCs(counted.filter((r) => r.success))) : null,
    dC_notS: measured ? meanPct(dCs(counted.filter((r) => !r.success))) : null,
    dC_instances: counted.length,
    phases,
    images: { built, reused: withEnv - built },
    flaky: { tests: ok.reduce((a, r) => a + r.tests.filter((t) => t.flaky).length, 0), instances: count((r) => r.tests.some((t) => t.flaky)) },
  };
}
