/**
 * Confirmation rounds held inside the first run's own process (RoundPlan, for runners that can):
 * what to ask for, which moving tests they confirm, and how they join the reruns. Pure.
 */
import type { RoundPlan } from '../ecosystems/types.js';
import type { RunResult } from '../results/types.js';
import { patchFiles } from '../patch/fileNames.js';

/**
 * The plan for a first run with the tests of `testPatch`: the lines it adds to each of `files`
 * (new-file numbers), `rounds` times. Undefined when it adds no line to them (a patch that only
 * deletes): nothing to ask for.
 */
export function roundPlan(testPatch: string, files: readonly string[], rounds: number): RoundPlan | undefined {
  if (rounds <= 0 || !testPatch.trim()) return undefined;
  const wanted = new Set(files);
  const lines: Record<string, number[]> = {};
  const addedText: string[] = [];
  for (const p of patchFiles(testPatch)) {
    const name = p.newPath;
    if (!name || !wanted.has(name)) continue;
    const added: number[] = [];
    for (const h of p.hunks) {
      let n = h.newStart;
      for (const l of h.lines) {
        if (l.startsWith('+')) {
          added.push(n++);
          addedText.push(l);
        } else if (l.startsWith(' ')) n++;
      }
    }
    if (added.length) lines[name] = [...(lines[name] ?? []), ...added];
  }
  if (!Object.keys(lines).length) return undefined;
  // The titles of tests the patch declares, when it declares any: its other literals (a request's
  // path, an error's name) would choose every test that mentions them. Else every literal (rows of a
  // data-driven test, whose cases take their names from them).
  const titles = titlesOf(addedText);
  const names = titles.length ? titles : literalsOf(addedText);
  return { rounds, lines, ...(names.length ? { names } : {}) };
}

/** Literals shorter than this name too many tests to be worth asking for. */
const MIN_NAME = 3;
const MAX_NAMES = 50;

/** A call that declares a test or a suite (mocha, jest, vitest, jasmine, ava, node --test, tap), with its title. */
const DECLARES = /(?:^|[^\w.$])(?:it|test|specify|describe|context|suite)(?:\.(?:only|skip|concurrent|serial|todo|failing))?\s*\(\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`$\\]*)`)/g;

/** The titles of the tests and suites added lines declare (`it('title', …)`), as literalsOf gives them. */
export function titlesOf(added: readonly string[]): string[] {
  const found = new Set<string>();
  for (const line of added) for (const m of line.matchAll(DECLARES)) {
    const text = (m[1] ?? m[2] ?? m[3] ?? '').trim();
    if (text.length >= MIN_NAME && /[\p{L}\p{N}]/u.test(text)) found.add(text);
  }
  return [...found].sort((a, b) => b.length - a.length).slice(0, MAX_NAMES);
}

/** The quoted strings of added lines (each kind of quote, one line each), distinct, with a letter or digit, longest first. */
export function literalsOf(added: readonly string[]): string[] {
  const found = new Set<string>();
  for (const line of added) {
    for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`([^`$\\]*)`/g)) {
      const text = (m[1] ?? m[2] ?? m[3] ?? '').trim();
      if (text.length >= MIN_NAME && /[\p{L}\p{N}]/u.test(text)) found.add(text);
    }
  }
  return [...found].sort((a, b) => b.length - a.length).slice(0, MAX_NAMES);
}

/**
 * Which of `ids` (tests that moved) a side's in-process rounds confirm: those every round
 * reported, except at head a test that failed there in the first run: a neighbour may have
 * poisoned it, so it reruns alone in a process of its own (rerunTargets). Rounds that do not
 * start from a fresh process (`freshProcess` false) confirm only a test whose every round agreed
 * with the first run: one that differs reruns in new processes, which decide.
 */
export function confirmedInProcess(ids: readonly string[], rounds: readonly RunResult[] | undefined, first: readonly RunResult[], side: 'base' | 'head', freshProcess = true): string[] {
  if (!rounds?.length) return [];
  const failedFirst = new Set(first.flatMap((r) => r.tests.filter((t) => t.outcome !== 'passed').map((t) => t.id)));
  const outcomes = (runs: readonly RunResult[], id: string) => runs.flatMap((r) => r.tests.filter((t) => t.id === id).map((t) => t.outcome));
  const agrees = (id: string) => new Set([...outcomes(first, id), ...outcomes(rounds, id)]).size === 1;
  return ids.filter((id) => rounds.every((r) => r.tests.some((t) => t.id === id)) && !(side === 'head' && failedFirst.has(id)) && (freshProcess || agrees(id)));
}

/**
 * A side's confirmation runs, round by round: what the in-process rounds reported for `covered`,
 * with what the reruns of the other tests reported in the same round.
 */
export function joinRounds(inProcess: readonly RunResult[] | undefined, covered: readonly string[], reruns: readonly RunResult[], count: number): RunResult[] {
  if (!covered.length || !inProcess?.length) return [...reruns];
  const keep = new Set(covered);
  return Array.from({ length: count }, (_, i) => {
    const own = inProcess[i].tests.filter((t) => keep.has(t.id));
    const rerun = reruns[i];
    return rerun ? { ...rerun, tests: [...own, ...rerun.tests] } : { ...inProcess[i], tests: own };
  });
}
