import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyModelPatch, applyModelPatchToFiles, detectFormat } from '../../src/patch/applyModelPatch.js';
import { canonicalDiff } from '../../src/patch/canonical.js';
import { confineRepoPath } from '../../src/util/repoPath.js';
import { isSwtError } from '../../src/util/errors.js';

const FIX = fileURLToPath(new URL('./fixtures/patch/', import.meta.url));
const PY = readFileSync(FIX + 'test_calc.py', 'utf8');
const MOCHA = readFileSync(FIX + 'calc.spec.js', 'utf8');

let repo: string;
let outside: string;

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p, r);
      else if (e.isFile()) out[r] = readFileSync(p, 'utf8');
    }
  };
  walk(dir, '');
  return out;
}

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), 'swt-patch-test-'));
  outside = mkdtempSync(join(tmpdir(), 'swt-patch-outside-'));
  mkdirSync(join(repo, 'tests'), { recursive: true });
  mkdirSync(join(repo, 'test'), { recursive: true });
  writeFileSync(join(repo, 'tests/test_calc.py'), PY);
  writeFileSync(join(repo, 'test/calc.spec.js'), MOCHA);
  writeFileSync(join(outside, 'secret.py'), 'x = 1\n');
  symlinkSync(outside, join(repo, 'escape'));
  symlinkSync(join(repo, 'tests'), join(repo, 'tests-link'));
  execFileSync('git', ['init', '-q'], { cwd: repo });
  execFileSync('git', ['add', '-A'], { cwd: repo });
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'base'], { cwd: repo });
});

