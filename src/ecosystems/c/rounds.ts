/**
 * CTest's and Meson's confirmation rounds inside the first run (RunnerDef.roundsInProcess). Once the run's
 * build and tests are done, in the same exec, each round runs CTest again with no build, on the
 * tests whose declarations (`TEST(Suite, Name) { … }`, `TEST_CASE("name") { … }`) hold a line the
 * patch adds: CTest's `-R` for the tests it knows by those names (discovered ones), GTEST_FILTER
 * for those inside a binary it runs whole, as a rerun selects them (runners.ts ctestRerun). CTest
 * starts each test as a new process, as a rerun does: a round costs the tests and one CTest start,
 * not a build and a round trip to the container. Meson's rounds run `meson test` again under
 * GTEST_FILTER (runners.ts mesonCommand): it has no `-R` of GoogleTest's names. Tests are chosen
 * by lines only, as Go's are.
 * Pure.
 */
import { shellQuote } from '../../util/shell.js';
import { roundReport } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';

/** Environment the rounds read (runners.ts ctestCommand): GTEST_FILTER's patterns and CTest's -R, for the chosen tests. */
export const ROUNDS_FILTER = 'SWT_C_FILTER';
export const ROUNDS_REGEX = 'SWT_C_REGEX';

/**
 * awk over the files that prints, for the declarations whose lines (from the declaration to the
 * closing brace at the start of a line, or to the next declaration) hold one of `L`'s `file:line`
 * keys, either GTEST_FILTER's patterns (`K=f`: `Suite.Name`, value-parameterized and typed alike,
 * joined by `:`) or CTest's -R (`K=r`: the same GoogleTest names, and each test case's exact name,
 * joined by `|`). Portable awk (mawk): no gensub, no intervals.
 */
const CHOOSE = [
  'BEGIN { n = split(L, a, "\\n"); for (i = 1; i <= n; i++) w[a[i]] = 1 }',
  'function flush() { if (t != "" && h) s[t] = 1; t = ""; h = 0 }',
  'function esc(x,  r, i, c) { r = ""; for (i = 1; i <= length(x); i++) { c = substr(x, i, 1); if (index("[]\\\\.^$*+?(){}|", c)) r = r "\\\\" c; else r = r c } return r }',
  'FNR == 1 { flush() }',
  '/^[ \\t]*(TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P|GTEST_TEST)[ \\t]*\\([ \\t]*[A-Za-z0-9_]+[ \\t]*,[ \\t]*[A-Za-z0-9_]+[ \\t]*\\)/ ' +
    '{ flush(); x = $0; sub(/^[^(]*\\(/, "", x); sub(/\\).*/, "", x); gsub(/[ \\t]/, "", x); t = "g " x }',
  '/^[ \\t]*(TEST_CASE|SCENARIO|TEST_CASE_METHOD|TEST_CASE_FIXTURE|TEMPLATE_TEST_CASE|SCENARIO_METHOD)[ \\t]*\\([^"]*"/ ' +
    '{ flush(); x = $0; sub(/^[^"]*"/, "", x); sub(/".*/, "", x); t = "c " ($0 ~ /^[ \\t]*SCENARIO/ ? "Scenario: " : "") x }',
  't != "" && ((FILENAME ":" FNR) in w) { h = 1 }',
  't != "" && /^}/ { flush() }',
  'END { flush(); o = ""; for (k in s) { x = substr(k, 3); split(x, p, ",");',
  '  if (K == "f") { if (k ~ /^g /) o = o (o == "" ? "" : ":") p[1] "." p[2] ":*/" p[1] "." p[2] "/*:" p[1] "/*." p[2] }',
  '  else o = o (o == "" ? "" : "|") (k ~ /^g / ? "(^|[^A-Za-z0-9_])" p[1] "(/[0-9]+)?\\\\." p[2] "($|[^A-Za-z0-9_])" : "^" esc(x) "$") }',
  '  print o }',
].join('\n');

/** C and C++ test sources whose names go into awk's keys as they are. */
const PLAIN = /^[\w./+-]+\.(c|cc|cpp|cxx|c\+\+)$/i;

/** The awk command printing the chosen tests of `plan` as `kind` (f: GTEST_FILTER, r: CTest's -R); undefined when no file of it can be read so. */
export function cChooseCommand(plan: RoundPlan, kind: 'f' | 'r'): string | undefined {
  const keys = Object.entries(plan.lines)
    .filter(([file]) => PLAIN.test(file) && !file.startsWith('-'))
    .flatMap(([file, lines]) => lines.map((n) => `${file}:${n}`));
  const files = [...new Set(keys.map((k) => k.slice(0, k.lastIndexOf(':'))))];
  return files.length ? `awk -v K=${kind} -v L=${shellQuote(keys.join('\\n'))} ${shellQuote(CHOOSE)} ${files.map(shellQuote).join(' ')}` : undefined;
}

/** What `prepare` does: chooses the tests (in the repository's root, before the run) into the environment the rounds read; none chosen, no rounds. */
export function cRoundsPrepare(plan: RoundPlan): string {
  const filter = cChooseCommand(plan, 'f');
  const regex = cChooseCommand(plan, 'r');
  if (!filter || !regex) return ` ${ROUNDS_REGEX}=;`;
  return ` ${ROUNDS_FILTER}="$(${filter} 2>/dev/null)"; ${ROUNDS_REGEX}="$(${regex} 2>/dev/null)";`;
}

/** CTest's and Meson's rounds: each test program a new process, as in a rerun (freshProcess). */
export const cRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  prepare: (_out, plan) => cRoundsPrepare(plan),
  report: roundReport,
  // Nothing of the rounds runs before the run: they cannot keep it from running.
  hookFailed: /(?!)/,
  freshProcess: true,
};
