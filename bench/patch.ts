/**
 * Patch robustness benchmark (`npm run bench:patch`).
 *
 * Generates a seeded corpus of model-like edits from the real test files of ../shared/examples
 * (see patchCorpus.ts) and applies each case with `git apply` (unified diff), our tolerant unified
 * applier, and our custom-format applier. A case counts as correct when the tool reports success
 * and every resulting file equals the intended one; as wrong when it reports success but a file
 * differs (applied in the wrong place or with the wrong content); as failed otherwise.
 * Also measures applying a custom patch to a 5,000-line file (median of several runs).
 *
 * Options: --seed N, --per-file N (base edits per file; ×6 damage kinds), --runs N (throughput),
 * --failures (print every non-correct case), --json PATH (write all results).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { applyModelPatchToFiles, type DetailedPatchApplication } from '../src/patch/applyModelPatch.js';
import { loadAllLanguages } from '../src/patch/structure.js';
import { DAMAGE_KINDS, EDIT_KINDS, generateCorpus, loadExampleTestFiles, resolveExamplesDir, type CorpusCase, type SourceFile } from './patchCorpus.js';

export const METHODS = ['git apply', 'tolerant unified', 'custom'] as const;
export type Method = (typeof METHODS)[number];
export type Outcome = 'correct' | 'wrong' | 'failed';

export interface CaseResult {
  id: string;
  edit: string;
  damage: string;
  method: Method;
  outcome: Outcome;
  detail: string;
}

/** The diff inside a ```diff fence if there is one (what SWE-bench-style harnesses feed git apply). */
export function extractFenced(text: string): string {
  const m = /```(?:diff|patch)?[^\n]*\n([\s\S]*?)(?:\n```|$)/.exec(text.replace(/\r\n/g, '\n').includes('```') ? text : '');
  if (!m) return text;
  const body = m[1];
  return text.includes('\r\n') ? body.replace(/\n/g, '\r\n') + '\r\n' : body.endsWith('\n') ? body : body + '\n';
}

function compare(c: CorpusCase, result: Map<string, string | null>): { outcome: Outcome; detail: string } {
  for (const [p, want] of Object.entries(c.intended)) {
    const got = result.has(p) ? result.get(p) : c.originals[p];
    if (got !== want) return { outcome: 'wrong', detail: `${p} differs from the intended file` };
  }
  for (const [p, got] of result) {
    if (!(p in c.intended) && got !== (c.originals[p] ?? null)) return { outcome: 'wrong', detail: `changed ${p}, which the edit does not touch` };
  }
  return { outcome: 'correct', detail: '' };
}

export function runGitApply(c: CorpusCase): { outcome: Outcome; detail: string } {
  const dir = mkdtempSync(join(tmpdir(), 'swt-bench-gitapply-'));
  try {
    for (const [p, content] of Object.entries(c.originals)) {
      if (content === null) continue;
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), content);
    }
    try {
      execFileSync('git', ['apply', '-'], { cwd: dir, input: extractFenced(c.unified), stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dir) } });
    } catch (e) {
      const err = (e as { stderr?: Buffer }).stderr?.toString().trim().split('\n')[0] ?? String(e);
      return { outcome: 'failed', detail: err };
    }
    const result = new Map<string, string | null>();
    for (const p of Object.keys(c.intended)) result.set(p, existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : null);
    return compare(c, result);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runOurs(c: CorpusCase, text: string): Promise<{ outcome: Outcome; detail: string; app: DetailedPatchApplication }> {
  const app = await applyModelPatchToFiles(text, (p) => (p in c.originals ? c.originals[p] : null));
  if (!app.applied) return { outcome: 'failed', detail: app.errors.join(' | '), app };
  const result = new Map<string, string | null>();
  for (const ch of app.changes) result.set(ch.path, ch.after);
  const r = compare(c, result);
  return { ...r, detail: r.detail + (app.warnings.length ? ` [warnings: ${app.warnings.join(' | ')}]` : ''), app };
}

