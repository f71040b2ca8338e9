import { changedFilesOf, changedLines } from '../../src/coverage/changedLines.js';
import { deltaC, mergeCounts } from '../../src/coverage/deltaC.js';
import type { LineCounts, SideCounts } from '../../src/coverage/types.js';

const NONE: SideCounts = { base: {}, head: {} };

describe('changedLines', () => {
  it('numbers removed lines in the old file and added lines in the new one, a modified line being both', () => {
    const patch = [
      'diff --git a/pkg/a.py b/pkg/a.py',
      '--- a/pkg/a.py',
      '+++ b/pkg/a.py',
      '@@ -10,4 +10,5 @@ def f():',
      '     x = 1',
      '-    y = 2',
      '+    y = 3',
      '+    z = 4',
      '     return x',
      ' ',
      '@@ -40,2 +41,1 @@',
      '-gone()',
      ' kept()',
      'diff --git a/new.py b/new.py',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.py',
      '@@ -0,0 +1,2 @@',
      '+a = 1',
      '+b = 2',
      'diff --git a/old.py b/old.py',
      'deleted file mode 100644',
      '--- a/old.py',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-c = 3',
      '',
    ].join('\n');
    const c = changedLines(patch);
    expect(c.removed).toEqual([
      { file: 'pkg/a.py', line: 11 },
      { file: 'pkg/a.py', line: 40 },
      { file: 'old.py', line: 1 },
    ]);
    expect(c.added).toEqual([
      { file: 'pkg/a.py', line: 11 },
      { file: 'pkg/a.py', line: 12 },
      { file: 'new.py', line: 1 },
      { file: 'new.py', line: 2 },
    ]);
    expect(changedFilesOf(c)).toEqual(['new.py', 'old.py', 'pkg/a.py']);
    expect(changedLines(patch, (p) => p !== 'new.py').added.map((l) => l.file)).toEqual(['pkg/a.py', 'pkg/a.py']);
  });

  it('an empty patch changes nothing; a broken one is a PATCH_MALFORMED error', () => {
    expect(changedLines('  \n')).toEqual({ removed: [], added: [] });
    expect(() => changedLines('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n')).toThrow(expect.objectContaining({ code: 'PATCH_MALFORMED' }));
  });
});

describe('deltaC (the paper’s definition)', () => {
  // The fix removes f.py:2 and adds f.py:2–4 (a modified line 2 and two new lines).
  const changed = {
    removed: [{ file: 'f.py', line: 2 }],
    added: [
      { file: 'f.py', line: 2 },
      { file: 'f.py', line: 3 },
      { file: 'f.py', line: 4 },
    ],
  };
  const at = (base: LineCounts, head: LineCounts): SideCounts => ({ base, head });

  it('counts the executable lines whose execution count rises with the tests', () => {
    const original = at({ 'f.py': { 2: 1 } }, { 'f.py': { 2: 1 } }); // T_R runs line 2 once on each side
    const reference = at({ 'f.py': { 2: 2 } }, { 'f.py': { 2: 2, 3: 1 } }); // T* also reaches head line 3
    const withTests = at({ 'f.py': { 2: 1 } }, { 'f.py': { 2: 1, 3: 4 } }); // T adds nothing on line 2, reaches 3
    const d = deltaC({ changed, original, reference, withTests });
    // Executable: base 2 (T_R), head 2 (T_R) and 3 (T*); head 4 is run by nobody.
    expect(d.executable).toEqual({ removed: [{ file: 'f.py', line: 2 }], added: [{ file: 'f.py', line: 2 }, { file: 'f.py', line: 3 }] });
    // Rises: only head 3 (1 of 3).
    expect(d.covered).toEqual({ removed: [], added: [{ file: 'f.py', line: 3 }] });
    expect(d.dC).toBeCloseTo(1 / 3);
    // The golden tests raise base 2, head 2 and head 3: all of them.
    expect(d.referenceDC).toBe(1);
  });

  it('a line the tests run no more often than the original tests does not count, however often it runs', () => {
    const original = at({}, { 'f.py': { 3: 7 } });
    const d = deltaC({ changed, original, reference: at({}, { 'f.py': { 3: 1 } }), withTests: at({}, { 'f.py': { 3: 7 } }) });
    expect(d.dC).toBe(0);
  });

  it('no applied tests: ΔC is 0 when there are executable lines, and null (left out) when there are none', () => {
    const reference = at({}, { 'f.py': { 4: 1 } });
    expect(deltaC({ changed, original: NONE, reference, withTests: null })).toMatchObject({ dC: 0, referenceDC: 1 });
    expect(deltaC({ changed, original: NONE, reference: NONE, withTests: at({}, { 'f.py': { 4: 1 } }) })).toMatchObject({ dC: null, referenceDC: null });
  });

  it('keeps non-code lines out even when a counter counted them', () => {
    const reference = at({ 'f.py': { 2: 1 } }, { 'f.py': { 2: 1, 3: 1, 4: 1 } });
    const d = deltaC({ changed, original: NONE, reference, withTests: reference, isCode: (side, l) => !(side === 'head' && l.line === 4) });
    expect(d.executable.added.map((l) => l.line)).toEqual([2, 3]);
    expect(d.dC).toBe(1);
  });

  it('without golden tests every changed code line is executable (static)', () => {
    const d = deltaC({ changed, original: NONE, reference: null, withTests: at({}, { 'f.py': { 2: 1 } }) });
    expect(d.executable.removed.length + d.executable.added.length).toBe(4);
    expect(d.dC).toBe(0.25);
    expect(d.referenceDC).toBeNull();
  });
});

describe('mergeCounts', () => {
  it('sums line by line across runs and files', () => {
    expect(mergeCounts({ a: { 1: 1, 2: 3 } }, { a: { 2: 1 }, b: { 5: 2 } }, {})).toEqual({ a: { 1: 1, 2: 4 }, b: { 5: 2 } });
  });
});
