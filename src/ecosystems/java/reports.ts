/**
 * Maven's and Gradle's test reports as the runners here collect them: every `TEST-*.xml` the run
 * wrote (Surefire's `target/surefire-reports`, Gradle's `build/test-results/test`), each after a
 * `<!-- swt-report <path> -->` line, then the build's output after `<!-- swt-build-output -->`.
 * Pure.
 *
 * - Tests come from the XML (ids `com.example.CalcTest.adds`, as Surefire and Gradle write them).
 * - A module whose sources or tests did not compile wrote no XML: the build output names the
 *   files (javac's `File.java:[l,c] msg` in Maven, `File.java:3: error: msg` in Gradle) and the
 *   project; that is a build failure of the module, and a file error for each requested file in it.
 */
import { parseJUnit } from '../../results/formats/junit.js';
import { firstLines, normalizeRel, resolveFile, stripAnsi } from '../../results/formats/common.js';
import type { FileError, TestResult } from '../../results/types.js';
import type { BuildFailure } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

export const REPORT_MARKER = '<!-- swt-report ';
export const OUTPUT_MARKER = '<!-- swt-build-output -->';

/** The module directory of a repository path: what precedes its `src/` segment. */
export function moduleDirOf(file: string): string {
  const segs = normalizeRel(file).split('/');
  const i = segs.indexOf('src');
  return i <= 0 ? '' : segs.slice(0, i).join('/');
}

interface Sections {
  xml: { path: string; text: string }[];
  output: string;
}

export function splitSections(content: string): Sections {
  const out: Sections = { xml: [], output: '' };
  const parts = content.split(/^(?=<!-- swt-(?:report .*|build-output) -->$)/m);
  for (const part of parts) {
    const nl = part.indexOf('\n');
    const head = nl < 0 ? part : part.slice(0, nl);
    const body = nl < 0 ? '' : part.slice(nl + 1);
    if (head.startsWith(REPORT_MARKER)) out.xml.push({ path: head.slice(REPORT_MARKER.length).replace(/ -->$/, ''), text: body });
    else if (head === OUTPUT_MARKER) out.output += body;
  }
  return out;
}

/** javac errors as Maven (`[ERROR] /p/F.java:[3,54] msg`) and Gradle (`/p/F.java:3: error: msg`) print them. */
const JAVAC_MAVEN = /^\[ERROR\] (\/\S+\.(?:java|kt|groovy)):\[(\d+),(\d+)\] (.*)$/;
const JAVAC_PLAIN = /(\/[^\s:]+\.(?:java|kt|groovy)):(\d+): error: (.*)$/;
const KOTLINC = /^e: (?:file:\/\/)?(\/\S+\.kt):(\d+):(\d+):? (.*)$/;
const MAVEN_COMPILE_FAILED = /^\[ERROR\] Failed to execute goal \S*maven-compiler-plugin\S* \((\S+)\) on project (\S+): Compilation failure/;
/** `> Task :compileTestJava FAILED` (Gradle's plain console), or the summary's `Execution failed for task ':compileTestJava'.` (all versions). */
const GRADLE_COMPILE_FAILED = /^(?:> Task |\* What went wrong:\s*)?(?:Execution failed for task ')?(\S*?):compile(Test)?(Java|Kotlin|Groovy)(?:' *\.| FAILED)$/;
const MAVEN_OTHER_FAILURE = /^\[ERROR\] Failed to execute goal (?!\S*maven-surefire-plugin)(.*)$/;