export async function runCorpus(cases: CorpusCase[], onStep?: () => void): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  for (const c of cases) {
    const g = runGitApply(c);
    out.push({ id: c.id, edit: c.edit, damage: c.damage, method: 'git apply', ...g });
    const u = await runOurs(c, c.unified);
    out.push({ id: c.id, edit: c.edit, damage: c.damage, method: 'tolerant unified', outcome: u.outcome, detail: u.detail });
    const k = await runOurs(c, c.custom);
    out.push({ id: c.id, edit: c.edit, damage: c.damage, method: 'custom', outcome: k.outcome, detail: k.detail });
    onStep?.();
  }
  return out;
}

interface Tally {
  n: number;
  correct: number;
  wrong: number;
  failed: number;
}

export function tally(results: CaseResult[], filter: (r: CaseResult) => boolean): Tally {
  const t: Tally = { n: 0, correct: 0, wrong: 0, failed: 0 };
  for (const r of results) {
    if (!filter(r)) continue;
    t.n++;
    t[r.outcome]++;
  }
  return t;
}

const pct = (a: number, n: number) => (n === 0 ? '   -  ' : `${((100 * a) / n).toFixed(1).padStart(5)}%`);

export function formatTable(results: CaseResult[]): string {
  const lines: string[] = [];
  const rowsBy = (label: string, keys: readonly string[], field: 'damage' | 'edit') => {
    lines.push('');
    lines.push(`${label.padEnd(20)} ${METHODS.map((m) => m.padStart(30)).join('')}`);
    lines.push(`${''.padEnd(20)} ${METHODS.map(() => 'correct / failed / wrong'.padStart(30)).join('')}`);
    for (const k of keys) {
      const cells = METHODS.map((m) => {
        const t = tally(results, (r) => r.method === m && r[field] === k);
        return `${pct(t.correct, t.n)} / ${pct(t.failed, t.n)} / ${String(t.wrong).padStart(3)}`.padStart(30);
      });
      const n = tally(results, (r) => r.method === 'custom' && r[field] === k).n;
      lines.push(`${`${k} (${n})`.padEnd(20)} ${cells.join('')}`);
    }
  };
  rowsBy('by damage', DAMAGE_KINDS, 'damage');
  rowsBy('by edit', EDIT_KINDS, 'edit');
  lines.push('');
  const cells = METHODS.map((m) => {
    const t = tally(results, (r) => r.method === m);
    return `${pct(t.correct, t.n)} / ${pct(t.failed, t.n)} / ${String(t.wrong).padStart(3)}`.padStart(30);
  });
  const n = tally(results, (r) => r.method === 'custom').n;
  lines.push(`${`overall (${n})`.padEnd(20)} ${cells.join('')}`);
  return lines.join('\n');
}

