/**
 * cargo test's confirmation rounds inside the first run (RunnerDef.roundsInProcess). cargo runs
 * each test binary through a runner of the harness's (`CARGO_TARGET_<host>_RUNNER`, cargo's own
 * hook for cross runners): the runner runs the binary as cargo asked, then, its exit status
 * kept, runs the same binary again per round with the chosen tests by their full names
 * (`--exact`), a new process each, with the environment and working directory cargo gave it. No
 * rebuild, no second cargo (its fingerprint check costs more than the tests of a small crate).
 * After cargo, each round's output is put behind the run's own `Running …` line of its binary,
 * so the round's report reads as cargo's.
 *
 * The chosen tests: the functions whose lines hold a line the patch adds (a line belongs to the
 * `fn` declared last before it; blank lines, comments and attributes to none), among the tests
 * the run's own filters listed (`--list`). A project that names its own runner or environment in
 * `.cargo/config*` (ours would replace its runner; its `[env]` is cargo's), or a template that is
 * more than one `cargo test`, gets no rounds: its tests rerun through cargo. Pure.
 */
import { shellQuote } from '../../util/shell.js';
import { roundReport, writeLines } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';

/** The shell functions the command calls before cargo (choosing, naming the runner) and after it (the rounds' reports). */
export const RUST_ROUNDS_ON = 'swt_rust_rounds_on';
export const RUST_ROUNDS_FUNCTION = 'swt_rust_rounds';

/** Where the runner and the rounds' raw output live: executable (the sandbox's /tmp is noexec), outside the out dir. */
const TMP = '"$HOME/.cache/swt-rust-rounds"';
const RUNNER = `${TMP}/runner`;

/**
 * The functions of the files awk reads whose lines hold one of `L`'s `file:line` keys, by name
 * (space-separated): libtest names end with them.
 */
const CHOOSE =
  'BEGIN { n = split(L, a, "\\n"); for (i = 1; i <= n; i++) w[a[i]] = 1 } ' +
  'FNR == 1 { f = "" } ' +
  '/^[ \\t]*(pub(\\([^)]*\\))?[ \\t]+)?((async|const|unsafe)[ \\t]+)*fn[ \\t]+[A-Za-z_][A-Za-z0-9_]*/ { f = $0; sub(/^[ \\t]*(pub(\\([^)]*\\))?[ \\t]+)?((async|const|unsafe)[ \\t]+)*fn[ \\t]+/, "", f); sub(/[^A-Za-z0-9_].*/, "", f) } ' +
  '((FILENAME ":" FNR) in w) && f != "" && !/^[ \\t]*(\\/\\/.*|#!?\\[.*\\])?[ \\t]*$/ { s[f] = 1 } ' +
  'END { o = ""; for (k in s) o = o (o == "" ? "" : " ") k; print o }';

const PLAIN = /^[\w./-]+\.rs$/;

/** The awk command that prints the chosen functions of `plan` (undefined when no file of it can be read so), run from the repository root. */
export function rustChooseCommand(plan: RoundPlan): string | undefined {
  const keys = Object.entries(plan.lines)
    .filter(([file]) => PLAIN.test(file))
    .flatMap(([file, lines]) => lines.map((n) => `${file}:${n}`));
  const files = [...new Set(keys.map((k) => k.slice(0, k.lastIndexOf(':'))))];
  return files.length ? `awk -v L=${shellQuote(keys.join('\\n'))} ${shellQuote(CHOOSE)} ${files.map(shellQuote).join(' ')}` : undefined;
}

/**
 * Whether a template lets the rounds run its binaries: one `cargo test` (build flags allowed).
 * Its libtest arguments (` -- --test-threads=1`) reach the run, not the rounds, which run the
 * chosen tests by name as a rerun through cargo does.
 */
