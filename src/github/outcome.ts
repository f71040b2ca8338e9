import type { ChangeCoverage } from '../coverage/measure.js';
import type { Verdict } from '../results/types.js';

export type CheckConclusion = 'success' | 'neutral' | 'failure';

/** A validation as stored and rendered: the verdict plus where it ran. */
export interface ValidationView extends Verdict {
  base: string;
  head: string | null;
  durationMs: number;
  warnings: string[];
  /** ΔC of the tests over the PR's code change, when the repository asks for it (`coverage: true`). */
  coverage?: Pick<ChangeCoverage, 'dC' | 'referenceDC' | 'covered' | 'lines'>;
  coverageError?: string;
  /** The head changed test machinery: which files, and whose the tests ran with (see ValidationResult.machinery). */
  machinery?: { changed: string[]; used: 'base' | 'head' };
  /** The variables the test runs set and where they came from (the project's CI workflow). */
  testEnvironment?: { env: Record<string, string>; source: string };
}

/** What checking a PR against one linked issue gave. */
export type IssueOutcome =
  | { issue: number; kind: 'validated'; validation: ValidationView; reproduction: { strategy: string; sha: string; testPatch: string } }
  | { issue: number; kind: 'no-reproduction'; reason: string }
  | { issue: number; kind: 'error'; message: string };
