/**
 * Django's own test runner: Django's repository runs its tests with `tests/runtests.py` (SWE-bench:
 * `./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 <labels>`), a Django
 * project with `manage.py test <labels>`; pytest there finds no settings. Labels are dotted modules
 * relative to the script's directory; ids are unittest's as Django prints them at verbosity 2
 * (`test_x (module.Class.test_x)`; before Python 3.11 `test_x (module.Class)`), read from that output,
 * which the command keeps in the report file (the run's own output is capped). Pure.
 */
import { quoteTestFile, fillTemplate, reportPath } from '../command.js';
import { firstLines, failureKindOf, stripAnsi } from '../../results/formats/common.js';
import type { FileError, RunnerSpec, TestResult } from '../../results/types.js';
import type { OneReport, RepoFacts, ReportContext, RunnerDef, TestFileRules } from '../types.js';

/** Django's repository: its runner and the settings module SWE-bench runs it with. */
const RUNTESTS = 'tests/runtests.py';
const RUNTESTS_SETTINGS = 'tests/test_sqlite.py';
/** A project's pytest configuration that sets up Django itself (pytest-django): then pytest is the runner. */
const PYTEST_DJANGO = /DJANGO_SETTINGS_MODULE|pytest[-_]django/;
const PYTEST_CONFIGS = ['pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini'];

/** Files whose text decides whether the project runs its tests through Django's runner. */
export function djangoReads(files: readonly string[]): string[] {
  return ['manage.py', ...PYTEST_CONFIGS].filter((f) => files.includes(f));
}

/** Django's runner for this repository, or undefined (then pytest). */
export function djangoRunner(facts: RepoFacts): RunnerSpec | undefined {
  if (facts.files.includes(RUNTESTS) && facts.files.includes(RUNTESTS_SETTINGS)) {
    return { kind: 'django', template: `python3 ${RUNTESTS} --verbosity 2 --settings=test_sqlite --parallel 1 {files}` };
  }
  const manage = facts.manifests?.['manage.py'];
  if (manage === undefined || !/\bdjango\b/i.test(manage)) return undefined;
  if (PYTEST_CONFIGS.some((f) => PYTEST_DJANGO.test(facts.manifests?.[f] ?? ''))) return undefined;
  return { kind: 'django', template: 'python3 manage.py test --verbosity 2 {files}' };
}

/**
 * Django discovers `test*.py` (`tests.py` included, which pytest's default does not name): a
 * repository run by Django's runner has them as test files.
 */
export function djangoTestFileRules(texts: Readonly<Record<string, string>>): TestFileRules | undefined {
  const source = RUNTESTS in texts ? RUNTESTS : /\bdjango\b/i.test(texts['manage.py'] ?? '') ? 'manage.py' : undefined;
  return source ? { globs: ['test*.py'], excludes: [], regexes: [], sources: [`${source} (Django's test*.py)`] } : undefined;
}

/** The directory of the script the command runs (`tests/` of `tests/runtests.py`): labels are relative to it. */
function scriptDir(template: string): string {
  const m = /(?:^|[\s/])((?:[\w.-]+\/)*)(?:runtests|manage)\.py\b/.exec(template);
  return m?.[1] ?? '';
}

/** A test file's label: its dotted module relative to the script's directory. */
export function djangoLabel(template: string, file: string): string {
  const dir = scriptDir(template);
  const rel = dir && file.startsWith(dir) ? file.slice(dir.length) : file;
  return rel.replace(/\.py$/, '').split('/').join('.');
}

/** `name (dotted.path)` with an optional subtest part: Django's way of naming a test. */
const TEST_LINE = /^\s*([A-Za-z_]\w*) \(([A-Za-z_][\w.]*)\)((?: \([^)]*\))*)(.*)$/;
const STATUS = /^(ok|FAIL|ERROR|skipped(?: .*)?|expected failure|unexpected success)$/;
const SEP_EQ = /^={20,}$/;
const SEP_DASH = /^-{20,}$/;
const BLOCK_HEAD = /^(FAIL|ERROR|UNEXPECTED SUCCESS): ([A-Za-z_]\w*) \(([A-Za-z_][\w.]*)\)/;