afterAll(() => {
  rmSync(repo, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const CUSTOM = `I'll add a regression test.

\`\`\`custom-diff
diff
tests/test_calc.py
insert
EOF
def test_regression():
    assert add(2, 2) == 4
end diff
diff
test/calc.spec.js
rewrite
5
it('should add', function () {
  assert.strictEqual(calc.add(2, 2), 4)
})
end diff
diff
tests/test_new.py
insert
BOF
def test_created():
    assert True
end diff
\`\`\`
`;

describe('applyModelPatch', () => {
  it('detects the format', () => {
    expect(detectFormat(CUSTOM)).toBe('custom');
    expect(detectFormat('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n')).toBe('unified');
    expect(detectFormat('I could not do it.')).toBe('unknown');
  });

  it('applies a custom patch across files, returns a canonical git diff that git apply accepts, and leaves repoDir untouched', async () => {
    const before = snapshot(repo);
    const r = await applyModelPatch(repo, CUSTOM);
    expect(r.errors).toEqual([]);
    expect(r.applied).toBe(true);
    expect(r.format).toBe('custom');
    expect(snapshot(repo)).toEqual(before);
    expect(r.diff).toContain('diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ ');
    expect(r.diff).toContain('diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_created():\n+    assert True\n');
    execFileSync('git', ['apply', '--check', '-'], { cwd: repo, input: r.diff });
    // and applying it gives exactly the computed contents
    const work = mkdtempSync(join(tmpdir(), 'swt-patch-work-'));
    try {
      execFileSync('git', ['clone', '-q', repo, work]);
      execFileSync('git', ['apply', '-'], { cwd: work, input: r.diff });
      for (const c of r.changes) expect(readFileSync(join(work, c.path), 'utf8')).toBe(c.after);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('applies a unified diff tolerantly and reports hunks', async () => {
    const diff = '```diff\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -99,3 +99,4 @@\n def test_add():\n     assert add(1, 2) == 3\n+    assert add(3, 3) == 6\n     assert add(-1, 1) == 0\n```\n';
    const r = await applyModelPatch(repo, diff);
    expect(r.applied).toBe(true);
    expect(r.format).toBe('unified');
    expect(r.hunks[0]).toMatchObject({ path: 'tests/test_calc.py', status: 'offset' });
    expect(r.warnings.join()).toMatch(/hunk 1 applied at line 9, offset -90/);
    execFileSync('git', ['apply', '--check', '-'], { cwd: repo, input: r.diff });
  });

  it('reports a patch that does not apply, with an empty diff', async () => {
    const r = await applyModelPatch(repo, '--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -1,1 +1,1 @@\n-nothing like this\n+x\n');
    expect(r.applied).toBe(false);
    expect(r.diff).toBe('');
    expect(r.errors[0]).toMatch(/^PATCH_DOES_NOT_APPLY: /);
  });

  it('says when there is no patch at all', async () => {
    const r = await applyModelPatch(repo, 'I am sorry, I cannot write this test.');
    expect(r.applied).toBe(false);
    expect(r.errors[0]).toMatch(/^PATCH_MALFORMED: /);
  });

  it('says when the patch changes nothing', async () => {
    const same = 'diff\ntests/test_calc.py\nrewrite\n9\ndef test_add():\n    assert add(1, 2) == 3\n    assert add(-1, 1) == 0\nend diff\n';
    const r = await applyModelPatch(repo, same);
    expect(r.applied).toBe(false);
    expect(r.errors.join()).toMatch(/changes nothing/);
  });
});

describe('safety', () => {
  const custom = (path: string) => `diff\n${path}\ninsert\nEOF\nx = 1\nend diff\n`;
  const unified = (path: string) => `--- a/${path}\n+++ b/${path}\n@@ -0,0 +1 @@\n+x = 1\n`;

  it.each([
    ['/etc/passwd', /absolute path/],
    ['C:\\Windows\\x.py', /absolute path/],
    ['../outside.py', /escapes the repository/],
    ['tests/../../outside.py', /escapes the repository/],
    ['.git/hooks/pre-commit', /\.git directory/],
    ['sub/.git/config', /\.git directory/],
  ])('rejects %s', async (path, why) => {
    for (const text of [custom(path), unified(path)]) {
      const r = await applyModelPatch(repo, text);
      expect(r.applied).toBe(false);
      expect(r.errors.join()).toMatch(/^UNSAFE_PATH: /);
      expect(r.errors.join()).toMatch(why);
    }
  });

  it('rejects a path through a symlink pointing out of the repository', async () => {
    const r = await applyModelPatch(repo, custom('escape/secret.py'));
    expect(r.applied).toBe(false);
    expect(r.errors.join()).toMatch(/UNSAFE_PATH: .*symlink escape, which points out of the repository/);
  });

  it('rejects a path through a symlink inside the repository, naming the real path', async () => {
    const r = await applyModelPatch(repo, custom('tests-link/test_calc.py'));
    expect(r.applied).toBe(false);
    expect(r.errors.join()).toMatch(/UNSAFE_PATH: .*symlink tests-link; patch the real path tests\/test_calc.py instead/);
  });

  it('caps the patch size and the number of files', async () => {
    const big = await applyModelPatch(repo, custom('tests/big.py') + '#'.repeat(600 * 1024));
    expect(big.errors.join()).toMatch(/^PATCH_TOO_LARGE: patch is \d+ bytes; the limit is 524288/);
    const many = Array.from({ length: 3 }, (_, i) => custom(`tests/t${i}.py`)).join('');
    const r = await applyModelPatch(repo, many, { limits: { maxFiles: 2 } });
    expect(r.errors.join()).toMatch(/^PATCH_TOO_LARGE: patch touches 3 files; the limit is 2/);
    const file = await applyModelPatchToFiles(custom('a.py'), () => null, { limits: { maxFileBytes: 3 } });
    expect(file.errors.join()).toMatch(/PATCH_TOO_LARGE: a.py would be 6 bytes/);
  });

  it('normalises harmless paths and throws SwtError for bad ones', () => {
    expect(confineRepoPath('./tests//a.py')).toBe('tests/a.py');
    expect(confineRepoPath('tests\\a.py')).toBe('tests/a.py');
    try {
      confineRepoPath('../x');
      throw new Error('not rejected');
    } catch (e) {
      expect(isSwtError(e, 'UNSAFE_PATH')).toBe(true);
    }
  });
});

describe('canonical diff', () => {
  it('handles a file without a final newline and a deletion', () => {
    const d = canonicalDiff([
      { path: 'a.txt', before: 'a\nb', after: 'a\nb\nc\n' },
      { path: 'gone.txt', before: 'x\n', after: null },
    ]);
    expect(d).toContain('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n');
    expect(d).toContain('diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n');
  });
});
