/**
 * Deno's test runner (`deno test`): where a project says it runs it (a package.json script, or
 * deno.json/deno.jsonc's `test` task), the options its own command gives (permissions, config,
 * `--unstable-*`), and its JUnit report (`--junit-path`, the same in Deno 1.46 to 2.9).
 *
 * Ids: Deno's JUnit names a step `test > step > substep`, its classname is the file
 * (`./test/a_test.ts`): a test is `<file> > <test>`, a step `<file> > <test> > <step> > …` (a
 * test with steps is a suite of its steps, and a test of its own: Deno counts both). A file that
 * throws while loading leaves no trace in the XML: its "(uncaught error)" in the output makes the
 * file's error. A type error stops the whole run before any test (no report): one file per
 * invocation, so it stops only its own file. Pure.
 */
import JSON5 from 'json5';
import { excerptForFile, firstLines, normalizeRel, stripAnsi } from '../../results/formats/common.js';
import { parseJUnit } from '../../results/formats/junit.js';
import type { FileError } from '../../results/types.js';
import { installNote } from '../command.js';
import { DENO_CLI } from './packageManagers.js';
import type { OneReport, RepoFacts, ReportContext } from '../types.js';

export const DENO_CONFIGS = ['deno.json', 'deno.jsonc'] as const;

