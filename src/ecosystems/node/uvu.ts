/**
 * uvu: its command and the JSON lines swt's hook writes (see uvuHook.ts), one file per
 * invocation. Pure.
 *
 * uvu's CLI takes a directory and a file-name pattern, not files: each file runs as
 * `uvu <its dir> '^<its name>$'`, the template's own dir and pattern dropped. Its `-r esm` (the
 * `esm` loader of lukeed's packages) no longer hooks anything on Node 22, so it is dropped:
 * Node 22 loads ES module syntax in `.js` files by itself, and the hook resolves the
 * extensionless and directory imports esm allowed.
 */
import { excerptForFile, failureKindOf, firstLines, mergeDuplicates, normalizeRel } from '../../results/formats/common.js';
import { joinJs } from '../../results/formats/junit.js';
import type { FileError, TestResult } from '../../results/types.js';
import { SwtError } from '../../util/errors.js';
import { quoteTestFile, regexEscape } from '../command.js';
import { shellQuote } from '../../util/shell.js';
import type { OneReport, ReportContext } from '../types.js';
import { UVU_ESM_ENV, UVU_HOOK_FILE, UVU_OUT_ENV } from './uvuHook.js';

/** uvu's options that take a value (`-r tsm`, `-i fixtures`, `-C dir`). */
const VALUED = new Set(['-r', '--require', '-i', '--ignore', '-C', '--cwd']);

/** The template's uvu invocation without its dir, pattern, `-C` and `-r esm`, with `{files}` where they were; and whether esm was dropped. */
export function uvuTemplate(template: string): { template: string; droppedEsm: boolean } {
  const words = template.trim().split(/\s+/);
  const at = words.findIndex((w) => /(^|\/)uvu(\.js)?$/.test(w));
  if (at < 0) return { template, droppedEsm: false };
  let end = words.findIndex((w, i) => i > at && /^(&&|\|\||;|\|)$/.test(w));
  if (end < 0) end = words.length;
  const kept: string[] = [];
  let droppedEsm = false;
  for (let i = at + 1; i < end; i++) {
    const w = words[i]!;
    if (w === '{files}') continue;
    const eq = /^(-[\w-]+)=(.*)$/.exec(w);
    const flag = eq ? eq[1]! : w;
    if (VALUED.has(flag)) {
      const value = eq ? eq[2]! : words[++i] ?? '';
      if (/^-(C|-cwd)$/.test(flag)) continue;
      if (/^-(r|-require)$/.test(flag) && /^esm(\/.*)?$/.test(value)) {
        droppedEsm = true;
        continue;
      }
      kept.push(eq ? w : `${w} ${value}`);
    } else if (w.startsWith('-')) kept.push(w);
    // a positional: the template's own dir or pattern
  }
  const rebuilt = [...words.slice(0, at + 1), ...kept, '{files}', ...words.slice(end)];
  return { template: rebuilt.join(' '), droppedEsm };
}

/** A harness out dir goes unquoted into NODE_OPTIONS (which reads no single quotes). */
function plainDir(out: string): string {
  if (!/^[\w/.-]+$/.test(out)) throw new SwtError('UNSAFE_PATH', `uvu's hook needs an out dir without spaces or quotes: ${JSON.stringify(out)}`);
  return out;
}

/** The shell command that runs one test file under uvu with swt's hook preloaded. */
export function uvuCommand(template: string, file: string, out: string, report: string): string {
  const { template: tpl, droppedEsm } = uvuTemplate(template);
  const slash = file.lastIndexOf('/');
  const dir = slash < 0 ? '.' : file.slice(0, slash);
  const target = `${quoteTestFile(dir)} ${shellQuote(`^${regexEscape(file.slice(slash + 1))}$`)}`;
  const hook = `${plainDir(out)}/${UVU_HOOK_FILE}`;
  const env = [
    `export ${UVU_OUT_ENV}=${shellQuote(`${out}/${report}`)};`,
    ...(droppedEsm ? [`export ${UVU_ESM_ENV}=1; echo 'swt: dropped -r esm (the esm loader does not run on Node 22; Node loads the ES modules itself)';`] : []),
    `export NODE_OPTIONS="\${NODE_OPTIONS:+$NODE_OPTIONS }--require ${hook}";`,
  ];
  const cmd = tpl.includes('{files}') ? tpl.split('{files}').join(target) : `${tpl} ${target}`;
  return `${env.join(' ')} ${cmd}`;
}

interface Rec {
  e: string;
  suite?: string;
  name?: string;
  status?: string;
  type?: string;
  message?: string;
  kind?: string;
  code?: number;
  exec?: string;
}

function records(text: string): Rec[] {
  const out: Rec[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // a line cut short by a killed run
    }
  }
  return out;
}

function testOf(file: string, r: Rec): TestResult {
  const t: TestResult = { id: joinJs(file, [r.suite ?? '', r.name ?? '']), file, outcome: r.status === 'pass' ? 'passed' : r.status === 'skip' ? 'skipped' : 'failed' };
  if (t.outcome === 'failed') {
    t.failureKind = r.type === 'Assertion' || /AssertionError/.test(r.type ?? '') ? 'assertion' : failureKindOf(r.message ?? '', r.type);
    t.message = firstLines(`${r.type && r.type !== 'Error' ? `${r.type}: ` : ''}${r.message ?? 'failed'}`);
  } else if (t.outcome === 'skipped') t.message = r.message ?? 'skipped';
  return t;
}

/** Failures outside any test: a before/after hook, a suite that never finished, a file that did not load. */
function problemsOf(recs: Rec[], output: string | undefined, file: string): string[] {
  const problems = recs.filter((r) => r.e === 'hook').map((r) => `${r.kind ?? 'hook'} hook of ${r.suite ? `suite "${r.suite}"` : 'the file'}: ${r.message ?? ''}`);
  const open = new Map<string, number>();
  for (const r of recs) {
    if (r.e === 'queued') open.set(r.suite ?? '', (open.get(r.suite ?? '') ?? 0) + 1);
    if (r.e === 'done') open.set(r.suite ?? '', (open.get(r.suite ?? '') ?? 0) - 1);
  }
  const exit = recs.find((r) => r.e === 'exit');
  if (exit && exit.exec === 'none' && exit.code !== 0) problems.push(`the file did not load or uvu stopped before running it (exit ${exit.code})\n${output ? excerptForFile(output, file) : ''}`);
  else if (exit) {
    for (const [suite, n] of open) if (n > 0) problems.push(`suite ${suite ? `"${suite}"` : '(default)'} stopped before its after hooks finished`);
  }
  return problems;
}

export function parseUvuJsonl(text: string, ctx: ReportContext): OneReport {
  const file = normalizeRel(ctx.file ?? ctx.files[0] ?? '');
  const recs = records(text);
  const tests = recs.filter((r) => r.e === 'test').map((r) => testOf(file, r));
  const problems = problemsOf(recs, ctx.output, file);
  const fileErrors: FileError[] = problems.length ? [{ file, kind: 'collection', message: firstLines(problems.join('\n')) ?? 'test file failed' }] : [];
  return { tests: mergeDuplicates(tests), fileErrors, complete: recs.some((r) => r.e === 'exit'), errors: [] };
}
