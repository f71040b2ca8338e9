import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeCutAnswer, openBrackets } from '../../src/patch/cutAnswer.js';
import { fencedBlocks } from '../../src/patch/wholeFiles.js';

/** The 1.5B's answer on camelcase (bench:generate, 2026-11-29), cut at 512 tokens inside its 21st assert. */
const CAMEL = [
  '`test-camelcase-leading-underscores.js`',
  '',
  '```javascript',
  "import test from 'ava';",
  "import camelCase from './index.js';",
  '',
  "test('camelCase leading underscores', t => {",
  "\tt.is(camelCase('_id'), '_id');",
  "\tt.is(camelCase('_id_'), '_id_');",
  "\tt.is(camelCase('_id_1'), '_id_1');",
  "\tt.is(camelCase('_id_1_2_3_4",
].join('\n');

describe('an answer cut at the answer limit', () => {
  it('loses its unfinished line and gets its brackets closed and its fence: the file parses', () => {
    const closed = closeCutAnswer(CAMEL);
    const body = fencedBlocks(closed.text)[0]!.body;
    expect(body.split('\n').slice(-3)).toEqual(["\tt.is(camelCase('_id_'), '_id_');", "\tt.is(camelCase('_id_1'), '_id_1');", '})']);
    expect(closed.note).toBe('the answer was cut at the answer limit: its unfinished last line dropped, `})` added');
    // node itself says it parses (as a module: it imports).
    const dir = mkdtempSync(join(tmpdir(), 'swt-cut-'));
    try {
      writeFileSync(join(dir, 'a.mjs'), body);
      expect(() => execFileSync(process.execPath, ['--check', join(dir, 'a.mjs')], { stdio: 'pipe' })).not.toThrow();
      writeFileSync(join(dir, 'b.mjs'), fencedBlocks(`${CAMEL}\n`)[0]!.body);
      expect(() => execFileSync(process.execPath, ['--check', join(dir, 'b.mjs')], { stdio: 'pipe' })).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Go and Rust: braces closed, a lifetime is no string; Python: nothing to close, a block header cut from its body gets `pass`', () => {
    const go = '```go\nfunc TestX(t *testing.T) {\n\tif got := F("a{"); got != 1 {\n\t\tt.Errorf("got %d", got)\n\t\tt.Log(';
    expect(fencedBlocks(closeCutAnswer(go).text)[0]!.body.split('\n').slice(-2)).toEqual(['\t\tt.Errorf("got %d", got)', '}}']);
    const rust = "```rust\nfn first<'a>(x: &'a str) -> &'a str {\n    let c = '{';\n    x\n    // '(' here\n  ";
    expect(closeCutAnswer(rust).text).toBe("```rust\nfn first<'a>(x: &'a str) -> &'a str {\n    let c = '{';\n    x\n    // '(' here\n}\n```\n");
    const py = '```python\nimport pytest\n\n\ndef test_a():\n    assert f("(") == 2  # it\'s (\n\n\ndef test_b():\n    assert f(';
    expect(closeCutAnswer(py)).toEqual({ text: '```python\nimport pytest\n\n\ndef test_a():\n    assert f("(") == 2  # it\'s (\n\n\ndef test_b():\n    pass\n```\n', note: 'the answer was cut at the answer limit: its unfinished last line dropped, `pass` added' });
    // Ended with its newline: the last line is whole and stays.
    expect(closeCutAnswer('```python\ndef test_c():\n    assert g() == 1\n').text).toBe('```python\ndef test_c():\n    assert g() == 1\n```\n');
  });

  it('is left as it was when nothing is safe: inside a string or a comment, brackets that do not match, a fence already closed, no code', () => {
    for (const text of [
      '```js\nconst s = `one\ntwo',
      '```js\n/* a comment\nstill (\nx',
      '```js\nfoo(]\nbar',
      'Here:\n```js\nfoo()\n```\nand then the prose was cu',
      '```js\nfoo(',
    ]) {
      expect(closeCutAnswer(text)).toEqual({ text });
    }
    const js = { hashComments: false, lifetimes: false };
    expect(openBrackets('a("b(", [c, {d: `${e}(`}])', js)).toEqual([]);
    expect(openBrackets("test('it works', t => {", js)).toEqual(['(', '{']);
    expect(openBrackets('x = f(1, [2,\n', { hashComments: true, lifetimes: false })).toEqual(['(', '[']);
  });
});