export function rustTemplateHasRounds(template: string): boolean {
  return /^\s*cargo\s+(\+\S+\s+)?test\b/.test(template) && !/[;&|`$<>]/.test(template);
}

/**
 * The runner cargo runs each test binary with: the binary as asked, then per round the chosen
 * tests it lists under the run's own filters, exactly, into `<round>/<binary name>.out`.
 */
function runnerLines(rounds: number): string[] {
  const pick = `awk -v S="$SWT_RUST_SEL" 'BEGIN { n = split(S, a, " "); for (i = 1; i <= n; i++) w[a[i]] = 1 } /: test$/ { t = $0; sub(/: test$/, "", t); k = t; sub(/.*::/, "", k); if (k in w) print t }'`;
  return [
    '#!/bin/sh',
    '"$@"',
    'rc=$?',
    'set -f',
    `names=$("$@" --list 2>/dev/null | ${pick})`,
    'b=$(basename "$1")',
    ...Array.from({ length: rounds }, (_, i) => `[ -z "$names" ] || "$1" $names --exact > ${TMP}/r${i + 1}/"$b".out 2>&1`),
    'exit $rc',
  ];
}

/**
 * What `prepare` defines: the function the command calls first, which chooses the functions
 * (repository root), writes the runner and names it to cargo for the host, unless the project's
 * cargo config names a runner or an environment; and the function that, after cargo, writes each round's report from the
 * run's report: its package lines, and each binary's `Running` line followed by that round's
 * output of it (a binary the round did not run is left out).
 */
export function rustRoundsPrepare(out: string, report: string, plan: RoundPlan): string {
  const choose = rustChooseCommand(plan);
  if (!choose) return ` ${RUST_ROUNDS_ON}() { :; }; ${RUST_ROUNDS_FUNCTION}() { :; };`;
  const rounds = Array.from({ length: plan.rounds }, (_, i) => i + 1);
  const own = `grep -qsE '^[[:space:]]*(runner[[:space:]]*=|\\[env\\])' .cargo/config.toml .cargo/config`;
  // The host's triple, as cargo's variable spells it. Asking rustc (`-vV`) loads its driver, 60–110 ms
  // here before cargo starts: the machine's name gives the usual hosts (either libc) at once.
  const host =
    `case "$(uname -m)" in x86_64) swt_h='X86_64_UNKNOWN_LINUX_GNU X86_64_UNKNOWN_LINUX_MUSL';; aarch64) swt_h='AARCH64_UNKNOWN_LINUX_GNU AARCH64_UNKNOWN_LINUX_MUSL';; ` +
    `*) swt_h=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p' | tr 'a-z.-' 'A-Z__');; esac`;
  const enable =
    `rm -rf ${TMP}; mkdir -p ${rounds.map((r) => `${TMP}/r${r}`).join(' ')} && ${writeLines(RUNNER, runnerLines(plan.rounds))} && chmod +x ${RUNNER} && ` +
    `export SWT_RUST_SEL="$(${choose} 2>/dev/null)" && [ -n "$SWT_RUST_SEL" ] && ! ${own} && ${host} && [ -n "$swt_h" ] && for h in $swt_h; do export "CARGO_TARGET_\${h}_RUNNER=$HOME/.cache/swt-rust-rounds/runner"; done`;
  // Each round's report: the run's lines that mark packages, and its Running lines with their output, by the binary's name.
  const assemble = (r: number) =>
    `while IFS= read -r l; do case "$l" in ${shellQuote('swt-cargo-package:')}*) printf '%s\\n' "$l";; *Running*'('*')') b=\${l##*/}; b=\${b%')'}; [ -f ${TMP}/r${r}/"$b".out ] && { printf '%s\\n' "$l"; cat ${TMP}/r${r}/"$b".out; };; esac; done < ${shellQuote(`${out}/${report}`)} > ${shellQuote(`${out}/${roundReport(report, r)}`)};`;
  return ` ${RUST_ROUNDS_ON}() { { ${enable}; } 2>/dev/null; }; ${RUST_ROUNDS_FUNCTION}() { [ -n "$SWT_RUST_SEL" ] || return 0; ls ${TMP}/r1/*.out >/dev/null 2>&1 || return 0; ${rounds.map(assemble).join(' ')} };`;
}

/** cargo test's rounds: a new process of the run's own test binary per round (freshProcess). */
export const cargoRounds: NonNullable<RunnerDef['roundsInProcess']> = {
  prepare: (out, plan) => rustRoundsPrepare(out, 'cargo-test.txt', plan),
  report: (name, round) => roundReport(name, round),
  // Nothing of the rounds runs before the binaries: they cannot keep cargo from running.
  hookFailed: /(?!)/,
  freshProcess: true,
};
