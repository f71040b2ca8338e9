/**
 * The patch layer on the real test files of ../shared/examples (or SWT_EXAMPLES_DIR):
 * tests/test_split.py (sqlparse, pytest), src/parse-set-cookie.spec.ts (cookie, vitest),
 * test/send.js (send, mocha), src/index.spec.ts (path-to-regexp, jest).
 */
import { applyModelPatchToFiles } from '../../src/patch/applyModelPatch.js';
import { analyze, loadAllLanguages } from '../../src/patch/structure.js';
import { runCorpus, tally } from '../../bench/patch.js';
import { generateCorpus, loadExampleTestFiles, resolveExamplesDir, type SourceFile } from '../../bench/patchCorpus.js';

let files: SourceFile[];
const file = (suffix: string) => {
  const f = files.find((x) => x.path.endsWith(suffix));
  if (!f) throw new Error(`example test file ${suffix} not found`);
  return f;
};

async function apply(f: SourceFile, text: string): Promise<string> {
  const app = await applyModelPatchToFiles(text, (p) => (p === f.path ? f.content : null));
  expect(app.errors).toEqual([]);
  expect(app.applied).toBe(true);
  return app.changes.find((c) => c.path === f.path)!.after!;
}

beforeAll(async () => {
  resolveExamplesDir(); // throws a clear message when ../shared/examples is absent
  await loadAllLanguages();
  files = loadExampleTestFiles();
});

describe('patch layer on real test files', () => {
  it('finds the units of every example test file without syntax errors', () => {
    for (const f of files) {
      const lang = f.path.endsWith('.py') ? 'python' : f.path.endsWith('.ts') ? 'typescript' : 'javascript';
      const s = analyze(f.content, lang);
      expect(s.hasErrors).toBe(false);
      expect(s.units.length).toBeGreaterThan(10);
    }
  });

  it('rewrites a pytest function in sqlparse tests/test_split.py', async () => {
    const f = file('tests/test_split.py');
    const out = await apply(f, 'diff\ntests/test_split.py\nrewrite\n20\ndef test_split_backslash():\n    stmts = sqlparse.parse("select \'\\\'; select \'\\\'\';")\n    assert len(stmts) == 2\n    assert str(stmts[0]).startswith("select")\nend diff\n');
    expect(out).toContain('    assert len(stmts) == 2\n    assert str(stmts[0]).startswith("select")\n\n\n@pytest.mark.parametrize');
    expect(out.split('\n').length).toBe(f.content.split('\n').length + 1);
  });

  it('rewrites an it() inside describe in cookie src/parse-set-cookie.spec.ts (vitest), given at column 0', async () => {
    const f = file('src/parse-set-cookie.spec.ts');
    const code = 'it("should handle empty value", () => {\n  expect(parseSetCookie("key=")).toEqual({ name: "key", value: "" });\n  expect(parseSetCookie("key= ")).toEqual({ name: "key", value: "" });\n});';
    const out = await apply(f, `diff\nsrc/parse-set-cookie.spec.ts\nrewrite\n12\n${code}\nend diff\n`);
    expect(out).toContain('  it("should handle empty value", () => {\n    expect(parseSetCookie("key=")).toEqual({ name: "key", value: "" });\n    expect(parseSetCookie("key= ")).toEqual({ name: "key", value: "" });\n  });\n');
  });

  it('inserts an it() into a nested describe of send test/send.js (mocha) at a line, and an import at BOF', async () => {
    const f = file('test/send.js');
    const lines = f.content.split('\n');
    const d = lines.findIndex((l) => l.includes("describe('.hidden()'"));
    // the line of the describe's closing `})`
    let close = d + 1;
    while (lines[close] !== '  })') close++;
    const code = "it('should default support sending hidden files', function (done) {\n  request(createServer({ root: fixtures }))\n    .get('/.hidden.txt')\n    .expect(404, done)\n})";
    const text = `diff\ntest/send.js\ninsert\n${close + 1}\n${code}\nend diff\ndiff\ntest/send.js\ninsert\nBOF\nvar os = require('os')\nend diff\n`;
    const out = await apply(f, text);
    expect(out).toContain("\n\n    it('should default support sending hidden files', function (done) {\n      request(createServer({ root: fixtures }))\n        .get('/.hidden.txt')\n        .expect(404, done)\n    })\n  })\n");
    expect(out).toContain("var os = require('os')\nvar after = require('after')");
  });

  it('inserts a describe block at EOF of path-to-regexp src/index.spec.ts (jest)', async () => {
    const f = file('src/index.spec.ts');
    const code = 'describe("regression", () => {\n  it("matches", () => {\n    expect(pathToRegexp.pathToRegexp("/a").test("/a")).toBe(true);\n  });\n});';
    const out = await apply(f, `Here is my test:\n\n\`\`\`custom-diff\ndiff\nsrc/index.spec.ts\ninsert\nEOF\n${code}\n\`\`\`\n`);
    expect(out.endsWith(`  return match && Array.prototype.slice.call(match);\n}\n\n${code}\n`)).toBe(true);
  });

  it('applies a generated corpus of model-like edits: custom >= 95%, tolerant unified >= 85%, no wrong application', async () => {
    const cases = await generateCorpus(files, { seed: 7, editsPerFile: 10 });
    expect(cases.length).toBeGreaterThanOrEqual(200);
    const results = await runCorpus(cases);
    const custom = tally(results, (r) => r.method === 'custom');
    const unified = tally(results, (r) => r.method === 'tolerant unified');
    expect(custom.correct / custom.n).toBeGreaterThanOrEqual(0.95);
    expect(unified.correct / unified.n).toBeGreaterThanOrEqual(0.85);
    expect(custom.wrong).toBe(0);
    expect(unified.wrong).toBe(0);
  });
});