const idOf = (name: string, path: string) => `${name} (${path})`;

/** The label that reruns one test of a Django id: `module.Class.test_x` (pre-3.11 ids lack the method). */
export function djangoTestLabel(id: string): string | undefined {
  const m = /^([A-Za-z_]\w*) \(([A-Za-z_][\w.]*)\)$/.exec(id);
  if (!m) return undefined;
  const [, name, path] = m as unknown as [string, string, string];
  if (/^(setUpClass|tearDownClass|setUpModule|tearDownModule)$/.test(name) || path.endsWith(`.${name}`)) return path;
  return `${path}.${name}`;
}

/** The requested file a dotted test path belongs to: the longest dotted suffix of a file that begins it. */
function fileOfPath(path: string, files: readonly string[]): string | undefined {
  let best: { file: string; len: number } | undefined;
  for (const f of files) {
    const parts = f.replace(/\.py$/, '').split('/');
    for (let i = 0; i < parts.length; i++) {
      const dotted = parts.slice(i).join('.');
      if ((path === dotted || path.startsWith(`${dotted}.`)) && (!best || dotted.length > best.len)) best = { file: f, len: dotted.length };
    }
  }
  return best?.file;
}

function outcomeOf(status: string): Pick<TestResult, 'outcome' | 'failureKind' | 'message'> {
  if (status === 'ok') return { outcome: 'passed' };
  if (status.startsWith('skipped')) return { outcome: 'skipped', failureKind: 'skipped', message: status.replace(/^skipped ?/, '').replace(/^'(.*)'$/, '$1') || 'skipped' };
  // unittest counts an expected failure as no failure, like pytest's xfail: not a pass either here.
  if (status === 'expected failure') return { outcome: 'skipped', failureKind: 'skipped', message: 'expected failure' };
  if (status === 'unexpected success') return { outcome: 'failed', failureKind: 'assertion', message: 'unexpected success' };
  return { outcome: 'failed', failureKind: status === 'ERROR' ? 'error' : 'assertion' };
}

/** The failure blocks after the run (`FAIL: name (path)`, a dashed line, the traceback), by id. */
function failureBlocks(lines: readonly string[]): Map<string, { kind: string; text: string }> {
  const out = new Map<string, { kind: string; text: string }>();
  for (let i = 0; i < lines.length; i++) {
    if (!SEP_EQ.test(lines[i]!)) continue;
    const head = BLOCK_HEAD.exec(lines[i + 1] ?? '');
    if (!head) continue;
    let j = i + 2;
    while (j < lines.length && !SEP_DASH.test(lines[j]!)) j++;
    const body: string[] = [];
    for (j++; j < lines.length && !SEP_EQ.test(lines[j]!) && !SEP_DASH.test(lines[j]!); j++) body.push(lines[j]!);
    const id = idOf(head[2]!, head[3]!);
    const prev = out.get(id);
    out.set(id, { kind: prev?.kind === 'ERROR' ? 'ERROR' : head[1]!, text: [prev?.text, body.join('\n').trim()].filter(Boolean).join('\n') });
  }
  return out;
}

/** The verbose lines: each test's status, from `name (path) ... status` and the forms output or a docstring split. */
function statusLines(lines: readonly string[]): Map<string, string | undefined> {
  const status = new Map<string, string | undefined>();
  const wordOf = (rest: string, whole: boolean) => {
    const at = rest.lastIndexOf(' ... ');
    const word = (at >= 0 ? rest.slice(at + 5) : whole ? rest : '').trim();
    return STATUS.test(word) ? word : undefined;
  };
  let pending: string | undefined;
  for (const line of lines) {
    if (SEP_EQ.test(line)) break;
    const m = TEST_LINE.exec(line);
    if (m?.[3]) {
      // A subtest's line (only failing ones are printed) marks its test failed.
      const word = wordOf(m[4]!, false);
      const id = idOf(m[1]!, m[2]!);
      if (word && word !== 'ok' && !word.startsWith('skipped')) status.set(id, worse(status.get(id), word));
      continue;
    }
    if (m) {
      pending = idOf(m[1]!, m[2]!);
      if (!status.has(pending)) status.set(pending, undefined);
    }
    if (!pending) continue;
    // The status ends the test's line, or a docstring's line after it, or a line of its own after what the test printed.
    const word = wordOf(m ? m[4]! : line, !m);
    if (!word) continue;
    status.set(pending, worse(status.get(pending), word));
    pending = undefined;
  }
  return status;
}

