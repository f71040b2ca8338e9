import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { applyUnifiedToText } from '../../src/patch/unified.js';
import { fileView, locate } from '../../src/patch/hunkLocate.js';
import { parseUnifiedDiff, type HunkLine, type UnifiedHunk } from '../../src/patch/unifiedParse.js';

const FIX = fileURLToPath(new URL('./fixtures/patch/', import.meta.url));
const PY = readFileSync(FIX + 'test_calc.py', 'utf8');
const JEST = readFileSync(FIX + 'calc.test.js', 'utf8');

function applyOne(original: string, diff: string) {
  const p = parseUnifiedDiff(diff);
  expect(p.files).toHaveLength(1);
  return applyUnifiedToText(original, p.files[0]);
}

const GOOD = `--- a/t.py
+++ b/t.py
@@ -8,4 +8,5 @@
 
 def test_add():
     assert add(1, 2) == 3
     assert add(-1, 1) == 0
+    assert add(2, 2) == 4
`;
const WANT = PY.replace('    assert add(-1, 1) == 0\n', '    assert add(-1, 1) == 0\n    assert add(2, 2) == 4\n');

describe('tolerant unified diff', () => {
  it('applies strictly when the diff is exact', () => {
    const r = applyOne(PY, GOOD);
    expect(r.ok).toBe(true);
    expect(r.text).toBe(WANT);
    expect(r.reports).toEqual([expect.objectContaining({ status: 'exact', at: 8 })]);
  });

  it('ignores wrong line numbers and reports the offset', () => {
    const r = applyOne(PY, GOOD.replace('@@ -8,4 +8,5 @@', '@@ -30,4 +30,5 @@'));
    expect(r.text).toBe(WANT);
    expect(r.reports[0]).toMatchObject({ status: 'offset', offset: -22 });
  });

  it('accepts a header without numbers', () => {
    const r = applyOne(PY, GOOD.replace('@@ -8,4 +8,5 @@', '@@ @@'));
    expect(r.text).toBe(WANT);
  });

  it('matches context without regard to whitespace (trailing spaces, tabs, CRLF)', () => {
    const damaged = GOOD.replace('     assert add(1, 2) == 3', ' \tassert add(1, 2) == 3   ').replace(/\n/g, '\r\n');
    const r = applyOne(PY, damaged);
    expect(r.text).toBe(WANT);
    expect(r.reports[0].status).toBe('whitespace');
  });

  it('re-indents added lines when the whole hunk was shifted', () => {
    const shifted = GOOD.split('\n')
      .map((l) => (/^[ +-]\S|^[ +-] /.test(l) && l.slice(1).trim() !== '' ? l[0] + '  ' + l.slice(1) : l))
      .join('\n');
    const r = applyOne(PY, shifted);
    expect(r.text).toBe(WANT);
    expect(r.warnings.join()).toMatch(/re-indented added lines by -2/);
  });

  it('tolerates missing context lines and stale counts (fuzz)', () => {
    const missing = `--- a/t.py\n+++ b/t.py\n@@ -8,4 +8,5 @@\n     assert add(-1, 1) == 0\n+    assert add(2, 2) == 4\n`;
    const r = applyOne(PY, missing);
    expect(r.text).toBe(WANT);
  });

  it('tolerates blank context lines without their leading space, and blank lines the file lacks', () => {
    const d = `--- a/t.py\n+++ b/t.py\n@@ -9,3 +9,4 @@\n def test_add():\n\n     assert add(1, 2) == 3\n     assert add(-1, 1) == 0\n+    assert add(2, 2) == 4\n`;
    const r = applyOne(PY, d);
    expect(r.text).toBe(WANT);
  });

  it('refuses a hunk that matches several places equally instead of guessing', () => {
    const d = `--- a/calc.test.js\n+++ b/calc.test.js\n@@ -1,2 +1,3 @@\n     })\n+    // hi\n`;
    const r = applyOne(JEST, d);
    expect(r.ok).toBe(false);
    expect(r.reports[0]).toMatchObject({ status: 'failed' });
    expect(r.reports[0].message).toMatch(/matches \d+ places equally.*refusing to guess/);
  });

  it('uses the declared line to choose among identical exact matches', () => {
    const d = `--- a/calc.test.js\n+++ b/calc.test.js\n@@ -15,2 +15,3 @@\n     })\n+    // after divides\n \n`;
    const r = applyOne(JEST, d);
    expect(r.ok).toBe(true);
    expect(r.text).toContain("      expect(divide(4, 2)).toBe(2)\n    })\n    // after divides\n");
  });

  it('reports a hunk that does not match at all', () => {
    const d = `--- a/t.py\n+++ b/t.py\n@@ -1,2 +1,3 @@\n def nothing_like_this():\n+    pass\n`;
    const r = applyOne(PY, d);
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/hunk 1 .* does not match the file/);
  });

  it('parses several files, fenced and surrounded by prose, and new files', () => {
    const text = 'Here:\n```diff\n' + GOOD + 'diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    pass\n```\nThanks';
    const p = parseUnifiedDiff(text);
    expect(p.files.map((f) => [f.oldPath, f.newPath, f.isNew])).toEqual([
      ['t.py', 't.py', false],
      [null, 'new.py', true],
    ]);
    const r = applyUnifiedToText(null, p.files[1]);
    expect(r.text).toBe('def test_new():\n    pass\n');
  });

  it('keeps a blank context line at the end of a hunk when the counts need it', () => {
    const d = '--- a/t.py\n+++ b/t.py\n@@ -10,3 +10,4 @@\n     assert add(-1, 1) == 0\n+    assert add(2, 2) == 4\n\n\n';
    const r = applyOne(PY, d);
    expect(r.text).toBe(WANT);
  });
});

