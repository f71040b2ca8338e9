/**
 * The snippet strategy's parts: issue readers (sessions, comments, sections, values), the
 * repository's API, and the tests written for the bundled demo repositories.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseIssueMarkdown } from '../../src/generation/issueText.js';
import { pythonTraceback } from '../../src/generation/issueText.js';
import { repoInfo, repoInfoOf, type RepoInfo } from '../../src/generation/repoFiles.js';
import { readClaim, notABugReport } from '../../src/generation/snippet/claims.js';
import { readComment } from '../../src/generation/snippet/comments.js';
import { planSnippetTest } from '../../src/generation/snippet/index.js';
import { readIssue, roleOf } from '../../src/generation/snippet/markdown.js';
import { jsApi, packageIdentifier } from '../../src/generation/snippet/repoApi.js';
import { pythonApi, resolvePythonNames } from '../../src/generation/snippet/repoApiPython.js';
import { readSession } from '../../src/generation/snippet/sessions.js';
import { literal } from '../../src/generation/snippet/literals.js';
import { loadSnippetSyntax } from '../../src/generation/snippet/parser.js';
import { freeNames, replaceIdentifier, requote } from '../../src/generation/snippet/syntax.js';
import { valueOf } from '../../src/generation/snippet/values.js';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));
const fixtureIssue = (name: string) => parseIssueMarkdown(readFileSync(`${fixture(name)}/issue.md`, 'utf8'));

function memoryRepo(files: Record<string, string>, testCommand: string): RepoInfo {
  return repoInfoOf(Object.keys(files), testCommand, files['package.json'], async (p) => files[p]);
}

beforeAll(() => loadSnippetSyntax());

describe('reading issues', () => {
  it('splits Python sessions (>>>, >>, IPython In/Out) into statements, outputs, errors and output comments', () => {
    const s = readSession('python', '>>>from m import f\n>>> x = [\n...   1]\n>>> f(x)\n[1]  # wrong\nIn [2]: f(2)\nOut[2]: 3\n>>> f(0)\nTraceback (most recent call last):\n  File "<stdin>", line 1, in <module>\nValueError: zero')!;
    expect(s.steps.map((st) => [st.code, st.output, st.comment, st.error?.type])).toEqual([
      ['from m import f', undefined, undefined, undefined],
      ['x = [\n  1]', undefined, undefined, undefined],
      ['f(x)', '[1]', 'wrong', undefined],
      ['f(2)', '3', undefined, undefined],
      ['f(0)', undefined, undefined, 'ValueError'],
    ]);
  });

  it('reads Node REPL sessions and browser-console transcripts', () => {
    const repl = readSession('js', "> v.isEmail('a') // expected\nfalse\n> v.isEmail('b')\nUncaught TypeError: nope")!;
    expect(repl.steps.map((s) => [s.code, s.output, s.comment, s.error?.message])).toEqual([
      ["v.isEmail('a')", 'false', 'expected', undefined],
      ["v.isEmail('b')", undefined, undefined, 'nope'],
    ]);
    const devtools = readSession('js', "var r = /a+/\nundefined\nr.exec('aa')\n(1) ['aa', index: 0, input: 'aa', groups: undefined]")!;
    expect(devtools.kind).toBe('console');
    expect(devtools.steps.map((s) => [s.code, s.output])).toEqual([
      ['var r = /a+/', 'undefined'],
      ["r.exec('aa')", "(1) ['aa', index: 0, input: 'aa', groups: undefined]"],
    ]);
  });

  it('reads result comments: returns/expected pairs in either order, markers, exceptions', () => {
    expect(readComment('js', "returns '512 undefined', expected '0.5 B'", 'none')).toEqual({ wrong: "'512 undefined'", expected: "'0.5 B'" });
    expect(readComment('js', 'false but should be true', 'none')).toEqual({ wrong: 'false', expected: 'true' });
    expect(readComment('js', 'expected { a: 1 } received { a: 2 }', 'none')).toEqual({ expected: '{ a: 1 }', wrong: '{ a: 2 }' });
    expect(readComment('python', 'TypeError: can only concatenate tuple (not "list") to tuple', 'none')).toEqual({ error: { type: 'TypeError', message: 'can only concatenate tuple (not "list") to tuple' } });
    expect(readComment('js', 'odd', 'none')).toEqual({ marker: 'wrong' });
    expect(readComment('python', 'correct one', 'none')).toEqual({ marker: 'correct' });
    expect(readComment('python', 'corpora', 'none')).toEqual({});
  });

  it('gives blocks the role of their template section or the cue before them', () => {
    expect([roleOf('Expected Behaviour'), roleOf('Current Behavior'), roleOf('Steps to reproduce'), roleOf('But I actually get:'), roleOf('I was expecting it to produce:')]).toEqual(['expected', 'current', 'steps', 'current', 'expected']);
    const doc = readIssue('t', '### Actual\n```\n1\n```\nI would expect:\n```\n2\n```\n>>> f(1)\n1');
    expect(doc.blocks.map((b) => [b.role, b.roleFrom, b.origin])).toEqual([
      ['current', 'section', 'fenced'],
      ['expected', 'cue', 'fenced'],
      ['current', 'section', 'prompt-lines'],
    ]);
  });

  it('reads indented code, an indented fence, `>>>` lines in inline code and lines of inline code as blocks', () => {
    const body = [
      'Run this:',
      '',
      '    import m',
      '',
      '    m.f(1)',
      'Then:',
      '  ```py',
      '  x = 1',
      '   y = 2',
      '  ```',
      '`>>> f(1)`',
      '`2`',
      '',
      '`from m import g`',
      '`g(3)`',
      '`just one()`',
      '## Expected',
      'text',
    ].join('\n');
    const doc = readIssue('t', body);
    expect(doc.blocks.map((b) => [b.origin, b.lang, b.code, b.line, b.end, b.after])).toEqual([
      ['indented', '', 'import m\n\nm.f(1)', 2, 5, 'Then:'],
      ['fenced', 'py', 'x = 1\n y = 2', 6, 10, ''],
      ['prompt-lines', 'pycon', '>>> f(1)\n2', 10, 12, ''],
      ['inline-lines', '', 'from m import g\ng(3)', 13, 15, '`just one()`'],
    ]);
    expect(doc.prose.map((p) => p.text)).toEqual(['Run this:', 'Then:', '`just one()`', 'Expected', 'text']);
  });

  it('turns displayed values into literals without evaluating them', () => {
    expect(valueOf('js', "(2) ['foobar', 'r', index: 0, input: 'foobar', groups: undefined]")).toMatchObject({ code: "['foobar', 'r']", arrayWithProps: true, elements: ["'foobar'", "'r'"] });
    expect(valueOf('js', "[Object: null prototype] { a: '1' }")?.code).toBe("{ a: '1' }");
    expect(valueOf('python', 'datetime.datetime(2023, 6, 15, 0, 0)')).toMatchObject({ kind: 'constructor', needs: ['datetime'] });
    expect(valueOf('python', '<MayaDT epoch=550713600.0>')).toBeUndefined();
    expect(valueOf('js', 'crme-brle', true)?.code).toBe('"crme-brle"');
    expect(literal('js', 'process.exit(1)')).toBeUndefined();
    expect(literal('python', "f'{x}'")).toBeUndefined();
  });

  it('finds the names a snippet uses without defining them', () => {
    expect(freeNames('python', 'from a import b\nx = b(c)\nprint(len(x), d.e)')).toEqual(['c', 'd']);
    expect(freeNames('js', "const { a } = require('a');\nconst y = a(b, { c });\nfunction f(p) { return p + q }")).toEqual(['b', 'c', 'q']);
    expect(requote(`f('a', "it's", 'b"c')`, '"')).toBe(`f("a", "it's", 'b"c')`);
  });

  it('tells bindings from uses in every place a name is bound', () => {
    const py = ['def f(p, *rest, k=1, **kw):', '    global g', '    return p + k + h', 'class C: pass', 'if (n := m(1)):', '    pass', 'for i, (j, _) in pairs: pass', 'try:', '    pass', 'except E as err:', '    pass', 'with open(o) as fh: pass', 'lambda a: a + b', 'o.attr(key=v)', 'z += 1'];
    expect(freeNames('python', py.join('\n'))).toEqual(['h', 'm', 'pairs', 'E', 'o', 'b', 'v']);
    const js = ['const g = function named(p) { return named(p, q) };', 'class K {}', 'items.map((x) => x + y);', 'try { t() } catch (e) { e.message }', 'for (const k in obj) k;', 'const [a1, ...rest] = arr;', 'const { m: local, d = dflt } = src;', "import def, { s as alias, plain } from 'mod';", 'import * as ns from "ns";', 'lbl: for (;;) { break lbl; }', 'f({ short });'];
    expect(freeNames('js', js.join('\n'))).toEqual(['q', 'items', 'y', 't', 'obj', 'arr', 'dflt', 'src', 'f', 'short']);
    expect(replaceIdentifier('python', 'x + o.x + f(x=x)', 'x', 'é(1)')).toBe('é(1) + o.x + f(x=é(1))');
    expect(replaceIdentifier('js', 'g({ x }, x)', 'x', '2')).toBe('g({ x: 2 }, 2)');
  });

  it('refuses questions and feature requests before reading code', () => {
    expect(notABugReport('How to parse nested arrays?', '')).toBe('the issue asks a question');
    expect(notABugReport('Option to preserve case', '')).toBe('the issue requests a feature');
    expect(notABugReport('Wrong result', '**Is your feature request related to a problem? Please describe.**')).toBe('the issue requests a feature');
    expect(notABugReport('slugify drops accents', 'It returns `x`')).toBeUndefined();
  });

  it('an assertion in the snippet counts only when the issue says it fails (reporters also assert what they observe)', () => {
    const body = '```python\nfrom m import f\nassert f(1) == 2\nassert f(2) == 4\n```';
    expect(readClaim(readIssue('t', body), 'python')).toEqual({ ok: false, reason: 'the issue shows no call whose result it reports' });
    const c = readClaim(readIssue('t', `The first assertion fails:\n${body}`), 'python');
    expect(c.ok && [c.claim.expr, c.claim.expected?.code, c.claim.also?.map((a) => [a.expr, a.expected.code])]).toEqual(['f(1)', '2', [['f(2)', '4']]]);
  });

  it('reads "Expected: x" / "Actual: y" lines and value-only comments beside a print', () => {
    const c = readClaim(readIssue('Wrong total', '```python\nfrom m import total\nprint(total([1, 2]))  # 4\n```\nExpected: 3\nActual: 4'), 'python');
    expect(c.ok && [c.claim.expr, c.claim.expected?.code, c.claim.wrong?.code]).toEqual(['total([1, 2])', '3', '4']);
    const jest = readClaim(readIssue('t', 'This test fails:\n```js\nexpect(sum(1, 2)).toBe(3)\n```'), 'js');
    expect(jest.ok && [jest.claim.expr, jest.claim.expected?.code]).toEqual(['sum(1, 2)', '3']);
  });

  it('does not guess which of several unmarked results is wrong', () => {
    const c = readClaim(readIssue('t', 'Some are odd:\n```\n>>> f(1)\n2\n>>> f(2)\n3\n```'), 'python');
    expect(c).toEqual({ ok: false, reason: 'the issue shows 2 results and does not say which one is wrong' });
  });

  it('still parses a traceback pasted into the issue (verification reads the same)', () => {
    const tb = pythonTraceback(fixtureIssue('py-durations').body)!;
    expect([tb.type, tb.message]).toEqual(['ValueError', "invalid literal for int() with base 10: '1h30'"]);
  });
});

describe("the repository's API", () => {
  it('Python: modules under src/, names re-exported by a package, submodules reached through attributes, how tests import', async () => {
    const repo = memoryRepo(
      {
        'setup.cfg': '[metadata]\nname = python-dateutil\n',
        'src/dateutil/__init__.py': '',
        'src/dateutil/parser/__init__.py': 'from ._parser import *\n',
        'src/dateutil/parser/_parser.py': 'def parse(s):\n    pass\n\n\ndef _private():\n    pass\n',
        'src/dateutil/tz.py': 'def gettz(name):\n    pass\n',
        'src/dateutil/test/test_tz.py': 'from dateutil.tz import gettz\n',
      },
      'python3 -m pytest {files}',
    );
    const api = await pythonApi(repo);
    expect([...api.modules]).toEqual([['dateutil', 'src/dateutil/__init__.py']]);
    expect(api.testDir).toBe('src/dateutil/test');
    const r = await resolvePythonNames(api, ['dateutil', 'gettz', 'parse', 'datetime', 'nowhere'], 'dateutil.parser.parse(x)');
    expect(r).toEqual({ lines: ['import dateutil.parser', 'from dateutil.tz import gettz', 'from dateutil.parser import parse', 'import datetime'], unresolved: ['nowhere'] });
  });

  it('JavaScript: entry mapped from the built file to its source, exports, and the tests\' binding of the package', async () => {
    const repo = memoryRepo(
      {
        'package.json': '{"name": "path-to-regexp", "main": "dist/index.js"}',
        'src/index.ts': 'export function pathToRegexp() {}\nexport { parse as parseIt } from "./parse";\n',
        'src/index.spec.ts': 'import * as pathToRegexp from "./index";\n',
      },
      'npx jest {files}',
    );
    const api = await jsApi(repo);
    expect([api.entry, [...api.named], api.style.packageSpecifier, api.style.packageBinding]).toEqual(['src/index.ts', ['pathToRegexp', 'parseIt'], './index', { kind: 'namespace', local: 'pathToRegexp' }]);
    expect([api.style.dir, api.style.suffix, api.style.esm, api.style.typescript, api.style.quote]).toEqual(['src', '.spec.ts', true, true, '"']);
    expect(packageIdentifier('@scope/deep-merge')).toBe('deepMerge');
  });

  it('JavaScript: CommonJS members and the existing tests\' style (var, no semicolons, function callbacks)', async () => {
    const repo = memoryRepo(
      {
        'package.json': '{"name": "send"}',
        'index.js': 'module.exports = send\nsend.mime = mime\nfunction send () {}\n',
        'test/send.js': "var assert = require('assert')\nvar send = require('..')\n\ndescribe('send', function () {\n  it('works', function () {\n    assert.ok(send)\n  })\n})\n",
      },
      'npx mocha --exit {files}',
    );
    const api = await jsApi(repo);
    expect([api.commonjs, api.hasDefault, [...api.defaultMembers]]).toEqual([true, true, ['mime']]);
    expect(api.style).toMatchObject({ esm: false, semicolons: false, declare: 'var', arrows: false, assertImport: "var assert = require('assert')", packageSpecifier: '..' });
  });
});

describe('tests written for the bundled demo repositories', () => {
  it('py-durations: the traceback issue whose README states 5400 becomes an equality test in tests/', async () => {
    const info = await repoInfo(`${fixture('py-durations')}/repo`, 'python3 -m pytest -p no:cacheprovider {files}');
    const p = await planSnippetTest(fixtureIssue('py-durations'), info);
    if (!p.ok) throw new Error(p.reason);
    expect(p.test.path).toBe('tests/test_parse_duration_crashes_on_combined_units.py');
    expect(p.test.content).toBe(
      [
        'from durations import parse_duration',
        '',
        '',
        'def test_parse_duration_crashes_on_combined_units_like():',
        '    # From the issue: The README says `parse_duration("1h30m") == 5400`, but it raises instead:',
        '    assert parse_duration("1h30m") == 5400',
        '',
      ].join('\n'),
    );
  });

  it('ts-chunk: the commented snippet becomes a vitest test next to the existing spec', async () => {
    const info = await repoInfo(`${fixture('ts-chunk')}/repo`, 'npx vitest run {files}');
    const p = await planSnippetTest(fixtureIssue('ts-chunk'), info);
    if (!p.ok) throw new Error(p.reason);
    expect(p.test.path).toBe('src/chunk-silently-drops-last-partial-group.spec.ts');
    expect(p.test.content).toBe(
      [
        "import { describe, expect, it } from 'vitest';",
        "import { chunk } from './chunk';",
        '',
        "describe('chunk', () => {",
        "  it('chunk() silently drops the last partial group', () => {",
        '    // From the issue: chunk([1, 2, 3, 4, 5], 2); // returns [[1, 2], [3, 4]] expected [[1, 2], [3, 4], [5]]',
        '    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);',
        '  });',
        '});',
        '',
      ].join('\n'),
    );
  });

  it('a name the issue uses but the repository does not define: no test, and why', async () => {
    const info = await repoInfo(`${fixture('py-durations')}/repo`, 'python3 -m pytest {files}');
    const p = await planSnippetTest({ title: 'Wrong total', body: '```python\n>>> total_seconds("1h")\n3599\n```\nIt should be 3600.' }, info);
    expect(p).toEqual({ ok: false, reason: "`total_seconds` is not defined in the issue's code and not found in the repository's modules" });
  });
});