function worse(prev: string | undefined, next: string): string {
  return prev === 'ERROR' || prev === 'FAIL' ? prev : next;
}

/** Parse Django's verbosity-2 output (the report file holds it). */
export function parseDjangoOutput(content: string, ctx: ReportContext): OneReport {
  const lines = stripAnsi(content).split(/\r?\n/);
  const blocks = failureBlocks(lines);
  const status = statusLines(lines);
  for (const [id, b] of blocks) if (!status.get(id)) status.set(id, b.kind === 'ERROR' ? 'ERROR' : 'FAIL');
  const tests: TestResult[] = [];
  const fileErrors: FileError[] = [];
  for (const [id, st] of status) {
    if (!st) continue; // started, never finished: the run stopped there
    const [, name, path] = /^(\S+) \((.*)\)$/.exec(id)!;
    const block = blocks.get(id);
    if (path!.startsWith('unittest.loader._FailedTest')) {
      // A label that did not import: the file(s) it names are collection errors.
      const hit = ctx.files.filter((f) => { const l = f.replace(/\.py$/, '').split('/'); return l.includes(name!) || l.join('.').endsWith(`.${name}`); });
      for (const file of hit.length ? hit : ctx.files.length === 1 ? ctx.files : []) fileErrors.push({ file, kind: 'collection', message: firstLines(block?.text) ?? `${name} did not import` });
      continue;
    }
    const file = fileOfPath(path!, ctx.files);
    const o = outcomeOf(st);
    const message = o.outcome === 'failed' && block ? firstLines(block.text) : o.message;
    tests.push({ id, ...(file ? { file } : {}), outcome: o.outcome, ...(o.outcome === 'failed' ? { failureKind: block ? failureKindOf(block.text, st === 'ERROR' ? 'error' : undefined) : o.failureKind! } : o.failureKind ? { failureKind: o.failureKind } : {}), ...(message ? { message } : {}) });
  }
  const complete = lines.some((l) => /^Ran \d+ tests? in /.test(l));
  return { tests, fileErrors, complete, errors: [] };
}

/** Verbosity 2 (one line per test) unless the command asks for it already. */
function verbose(template: string): string[] {
  return /(^|\s)(--verbosity[= ]|-v ?)2(\s|$)/.test(template) ? [] : ['--verbosity', '2'];
}

/** Where the command keeps the runner's exit status while its output goes through tee. */
const STATUS_FILE = '/tmp/swt-django-status';

export const django: RunnerDef = {
  kind: 'django',
  recognise: /(^|[\s/;&|(])(runtests\.py|manage\.py\s+test)(\s|$|;|&|\|)/,
  reportFile: 'django-output.txt',
  exits: true,
  notFound: [/^.*\bpython3?: can't open file .*(runtests|manage)\.py/m, /No module named '?django'?$/m],
  command(spec, files, out, report) {
    const labels = files.map((f) => quoteTestFile(djangoLabel(spec.template, f)));
    const cmd = fillTemplate(spec.template, [...verbose(spec.template), ...labels]);
    // The whole verbose output, however long, goes to the report; the exit status survives the pipe.
    return `{ ${cmd} 2>&1; echo $? > ${STATUS_FILE}; } | tee ${reportPath(out, report)}; exit "$(cat ${STATUS_FILE} 2>/dev/null || echo 1)"`;
  },
  commandForTests(spec, _file, ids, out, report) {
    const labels = ids.map(djangoTestLabel).filter((l): l is string => !!l);
    const cmd = fillTemplate(spec.template, [...verbose(spec.template), ...labels.map(quoteTestFile)]);
    return `{ ${cmd} 2>&1; echo $? > ${STATUS_FILE}; } | tee ${reportPath(out, report)}; exit "$(cat ${STATUS_FILE} 2>/dev/null || echo 1)"`;
  },
  parse: parseDjangoOutput,
};