/** `deno test` in a command (not `deno task test`). */
export const DENO_TEST = /(^|[\s/;&|(])deno\s+test(\s|$|;|&|\|)/;

/** The project's deno.json or deno.jsonc (JSONC: comments, trailing commas), or undefined. */
export function denoConfigOf(facts: RepoFacts): Record<string, any> | undefined {
  for (const name of DENO_CONFIGS) {
    const text = facts.manifests?.[name];
    if (text === undefined) continue;
    try {
      const v = JSON5.parse(text);
      return v && typeof v === 'object' ? v : {};
    } catch {
      return {};
    }
  }
  return undefined;
}

/** deno.json's `test` task as a command: a string, or `{ "command": … }` (Deno 2.1+); undefined when none. */
export function denoTestTask(config: Record<string, any> | undefined): string | undefined {
  const task = config?.tasks?.test;
  if (typeof task === 'string') return task;
  if (task && typeof task === 'object' && typeof task.command === 'string') return task.command;
  return undefined;
}

/**
 * Shell that fetches deno.json's `imports` into Deno's cache (in the image's home) at install
 * time (or '' when it has none); tests run offline. Only the npm registry answers: `jsr:` and `https:`
 * imports cannot be had, which the install notes, and the tests that need them fail. With no
 * deno.lock, none is written into the repository. Follows `denoCliInstall()` (which ends in `; `).
 */
export function denoImportsInstall(config: Record<string, any> | undefined, hasLock: boolean): string {
  const imports = config?.imports;
  if (!imports || typeof imports !== 'object' || !Object.keys(imports).length) return '';
  const note = installNote('deno install of the deno.json imports failed (only the npm registry answers: jsr: and https: imports cannot be fetched); tests importing them fail');
  return `env \${SSL_CERT_FILE:+DENO_CERT="$SSL_CERT_FILE"} ${DENO_CLI} install${hasLock ? '' : ' --no-lock'} || ${note}`;
}

/** Options with a value in the next word. */
const TAKES_VALUE = new Set(['-c', '--config', '--import-map', '--location', '--seed', '--lock', '--cert', '--env-file']);
/** Options that are the harness's to choose (reporting, selection, watching) or would change which files run. */
const HARNESS_OWN = /^--(watch|reporter|junit-path|filter|coverage|doc|fail-fast|shuffle|parallel|permit-no-files|ignore|clean|hide-stacktraces|trace-leaks|trace-ops)(=|$)/;
/** A word that goes into the command as it is: no shell syntax. */
const SAFE_WORD = /^[\w@./:=+,-]+$/;

/**
 * The options of the project's own `deno test` (`deno test -A --unstable-kv src/` → `-A
 * --unstable-kv`): its permissions above all, without which a test reading a file or the
 * environment fails where the project's does not. Files, reporters and filters are dropped.
 */
export function denoTestOptions(command: string): string[] {
  const segment = command.split(/&&|\|\||;|\|/).find((s) => DENO_TEST.test(s));
  if (!segment) return [];
  const words = segment.trim().split(/\s+/);
  const start = words.findIndex((w, i) => /(^|\/)deno$/.test(w) && words[i + 1] === 'test');
  const kept: string[] = [];
  for (let i = start + 2; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--') break;
    if (!w.startsWith('-')) continue;
    const value = TAKES_VALUE.has(w) ? words[i + 1] : undefined;
    if (value !== undefined) i++;
    if (HARNESS_OWN.test(w) || !SAFE_WORD.test(w) || (value !== undefined && !SAFE_WORD.test(value))) continue;
    kept.push(...(value !== undefined ? [w, value] : [w]));
  }
  return kept;
}

/** Deno's own test-file globs (`deno test` with no files): `*_test`, `*.test` and `test` modules. */
export const DENO_TEST_GLOBS = ['**/{*_,*.,}test.{ts,tsx,mts,js,mjs,jsx}'];

/** `./test/a_test.ts (uncaught error)` sections of Deno's output: the file's error. */
function uncaught(output: string, file: string): string | undefined {
  const marker = `./${file} (uncaught error)`;
  const lines = output.replace(/\r\n?/g, '\n').split('\n');
  const at = lines.findIndex((l) => l.trim() === marker);
  if (at < 0) return undefined;
  const end = lines.findIndex((l, i) => i > at && (/^\s*$/.test(l) || / FAILURES /.test(l)));
  return firstLines(lines.slice(at + 1, end < 0 ? at + 12 : end).join('\n')) ?? excerptForFile(output, file);
}

/** A test `--filter` left out: `<skipped/>` with no `time` (an ignored test has one). */
const FILTERED_OUT = /<testcase\b(?![^>]*\btime=)[^>]*>\s*<skipped\s*\/>\s*<\/testcase>/g;

/** Deno stopped before any test (a type error, a module not found): no report, its `error:` in the output. */
export function denoStopped(output: string): string | undefined {
  return /^(error: |TS\d+ \[ERROR\])/m.test(stripAnsi(output)) ? output : undefined;
}

/** The error Deno stopped on, from its first `TS… [ERROR]` or `error:` line (hints dropped). */
function stoppedMessage(output: string): string {
  const lines = stripAnsi(output).replace(/\r\n?/g, '\n').split('\n');
  const at = lines.findIndex((l) => /^(error: |TS\d+ \[ERROR\])/.test(l));
  return firstLines(lines.slice(at).filter((l) => !/^\s*(info|hint):/.test(l)).join('\n')) ?? 'deno test stopped before running tests';
}

export function parseDenoJUnit(content: string, ctx: ReportContext): OneReport {
  // No report: the output (see denoStopped) stands for it, the whole file failed before its tests.
  if (!content.trimStart().startsWith('<')) {
    const files = (ctx.file ? [ctx.file] : ctx.files).map(normalizeRel);
    return { tests: [], fileErrors: files.map((file) => ({ file, kind: 'collection', message: stoppedMessage(content) })), complete: true, errors: [] };
  }
  const r = parseJUnit(content.replace(FILTERED_OUT, ''), { ...ctx, flavor: 'deno' });
  const fileErrors: FileError[] = [...r.fileErrors];
  for (const f of (ctx.file ? [ctx.file] : ctx.files).map(normalizeRel)) {
    const message = uncaught(ctx.output, f);
    if (message) fileErrors.push({ file: f, kind: 'collection', message });
  }
  return { tests: r.tests, fileErrors, complete: true, errors: [] };
}
