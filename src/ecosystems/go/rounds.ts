/**
 * go test's confirmation rounds inside the first run (RunnerDef.roundsInProcess). go test runs
 * the test binary through a wrapper (`-exec`); once the binary's run is done, the wrapper runs
 * it again per round, a new process, on the top-level tests whose lines hold a line the patch
 * adds; after go test, their output becomes go test's JSON (test2json). A round pays a process
 * start (milliseconds) and no build, in the same exec: no second round trip to the container.
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
import { roundReport, writeLines } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';

/** The shell function the command calls after the run. */
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

/** The wrapper go test runs the test binary with (`go test -exec`), in GOTMPDIR (the sandbox's /tmp is noexec). */
export const GO_ROUNDS_EXEC = '"$GOTMPDIR/swt-rounds-exec"';
const raw = (r: number) => `"$GOTMPDIR/swt-round${r}.out"`;
/** Where the wrapper writes the path of the toolchain's own test2json, when it finds exactly one. */
const TOOL = '"$GOTMPDIR/swt-test2json"';

/**
 * go test (1.19 on) starts the wrapper with its toolchain's bin first on PATH (golang/go#51473):
 * that toolchain's test2json is `$GOROOT/pkg/tool/<os_arch>/test2json`. Called straight, it costs
 * ~1 ms where `go tool test2json` starts a go command (~10 ms a round). Anything else (an older
 * go, more than one tool directory): `go tool test2json`, as before.
 */
const FIND_TOOL = [
  'swt_n=0; for t in "${PATH%%:*}"/../pkg/tool/*/test2json; do [ -x "$t" ] && swt_n=$((swt_n + 1)) && swt_t=$t; done',
  `[ "$swt_n" -eq 1 ] && [ -x "\${PATH%%:*}/go" ] && printf '%s\\n' "$swt_t" > ${TOOL}`,
];

/**
 * Defines `swt_test2json`: the toolchain's own test2json the rounds' wrapper recorded in this
 * container (FIND_TOOL), else `go tool test2json`. The rounds and a kept binary's reruns use it.
 */
export const GO_TEST2JSON =
  `swt_tool=; [ -f ${TOOL} ] && read -r swt_tool < ${TOOL}; swt_test2json() { if [ -x "$swt_tool" ]; then "$swt_tool" "$@"; else go tool test2json "$@"; fi; };`;

/**
 * What `prepare` does: chooses the tests (in the repository's root, before the run), writes the
 * wrapper go test runs the binary with, and defines the function the command calls after the
 * run. The wrapper links the binary where the kept container's reruns find it (`binary`), runs
 * it as go test asked, then, its exit status kept, runs it again per round on the chosen tests
 * into raw test2json text, and records the toolchain's test2json (FIND_TOOL); the function turns
 * that into go test's JSON with the package the run's report names, the rounds' side by side.
 * No `-o`: the binary is not copied, and go test links it as it would anyway.
 */
export function goRoundsPrepare(out: string, report: string, binary: string, plan: RoundPlan, tmp: string): string {
  const choose = goChooseCommand(plan);
  if (!choose) return ` ${GO_ROUNDS_FUNCTION}() { :; };`;
  const at = (name: string) => shellQuote(`${out}/${name}`);
  const rounds = Array.from({ length: plan.rounds }, (_, i) => i + 1);
  const wrapper = [
    '#!/bin/sh',
    `ln -f "$1" ${binary} 2>/dev/null || cp "$1" ${binary} 2>/dev/null`,
    '"$@"',
    'rc=$?',
    ...rounds.map((r) => `[ -z "$SWT_GO_SEL" ] || "$1" -test.count=1 -test.timeout=10m0s -test.v=test2json -test.run="^($SWT_GO_SEL)$" > ${raw(r)} 2>&1`),
    ...FIND_TOOL,
    'exit $rc',
  ];
  // The package's import path for test2json, from the run's own report.
  const pkg = `sed -n 's/.*"Package":"\\([^"]*\\)".*/\\1/p' ${at(report)} | head -n 1`;
  // Side by side: each is a process start, and nothing else waits. `wait` names them: the
  // project's command may have left jobs of its own in this shell.
  const convert = (r: number) => `{ [ -f ${raw(r)} ] && swt_test2json -t -p "$pkg" < ${raw(r)} > ${at(roundReport(report, r))}; } & swt_w="$swt_w $!";`;
  return (
    ` ${tmp} export SWT_GO_SEL="$(${choose} 2>/dev/null)"; rm -f ${rounds.map(raw).join(' ')} ${binary} ${TOOL}; ${writeLines(GO_ROUNDS_EXEC, wrapper)} && chmod +x ${GO_ROUNDS_EXEC};` +
    ` ${GO_ROUNDS_FUNCTION}() { [ -n "$SWT_GO_SEL" ] || return 0; pkg=$(${pkg}); [ -n "$pkg" ] || return 0; ${GO_TEST2JSON} swt_w=; ${rounds.map(convert).join(' ')} wait $swt_w; };`
  );
}

/** go test's rounds: a new process of the run's own binary per round (freshProcess). */
export function goRounds(report: string, binary: string, tmp: string): NonNullable<RunnerDef['roundsInProcess']> {
  return {
    prepare: (out, plan) => goRoundsPrepare(out, report, binary, plan, tmp),
    report: (name, round) => roundReport(name, round),
    // Nothing of the rounds runs before the run: they cannot keep it from running.
    hookFailed: /(?!)/,
    freshProcess: true,
  };
}
