import { Session } from 'node:inspector/promises';
import vm from 'node:vm';
import ts from 'typescript';
import { codeLines } from '../../src/coverage/codeLines.js';
import { COVERAGE_MARKER, counterFor, countable, parsePythonCounts, withCoverage } from '../../src/coverage/instrument.js';
import { v8LineCounts, wrapperLength, type Collected } from '../../src/coverage/v8Counts.js';

describe('codeLines', () => {
  it('Python: leaves out blank lines, comments, docstrings and imports', async () => {
    const src = [
      '"""Module docstring."""', // 1
      'import os', // 2
      'from x import (', // 3
      '    y,', // 4
      ')', // 5
      '', // 6
      'def f(a):', // 7
      '    """Doc', // 8
      '    string."""', // 9
      '    # a comment', // 10
      '    b = """not a', // 11
      'docstring"""', // 12
      '    return a + 1  # trailing comment', // 13
    ].join('\n');
    expect([...(await codeLines('pkg/m.py', src))].sort((a, b) => a - b)).toEqual([7, 11, 12, 13]);
  });

  it('JavaScript: leaves out comments, JSDoc, imports and require declarations', async () => {
    const src = [
      "'use strict'", // 1
      "var fs = require('fs')", // 2
      "const { a } = require('b').c", // 3
      "import x from 'x'", // 4
      '/**', // 5
      ' * Doc.', // 6
      ' */', // 7
      'function f (err) {', // 8
      '  // why', // 9
      '  return err', // 10
      '    ? 1', // 11
      '    : 2', // 12
      '}', // 13
      "const m = require('m')(1) + 1", // 14 (a call on the result: code, not an import)
    ].join('\n');
    expect([...(await codeLines('index.js', src))].sort((a, b) => a - b)).toEqual([1, 8, 10, 11, 12, 13, 14]);
  });

  it('TypeScript: leaves out type-only declarations and re-exports', async () => {
    const src = [
      'export interface P {', // 1
      '  a: string;', // 2
      '}', // 3
      'type Q = P | null;', // 4
      "export { z } from './z';", // 5
      'export function g(p: P): number {', // 6
      '  return p.a.length;', // 7
      '}', // 8
    ].join('\n');
    expect([...(await codeLines('src/g.ts', src))].sort((a, b) => a - b)).toEqual([6, 7, 8]);
  });

  it('other languages keep every non-blank line', async () => {
    expect([...(await codeLines('README.md', '# t\n\nbody\n'))]).toEqual([1, 3]);
  });
});

describe('parsePythonCounts', () => {
  it('sums the per-process files of the targets and ignores anything else in the out dir', () => {
    const files = {
      'swt-coverage/pycov-10.json': JSON.stringify({ 'a.py': { '3': 2, '4': 1 }, 'other.py': { '1': 1 } }),
      'swt-coverage/pycov-11.json': JSON.stringify({ 'a.py': { '3': 1 } }),
      'swt-coverage/pycov-12.json': '{"a.py": {"3": -5}}',
      'swt-coverage/pycov-13.json': 'not json',
      'junit.xml': '<testsuite/>',
    };
    expect(parsePythonCounts(files, 'swt-coverage', ['a.py'])).toEqual({ 'a.py': { 3: 3, 4: 1 } });
  });
});

/** Real V8 block coverage of `code`, run as a vm script named `filename` with `call` applied to its result. */
async function v8Coverage(code: string, filename: string, call: (exported: any) => void) {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
    call(new vm.Script(code, { filename }).runInThisContext());
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    return result.find((r) => r.url === `file://${filename}`)!.functions;
  } finally {
    session.disconnect();
  }
}

