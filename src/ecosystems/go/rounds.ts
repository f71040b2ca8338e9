/**
 * go test's confirmation rounds inside the first run (RunnerDef.roundsInProcess). The run writes
 * its test binary (`go test -o`); once its report is written, each round runs that binary again,
 * a new process, on the top-level tests whose lines hold a line the patch adds, and turns its
 * output into go test's JSON with test2json. A round pays a process start (milliseconds) and no
 * build, and the same exec: no second round trip to the container.
 *
 * Why a new process per round and not `-count=N`: `-count` repeats the tests in one process, so
 * package-level state (a map a test fills, a sync.Once, an init's random draw) carries from one
 * repetition to the next, which a rerun would not see; a process per round starts from what `go
 * test` would give. What a round still shares with the run is what a rerun in the same container
 * shares: the files the tests write, the binary (the same build). Tests are chosen by lines only:
 * a row added to a table at package level names no test function (its test runs in the reruns).
 * Pure.
 */
import { shellQuote } from '../../util/shell.js';
import { roundReport } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';

/** The shell function the command calls after the run (`swt_go_rounds <package dir>`). */
export const GO_ROUNDS_FUNCTION = 'swt_go_rounds';

/**
 * The top-level test functions (Test, Example, Fuzz) of the files awk reads whose lines, from
 * `func` to the closing brace at the start of a line, hold one of `L`'s `file:line` keys (one a
 * line), joined by `|` for -test.run.
 */
const CHOOSE =
  'BEGIN { n = split(L, a, "\\n"); for (i = 1; i <= n; i++) w[a[i]] = 1 } ' +
  'FNR == 1 { t = "" } ' +
  '/^func (Test|Example|Fuzz)[A-Za-z0-9_]*\\(/ { t = $0; sub(/^func /, "", t); sub(/\\(.*/, "", t); h = 0 } ' +
  't != "" && ((FILENAME ":" FNR) in w) { h = 1 } ' +
  't != "" && (/^}/ || /^func .*}[ \\t]*$/) { if (h) s[t] = 1; t = "" } ' +
  'END { o = ""; for (k in s) o = o (o == "" ? "" : "|") k; print o }';

/** Files whose names go into awk's keys as they are (a Go file's path seldom holds more). */
const PLAIN = /^[\w./-]+_test\.go$/;

/** The awk command that prints the chosen tests of `plan` (undefined when no file of it can be read so), run from the repository root. */
export function goChooseCommand(plan: RoundPlan): string | undefined {
  const keys = Object.entries(plan.lines)
    .filter(([file]) => PLAIN.test(file))
    .flatMap(([file, lines]) => lines.map((n) => `${file}:${n}`));
  const files = [...new Set(keys.map((k) => k.slice(0, k.lastIndexOf(':'))))];
  return files.length ? `awk -v L=${shellQuote(keys.join('\\n'))} ${shellQuote(CHOOSE)} ${files.map(shellQuote).join(' ')}` : undefined;
}

/**
 * The function `prepare` defines: with the run's binary (`binary`, a shell word) and its report
 * in place, the chosen tests `plan.rounds` times, each round's JSON beside the run's report.
 */
export function goRoundsFunction(out: string, report: string, binary: string, plan: RoundPlan): string {
  const choose = goChooseCommand(plan);
  if (!choose) return ` ${GO_ROUNDS_FUNCTION}() { :; };`;
  const at = (name: string) => shellQuote(`${out}/${name}`);
  // The package's import path for test2json, from the run's own report.
  const pkg = `sed -n 's/.*"Package":"\\([^"]*\\)".*/\\1/p' ${at(report)} | head -n 1`;
  const rounds = Array.from({ length: plan.rounds }, (_, i) => i + 1);
  const round = (r: number) => `( cd "$1" && ${binary} -test.count=1 -test.timeout=10m0s -test.v=test2json -test.run="^($sel)$" 2>&1 ) | go tool test2json -t -p "$pkg" > ${at(roundReport(report, r))};`;
  return (
    ` ${GO_ROUNDS_FUNCTION}() { [ -x ${binary} ] || return 0; ` +
    `sel=$(${choose} 2>/dev/null); [ -n "$sel" ] || return 0; ` +
    `pkg=$(${pkg}); [ -n "$pkg" ] || return 0; ${rounds.map(round).join(' ')} };`
  );
}

/** go test's rounds: a new process of the run's own binary per round (freshProcess). */
export function goRounds(report: string, binary: string): NonNullable<RunnerDef['roundsInProcess']> {
  return {
    prepare: (out, plan) => goRoundsFunction(out, report, binary, plan),
    report: (name, round) => roundReport(name, round),
    // Nothing of the rounds runs before the run: they cannot keep it from running.
    hookFailed: /(?!)/,
    freshProcess: true,
  };
}