/** Maven's advice after a failure (`To see the full stack trace…`, `[Help 1] http…`): never the why. */
const MAVEN_BOILERPLATE = /^\[ERROR\] (?:$|To see the full stack trace|Re-run Maven|For more information about|\[Help \d+\]|-> \[Help)/;

/**
 * Why a build stopped, when it did: Maven's `[ERROR]` lines after `BUILD FAILURE`, Gradle's
 * `* What went wrong:` paragraph; undefined for a build that did not fail.
 */
export function buildStopped(output: string): string | undefined {
  const lines = output.split('\n').map((l) => l.trimEnd());
  const maven = lines.findIndex((l) => /^\[INFO\] BUILD FAILURE$/.test(l));
  if (maven >= 0) {
    const errors = lines.slice(maven).filter((l) => l.startsWith('[ERROR] ') && !MAVEN_BOILERPLATE.test(l)).map((l) => l.slice(8).replace(/ -> \[Help \d+\]$/, ''));
    return firstLines(errors.join('\n'), 4, 500);
  }
  const gradle = lines.findIndex((l) => l === '* What went wrong:');
  if (gradle >= 0) {
    const end = lines.findIndex((l, i) => i > gradle && /^\* (Try|Get more help|Exception is):/.test(l));
    return firstLines(lines.slice(gradle + 1, end < 0 ? undefined : end).join('\n').trim(), 4, 500);
  }
  return undefined;
}

function compileErrors(output: string, ctx: ReportContext): { file: string; line: string }[] {
  const found: { file: string; line: string }[] = [];
  for (const raw of output.split('\n')) {
    const l = raw.trimEnd();
    const m = JAVAC_MAVEN.exec(l) ?? JAVAC_PLAIN.exec(l) ?? KOTLINC.exec(l);
    if (!m) continue;
    const file = resolveFile(m[1], ctx);
    const message = m[m.length - 1];
    const where = m.length === 5 ? `${file}:${m[2]}:${m[3]}` : `${file}:${m[2]}`;
    const line = `${where}: ${message}`;
    if (!found.some((f) => f.line === line)) found.push({ file, line });
  }
  return found;
}

export function parseJvmReports(content: string, ctx: ReportContext): OneReport {
  const { xml, output: rawOutput } = splitSections(content);
  const output = stripAnsi(rawOutput).replace(/\r\n?/g, '\n');
  const tests: TestResult[] = [];
  const fileErrors: FileError[] = [];
  const errors: string[] = [];
  for (const x of xml) {
    try {
      const parsed = parseJUnit(x.text, { ...ctx, flavor: 'surefire' });
      tests.push(...parsed.tests);
      fileErrors.push(...parsed.fileErrors);
    } catch (e) {
      errors.push(`unreadable ${x.path}: ${(e as Error).message}`);
    }
  }

  const buildFailures: BuildFailure[] = [];
  const failedUnits = new Map<string, string>();
  for (const l of output.split('\n')) {
    const m = MAVEN_COMPILE_FAILED.exec(l);
    if (m) failedUnits.set(m[2], m[1]);
    const g = GRADLE_COMPILE_FAILED.exec(l.trim());
    if (g) failedUnits.set(g[1] || ':', `compile${g[2] ?? ''}${g[3]}`);
  }
  if (failedUnits.size) {
    const diagnostics = compileErrors(output, ctx);
    const dirs = [...new Set(diagnostics.map((d) => moduleDirOf(d.file)))];
    const units = [...failedUnits.keys()];
    // One failing unit: it is the module the diagnostics point into; several: each diagnosed module directory is one.
    const entries = dirs.length ? dirs.map((dir, i) => ({ dir, unit: units.length === dirs.length ? units[i] : units.join(', ') })) : [{ dir: '', unit: units.join(', ') }];
    for (const { dir, unit } of entries) {
      const message = firstLines(diagnostics.filter((d) => moduleDirOf(d.file) === dir).map((d) => d.line).join('\n')) ?? `compilation of ${unit} failed`;
      buildFailures.push({ unit, dir, message });
      for (const f of ctx.files.map(normalizeRel)) if (moduleDirOf(f) === dir) fileErrors.push({ file: f, kind: 'collection', message });
    }
  } else {
    for (const l of output.split('\n')) {
      const m = MAVEN_OTHER_FAILURE.exec(l);
      if (m) errors.push(firstLines(m[1], 2, 400) ?? m[1]);
    }
    // The build stopped before any test (a plugin it cannot resolve): each requested file without a
    // result says so, with the build's own words; its output went to the report, not the run's.
    const why = buildStopped(output);
    const seen = new Set([...tests.map((t) => t.file), ...fileErrors.map((e) => e.file)]);
    if (why && xml.length === 0) for (const f of ctx.files.map(normalizeRel)) if (!seen.has(f)) fileErrors.push({ file: f, kind: 'collection', message: `the build failed before running tests: ${why}` });
  }
  return { tests, fileErrors, complete: buildFailures.length === 0, errors, ...(buildFailures.length ? { buildFailures } : {}) };
}