/** A synthetic file of exactly `target` lines: copies of a real test file, topped up with small tests. */
export function bigFile(src: SourceFile, target: number): string {
  const lines = src.content.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  const py = src.path.endsWith('.py');
  for (let k = 0; out.length + lines.length + 1 <= target; k++) {
    // Rename definitions so the copies stay distinct.
    for (const l of lines) out.push(py ? l.replace(/^(\s*def\s+\w+)\(/, `$1_c${k}(`) : l.replace(/\b(it|describe)\((['"])/, `$1($2c${k} `));
    out.push('');
  }
  for (let n = 0; out.length < target; n++) {
    const t = py ? ['', `def test_fill_${n}():`, `    assert ${n} == ${n}`] : ['', `it('fill ${n}', () => {`, `  expect(${n}).toBe(${n})`, '})'];
    out.push(...t.slice(0, target - out.length));
  }
  return out.join('\n') + '\n';
}

export async function throughput(src: SourceFile, runs: number): Promise<{ lines: number; medianMs: number; allMs: number[] }> {
  const content = bigFile(src, 5000);
  const lines = content.split('\n').length - 1;
  const py = src.path.endsWith('.py');
  // Rewrite a unit near the middle and insert one at a line, in one patch.
  const all = content.split('\n');
  const mid = Math.floor(all.length / 2);
  let defAt = -1;
  for (let i = mid; i < all.length; i++) {
    if (py ? /^def test_\w+\(/.test(all[i]) : /^\s*it\((['"])/.test(all[i])) {
      defAt = i;
      break;
    }
  }
  let endAt = defAt + 1;
  const baseIndent = all[defAt].length - all[defAt].trimStart().length;
  while (endAt < all.length && (all[endAt].trim() === '' || all[endAt].length - all[endAt].trimStart().length > baseIndent)) endAt++;
  if (!py) endAt++; // the closing line of it(...)
  const unit = all.slice(defAt, endAt).filter((l, i, a) => i < a.length - 1 || l.trim() !== '');
  const rewritten = [...unit.slice(0, -1), unit[unit.length - 1], ''].join('\n').trimEnd();
  const patch = ['diff', src.path, 'rewrite', String(defAt + 1), rewritten.replace(/(\d+)/, (d) => String(Number(d) + 1)), 'end diff', 'diff', src.path, 'insert', 'EOF', py ? 'def test_throughput():\n    assert 1 + 1 == 2' : "it('throughput', () => {\n  expect(1 + 1).toBe(2)\n})", 'end diff', ''].join('\n');
  const read = (p: string) => (p === src.path ? content : null);
  const warm = await applyModelPatchToFiles(patch, read);
  if (!warm.applied) throw new Error(`throughput patch did not apply: ${warm.errors.join('; ')}`);
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await applyModelPatchToFiles(patch, read);
    ms.push(performance.now() - t0);
    if (!r.applied) throw new Error('throughput patch stopped applying');
  }
  const sorted = ms.slice().sort((a, b) => a - b);
  return { lines, medianMs: sorted[Math.floor(sorted.length / 2)], allMs: ms };
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const seed = Number(arg('--seed') ?? 20240611);
  const per = Number(arg('--per-file') ?? 25);
  const runs = Number(arg('--runs') ?? 15);
  let examples: string;
  try {
    examples = resolveExamplesDir();
  } catch (e) {
    process.stderr.write(`bench:patch: ${(e as Error).message}\n`);
    process.exit(2);
  }
  await loadAllLanguages();
  const files = loadExampleTestFiles(examples);
  const cases = await generateCorpus(files, { seed, editsPerFile: per });
  process.stderr.write(`bench:patch: ${cases.length} cases from ${files.map((f) => `${f.repo}:${f.path}`).join(', ')} (seed ${seed})\n`);
  const bar = new cliProgress.SingleBar({ stream: process.stderr, format: 'applying [{bar}] {value}/{total} cases', hideCursor: true }, cliProgress.Presets.shades_classic);
  bar.start(cases.length, 0);
  const results = await runCorpus(cases, () => bar.increment());
  bar.stop();

  const out: string[] = [];
  out.push(`Patch robustness benchmark: ${cases.length} cases (seed ${seed}; ${files.length} real test files; each case as a unified diff and as custom blocks)`);
  out.push('cell = applied correctly % / failed % / wrong applications (reported success, result differs from the intended file)');
  out.push(formatTable(results));
  out.push('');
  for (const m of METHODS) {
    const t = tally(results, (r) => r.method === m);
    out.push(`${m.padEnd(18)} applied correctly ${pct(t.correct, t.n)}   failed ${pct(t.failed, t.n)}   wrong applications ${t.wrong}`);
  }
  const tp: string[] = [];
  for (const f of files.filter((x) => /\.(py|ts|js)$/.test(x.path)).slice(0, 4)) {
    const r = await throughput(f, runs);
    tp.push(`  ${f.repo}:${f.path} grown to ${r.lines} lines: median ${r.medianMs.toFixed(1)} ms over ${runs} runs (min ${Math.min(...r.allMs).toFixed(1)}, max ${Math.max(...r.allMs).toFixed(1)})`);
  }
  out.push('');
  out.push('Throughput: custom patch (rewrite + insert) applied to a ~5,000-line file, end to end (parse, locate, apply, canonical diff):');
  out.push(...tp);
  process.stdout.write(out.join('\n') + '\n');

  if (process.argv.includes('--failures')) {
    process.stdout.write('\nNon-correct cases:\n');
    for (const r of results) if (r.outcome !== 'correct') process.stdout.write(`  [${r.method}] ${r.outcome} ${r.id}: ${r.detail.slice(0, 400)}\n`);
  }
  const jsonPath = arg('--json');
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify({ seed, cases: cases.length, results }, null, 1));
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  main().catch((e) => {
    process.stderr.write(`bench:patch failed: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
}
