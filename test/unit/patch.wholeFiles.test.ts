/**
 * Whole test files as small models write them (the answers below are shaped on ones captured from
 * Qwen2.5-Coder 1.5B/0.5B): a fenced file whose path is named in the fence, on its first line or
 * just before it, with prose around; and one with no path at all, put beside the repository's tests.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyModelPatchToFiles, detectFormat, parseWholeFiles } from '../../src/patch/index.js';
import { nameLooseTest, newTestPath } from '../../src/generation/looseTest.js';

const repo: Record<string, string> = { 'durations.py': 'def parse_duration(s):\n    return int(s)\n', 'tests/test_durations.py': 'def test_int():\n    pass\n' };
const read = (p: string) => repo[p] ?? null;

const TEST = 'from durations import parse_duration\n\n\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\n';

// The 1.5B model's real answer on Masterminds/semver b1bb761 (bench:generate, 2026-11-29): <code>, its path alone on the first line.
const CODE_TAG = '<code>\ntest_constrained_range_with_space_separated_parts.go\npackage semver_test\n\nimport (\n\t"testing"\n\t"github.com/Masterminds/semver"\n)\n\nfunc TestConstrainedRangeWithSpaceSeparatedParts(t *testing.T) {\n\tconstraint, err := semver.NewConstraint("1.0.0 - 2.0.0 <=2.0.0")\n\tif err != nil {\n\t\tt.Errorf("Error parsing constraint: %s", err)\n\t}\n}\n</code>';

/** A temporary Go module holding `files` (module line first in go.mod), for `run`; removed after. */
async function inGoModule(files: Record<string, string>, run: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'swt-loose-go-'));
  try {
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
    await run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('whole files in an answer', () => {
  it('reads the path from the line before the fence, with prose around, and adds the file', async () => {
    const answer = `To reproduce the issue, add this test.\n\n**tests/test_combined.py**\n\`\`\`python\n${TEST}\`\`\`\n\nThis test fails because parse_duration does not handle combined units.`;
    expect(detectFormat(answer)).toBe('files');
    const r = await applyModelPatchToFiles(answer, read);
    expect(r.errors).toEqual([]);
    expect(r.format).toBe('files');
    expect(r.diff).toContain('+++ b/tests/test_combined.py');
    expect(r.diff).toContain('+    assert parse_duration("1h30m") == 5400');
  });

  it('reads the path from the fence info string or a first-line comment; a later block for the same path wins', () => {
    expect(parseWholeFiles(`\`\`\`python tests/test_a.py\n${TEST}\`\`\``)).toEqual([{ path: 'tests/test_a.py', content: TEST }]);
    expect(parseWholeFiles(`\`\`\`js\n// test/parse.test.js\nit('x', () => {});\n\`\`\``)[0]!.path).toBe('test/parse.test.js');
    expect(parseWholeFiles(`Create \`tests/test_b.py\`:\n\`\`\`python\nfirst\n\`\`\`\nBetter:\n\n\`\`\`python\n# tests/test_b.py\nsecond\n\`\`\``)).toEqual([{ path: 'tests/test_b.py', content: '# tests/test_b.py\nsecond\n' }]);
  });


  it('reads a <code> … </code> block, and a path alone on a block\'s first line as its name and not its text', () => {
    expect(detectFormat(CODE_TAG)).toBe('files');
    const [file] = parseWholeFiles(CODE_TAG);
    expect(file!.path).toBe('test_constrained_range_with_space_separated_parts.go');
    expect(file!.content.startsWith('package semver_test\n')).toBe(true);
    expect(file!.content.endsWith('\t}\n}\n')).toBe(true);
    expect(parseWholeFiles(`\`\`\`python\ntests/test_a.py\n${TEST}\`\`\``)).toEqual([{ path: 'tests/test_a.py', content: TEST }]);
    expect(parseWholeFiles(`<code class="language-python">\n./tests/test_a.py\n${TEST}</code>`)).toEqual([{ path: 'tests/test_a.py', content: TEST }]);
    // A first line that is code, an unclosed tag, a path with nothing after it: no file.
    expect(parseWholeFiles('```python\nimport os\nx = 1\n```')).toEqual([]);
    expect(parseWholeFiles(`<code>\ntests/test_a.py\n${TEST}`)).toEqual([]);
    expect(parseWholeFiles('```\ntests/test_a.py\n```')).toEqual([]);
  });

  it('does not take a sentence naming several files, a version or "e.g." for a path', () => {
    expect(parseWholeFiles('Compare durations.py and tests/test_durations.py, e.g. v1.2:\n```python\nx = 1\n```')).toEqual([]);
  });

  it('replaces an existing test file with the whole file given, and says so', async () => {
    const r = await applyModelPatchToFiles(`tests/test_durations.py\n\`\`\`python\n${TEST}\`\`\``, read);
    expect(r.applied).toBe(true);
    expect(r.warnings).toContain('tests/test_durations.py: replaced by the whole file the answer gives');
    expect(r.diff).toContain('-def test_int():');
  });

  it('still refuses a named path outside the repository', async () => {
    const r = await applyModelPatchToFiles(`../../etc/test_x.py\n\`\`\`python\n${TEST}\`\`\``, read);
    expect(r.applied).toBe(false);
    expect(r.errors.join()).toMatch(/UNSAFE_PATH/);
  });
});

describe('an unnamed test file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'swt-loose-'));
    mkdirSync(join(dir, 'tests'));
    for (const [p, c] of Object.entries(repo)) writeFileSync(join(dir, p), c);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('goes beside the repository\'s tests, under a name its ecosystem runs as a test', () => {
    expect(newTestPath(['durations.py', 'tests/test_durations.py'])).toBe('tests/test_durations_swt_repro.py');
    expect(newTestPath(['index.js', 'test/parse.test.js', 'test/format.test.js'])).toBe('test/format_swt_repro.test.js');
    expect(newTestPath(['go.mod', 'clamp.go', 'clamp_test.go'])).toBe('swt_repro_clamp_test.go');
    expect(newTestPath(['README.md'])).toBeUndefined();
    // camelcase's one test file is a root `test.js`: ava runs `test-*.js` beside it.
    expect(newTestPath(['index.js', 'package.json', 'test.js'])).toBe('test-swt-repro.js');
  });

  it('takes the largest code block (not the shell one) and names it, then it applies as a new file', async () => {
    const answer = `Here is a test:\n\n\`\`\`python\n${TEST}\`\`\`\n\nRun it with:\n\`\`\`bash\npython -m pytest tests\nsecond line\nthird line\n\`\`\``;
    const loose = await nameLooseTest(answer, dir);
    expect(loose.path).toBe('tests/test_durations_swt_repro.py');
    const r = await applyModelPatchToFiles(loose.text, read);
    expect(r.applied).toBe(true);
    expect(r.diff).toContain('+++ b/tests/test_durations_swt_repro.py');
  });

  it('leaves an answer with a diff, or with no code, as it is', async () => {
    const diff = 'diff\ntests/test_x.py\ninsert\nEOF\ndef test_x():\n    assert False\nend diff';
    expect((await nameLooseTest(diff, dir)).text).toBe(diff);
    expect(await nameLooseTest('I cannot write a test for this.', dir)).toEqual({ text: 'I cannot write a test for this.' });
  });

  it('a Go test in the package it also imports by its own module path (an import cycle) becomes the external test package', async () => {
    // The 1.5B's re-drawn answer on Masterminds/semver b1bb761 (bench:generate, 2026-11-30): `package semver`, importing semver/v3.
    const answer = '<code>\ntest_reproduce_issue.go\npackage semver\n\nimport (\n\t"testing"\n\n\t"github.com/Masterminds/semver/v3"\n)\n\nfunc TestNewConstraintRangeWithSpace(t *testing.T) {\n\tc, err := semver.NewConstraint("1.0.0 - 2.0.0 <=2.0.0")\n\tif err != nil {\n\t\tt.Errorf("Error parsing constraint: %s", err)\n\t}\n\tv, _ := semver.NewVersion("1.0.0")\n\tif !c.Check(v) {\n\t\tt.Errorf("Version %s does not meet the constraint %s", v, c)\n\t}\n}\n</code>';
    await inGoModule({ 'go.mod': 'module github.com/Masterminds/semver/v3\n\ngo 1.18\n', 'constraints.go': 'package semver\n', 'constraints_test.go': 'package semver\n' }, async (go) => {
      const loose = await nameLooseTest(answer, go);
      expect(loose.path).toBe('swt_repro_constraints_test.go');
      expect(loose.text).toMatch(/^swt_repro_constraints_test\.go\n```\npackage semver_test\n\nimport \(/);
      expect(loose.text).toContain('c, err := semver.NewConstraint("1.0.0 - 2.0.0 <=2.0.0")');
      // Named at a test path of its own, the same.
      expect((await nameLooseTest(answer.replace('test_reproduce_issue.go', 'range_test.go'), go)).text).toMatch(/^range_test\.go\n```\npackage semver_test\n/);
      // In a folder below the module, its own import path is the module's plus the folder.
      mkdirSync(join(go, 'inner'));
      writeFileSync(join(go, 'inner', 'a_test.go'), 'package inner\n');
      const inner = '`inner/b_test.go`\n```go\npackage inner\n\nimport "github.com/Masterminds/semver/v3/inner"\n\nfunc TestB(t *testing.T) { inner.X() }\n```';
      expect((await nameLooseTest(inner, go)).text).toContain('package inner_test\n');
      // A test of the package that imports other packages only, or is already external, stays as written.
      const internal = '`range_test.go`\n```go\npackage semver\n\nimport (\n\t"strings"\n\t"testing"\n)\n\nfunc TestR(t *testing.T) {\n\tc, _ := NewConstraint(strings.TrimSpace(" 1.0.0 "))\n\t_ = c\n}\n```';
      expect((await nameLooseTest(internal, go)).text).toBe(internal);
      const external = answer.replace('package semver\n', 'package semver_test\n').replace('test_reproduce_issue.go', 'range_test.go');
      expect((await nameLooseTest(external, go)).text).toBe(external);
      // Its answer in the run after: `semver.NewConstraint` in `package semver` with no import, and "fmt" unused.
      const unimported = '<code>\ntest_reproduce_issue.go\npackage semver\n\nimport (\n\t"fmt"\n\t"testing"\n)\n\nfunc TestConstrainWithSpaceSeparatedParts(t *testing.T) {\n\t_, err := semver.NewConstraint("1.0.0 - 2.0.0 <=2.0.0")\n\tif err != nil {\n\t\tt.Errorf("Error parsing constraint: %s", err)\n\t}\n}\n</code>';
      expect((await nameLooseTest(unimported, go)).text).toContain('package semver_test\n\nimport (\n\t"github.com/Masterminds/semver/v3"\n\t"testing"\n)\n');
      // A used import (math/rand/v2 is rand), an aliased one and a blank one stay.
      const used = '`range_test.go`\n```go\npackage semver\n\nimport (\n\t"math/rand/v2"\n\tj "encoding/json"\n\t_ "embed"\n\t"testing"\n)\n\nfunc TestR(t *testing.T) { _ = rand.IntN(3) }\n```';
      expect((await nameLooseTest(used, go)).text).toBe(used);
    });
  });

  it('a named new file the runner would not run (Qwen 1.5B\'s `test_parse_combined_units.go`) is put at a test path in the language of the repository\'s tests', async () => {
    // The real answer of the 1.5B model on the go-durations fixture (swt demo --fixture go-durations).
    const answer = '`test_parse_combined_units.go`\n\n```go\npackage durations_test\n\nimport (\n\t"testing"\n\t"github.com/yourusername/durations"\n)\n\nfunc TestParseCombinedUnits(t *testing.T) {\n\tn, err := durations.Parse("1h30m")\n\tif err != nil {\n\t\tt.Errorf("Expected no error, got %v", err)\n\t}\n\tif n != 5400 {\n\t\tt.Errorf("Expected 5400, got %d", n)\n\t}\n}\n```';
    await inGoModule({ 'go.mod': 'module example.com/durations\n', 'durations.go': 'package durations\n', 'durations_test.go': 'package durations\n' }, async (go) => {
      const loose = await nameLooseTest(answer, go);
      expect(loose.path).toBe('swt_repro_durations_test.go');
      expect(loose.text).toContain('func TestParseCombinedUnits(t *testing.T) {');
      // The same in <code> with its path alone on the first line.
      expect((await nameLooseTest(CODE_TAG, go)).path).toBe('swt_repro_durations_test.go');
      // A named test file, or a named file in another language, stays as it is.
      expect((await nameLooseTest(answer.replace('test_parse_combined_units.go', 'parse_test.go'), go)).path).toBeUndefined();
      expect((await nameLooseTest(answer.replace('test_parse_combined_units.go', 'notes.md'), go)).path).toBeUndefined();
    });
  });

  it("a new JS test file whose relative imports resolve only elsewhere goes where they do (the 1.5B's `test-cases/leading-underscores.js` importing `./index.js` on camelcase)", async () => {
    const js = mkdtempSync(join(tmpdir(), 'swt-loose-js-'));
    try {
      mkdirSync(join(js, 'lib'));
      mkdirSync(join(js, 'test'));
      for (const [p, c] of Object.entries({ 'index.js': '', 'lib/util.js': '', 'package.json': '{}', 'test.js': '', 'test/util.test.js': '' })) writeFileSync(join(js, p), c);
      const answer = (path: string, imports: string) => `\`${path}\`\n\n\`\`\`javascript\n${imports}\nimport test from 'ava';\n\ntest('keeps _', t => {\n\tt.is(camelCase('_id'), '_id');\n});\n\`\`\`\n`;
      // Not a test path: put at the new test path, where ./index.js resolves.
      expect((await nameLooseTest(answer('test-cases/leading-underscores.js', "import camelCase from './index.js';"), js)).path).toBe('test-swt-repro.js');
      // A test path whose import resolves only from the root: moved there under its own name.
      const moved = await nameLooseTest(answer('test/test-leading.js', "import camelCase from './index.js';\nconst { u } = require('./lib/util');"), js);
      expect(moved.path).toBe('test-leading.js');
      expect(moved.text).toMatch(/^test-leading\.js\n```\nimport camelCase from '\.\/index\.js';/);
      // Its imports resolve where it is, or nowhere: it stays.
      expect((await nameLooseTest(answer('test/leading.test.js', "import camelCase from '../index.js';"), js)).path).toBeUndefined();
      expect((await nameLooseTest(answer('test/leading.test.js', "import x from './nowhere.js';"), js)).path).toBeUndefined();
    } finally {
      rmSync(js, { recursive: true, force: true });
    }
  });
});