describe('locating one hunk (hunkLocate)', () => {
  const hunk = (oldStart: number | null, oldCount: number | null, lines: string[]): UnifiedHunk => ({
    oldStart,
    oldCount,
    newStart: null,
    newCount: null,
    lines: lines.map((l) => ({ op: l[0] as HunkLine['op'], text: l.slice(1) })),
    oldNoNewline: false,
    newNoNewline: false,
    header: '',
  });
  const file = ['a', '', 'b', 'c', '  d', 'x', 'x', 'e'];
  const view = fileView(file, 2);
  const at = (r: ReturnType<typeof locate>) => ('error' in r ? r.error : [r.start, r.end, r.level, r.fuzz, r.note]);

  it('places exactly, ignoring whitespace, and ignoring blank lines the hunk lacks', () => {
    expect(at(locate(view, hunk(3, 2, [' b', ' c', '+n']), 0, 0))).toEqual([2, 4, 'exact', 0, undefined]);
    expect(at(locate(view, hunk(5, 1, [' d', '+n']), 0, 0))).toEqual([4, 5, 'ws', 0, undefined]);
    expect(at(locate(view, hunk(1, 2, [' a', ' b', '+n']), 0, 0))).toEqual([0, 3, 'blank', 0, undefined]);
    expect(at(locate(fileView(file, 0), hunk(3, 2, [' b', ' c', '+n']), 3, 0))).toMatch(/^does not match the file/);
  });

  it('places a hunk without context, or with blank context only, by its header alone', () => {
    expect(at(locate(view, hunk(2, 0, ['+n']), 0, 1))).toEqual([3, 3, 'exact', 0, 'placed by line number only (no context)']);
    expect(at(locate(view, hunk(null, null, ['+n']), 0, 0))).toBe('has no context and no line number');
    expect(at(locate(view, hunk(2, 3, ['+n']), 0, 0))).toBe('has no context lines although its header claims 3; cannot place it');
    expect(at(locate(view, hunk(2, 1, [' ', '+n']), 0, 0))).toEqual([1, 2, 'ws', 0, 'placed by its header (blank context only)']);
    expect(at(locate(view, hunk(3, 1, [' ', '+n']), 0, 0))).toMatch(/^has only blank context lines/);
  });

  it('among equal matches takes the one at the declared line, else refuses', () => {
    expect(at(locate(view, hunk(7, 1, [' x', '+n']), 0, 0))).toEqual([6, 7, 'exact', 0, '2 equal matches; chose the one at the declared line']);
    expect(at(locate(view, hunk(null, null, [' x', '+n']), 0, 0))).toMatch(/^matches 2 places equally \(lines 6, 7\)/);
    // An exact match elsewhere loses to a whitespace-insensitive one at the declared line.
    expect(at(locate(fileView(['d', 'q', '  d'], 0), hunk(3, 1, [' d', '+n']), 0, 0))).toMatch(/^matches exactly at line 1 but, ignoring whitespace, also at its declared line 3/);
  });
});