describe('v8LineCounts (real V8 coverage)', () => {
  it('plain JavaScript: a line gets the count of the innermost block holding all of it', async () => {
    const file = 'lib/sign.js';
    const code = [
      '(function () {', // 1
      '  return function sign (n) {', // 2
      '    if (n < 0) {', // 3
      "      return 'minus'", // 4
      '    }', // 5
      "    return n === 0 ? 'zero' : 'plus'", // 6
      '  }', // 7
      '})()', // 8
    ].join('\n');
    const functions = await v8Coverage(code, `/testbed/${file}`, (sign) => [1, 2, 0].forEach((n) => sign(n)));
    const collected: Collected = { version: 1, scripts: [{ file, functions: functions as Collected['scripts'][number]['functions'], source: code }], files: { [file]: code }, lost: [] };
    const { counts, skipped } = await v8LineCounts(collected, [file]);
    expect(skipped).toEqual([]);
    // sign ran 3 times, never with n < 0. Line 2 starts before sign's block, so it keeps the outer
    // function's count (1); line 6's ternary branches do not span the line, so it keeps sign's (3).
    expect(counts[file]).toMatchObject({ 2: 1, 3: 3, 4: 0, 5: 0, 6: 3, 7: 3 });
  });

  it('TypeScript run as transpiled code inside a jest-style wrapper maps back to the .ts lines', async () => {
    const file = 'src/sign.ts';
    const original = [
      'export function sign(n: number): string {', // 1
      '  if (n < 0) {', // 2
      "    return 'minus';", // 3
      '  }', // 4
      "  return 'other';", // 5
      '}', // 6
    ].join('\n');
    const js = ts.transpileModule(original, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020, inlineSourceMap: true, inlineSources: true }, fileName: file }).outputText;
    const wrapped = `({"Object.<anonymous>":function(module,exports,require,__dirname,__filename,jest){${js}\n}});`;
    expect(wrapperLength(wrapped)).toBe(wrapped.indexOf('{', 30) + 1);
    const functions = await v8Coverage(wrapped, `/testbed/${file}`, (w) => {
      const mod = { exports: {} as { sign: (n: number) => string } };
      w['Object.<anonymous>'](mod, mod.exports);
      mod.exports.sign(-1);
      mod.exports.sign(-2);
    });
    const collected: Collected = { version: 1, scripts: [{ file, functions: functions as Collected['scripts'][number]['functions'], source: wrapped }], files: { [file]: original }, lost: [] };
    const { counts } = await v8LineCounts(collected, [file]);
    expect(counts[file]).toMatchObject({ 1: 2, 2: 2, 3: 2, 5: 0 });
  });

  it('never follows a source-map URL out of the sandbox output; scripts of other files are ignored', async () => {
    const file = 'a.js';
    const code = 'module.exports = 1\n//# sourceMappingURL=/etc/passwd\n';
    const functions = [{ functionName: '', isBlockCoverage: true, ranges: [{ startOffset: 0, endOffset: code.length, count: 1 }] }];
    const collected: Collected = { version: 1, scripts: [{ file, functions }, { file: 'b.js', functions }], files: { [file]: code }, lost: [] };
    const { counts } = await v8LineCounts(collected, [file]);
    expect(Object.keys(counts)).toEqual([file]);
    expect(counts[file]![1]).toBe(1);
  });
});

describe('withCoverage', () => {
  it('pytest runs get the trace sitecustomize; other runners NODE_V8_COVERAGE, the preload and the collector', () => {
    expect(counterFor('pytest')).toBe('python-trace');
    expect(counterFor('jest')).toBe('v8');
    expect(countable('python-trace', 'a/b.py')).toBe(true);
    expect(countable('v8', 'CHANGELOG.md')).toBe(false);
    const py = withCoverage('python-trace', 'python3 -m pytest t.py', ['a.py']);
    expect(py).toContain(`${COVERAGE_MARKER}'["a.py"]'`);
    expect(py).toContain('sitecustomize.py');
    expect(py).toMatch(/PYTHONPATH="\/tmp\/swt-coverage\/py\$\{PYTHONPATH:\+:\$PYTHONPATH\}"/);
    expect(py.trimEnd().endsWith('( python3 -m pytest t.py )')).toBe(true);
    const js = withCoverage('v8', 'npx jest t.js', ["it's.js"]);
    expect(js).toContain(`${COVERAGE_MARKER}'["it'\\''s.js"]'`);
    expect(js).toContain('NODE_V8_COVERAGE=/tmp/swt-coverage/v8');
    expect(js).toContain('( npx jest t.js ); swt_rc=$?');
    expect(js).toMatch(/node \/tmp\/swt-coverage\/collect\.cjs \/tmp\/swt-coverage\/v8 \/swt-out\/swt-coverage\/v8\.json\nexit \$swt_rc$/);
  });
});
