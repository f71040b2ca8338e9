import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { codeTokens, projectFiles, rankBm25, retrieve } from '../../src/generation/retrieval.js';
import { zeroShotPlusPrompt } from '../../src/generation/prompts.js';
import { prepareZeroShotPlus } from '../../src/generation/strategies/zeroShotPlus.js';
import type { StrategyContext } from '../../src/generation/candidate.js';

describe('BM25 retrieval', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swt-retrieval-'));
    const files: Record<string, string> = {
      'durations/parse.py': 'UNITS = {"s": 1}\n\ndef parse_duration(text):\n    """Return the seconds in a duration like 1h30m."""\n    return int(text[:-1]) * UNITS[text[-1]]\n',
      'durations/format.py': 'def format_duration(seconds):\n    return f"{seconds}s"\n',
      'durations/__init__.py': 'from .parse import parse_duration\nfrom .format import format_duration\n',
      'durations/colors.py': 'RED = "red"\nBLUE = "blue"\n\ndef paint(text, color):\n    return text\n',
      'tests/test_parse.py': 'from durations import parse_duration\n\ndef test_single():\n    assert parse_duration("2h") == 7200\n',
      'tests/test_colors.py': 'from durations.colors import paint\n\ndef test_paint():\n    assert paint("a", "red") == "a"\n',
      'node_modules/junk/index.js': 'function parseDuration() {}\n',
    };
    for (const [p, t] of Object.entries(files)) {
      await mkdir(dirname(join(dir, p)), { recursive: true });
      await writeFile(join(dir, p), t);
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('tokenises code identifiers whole and in parts', () => {
    expect(codeTokens('parseDuration parse_duration HTTPServer')).toEqual(
      expect.arrayContaining(['parseduration', 'parse', 'duration', 'parse_duration', 'httpserver', 'http', 'server']),
    );
  });

  it('ranks the source file the issue is about first, with its tests, skipping dependencies', async () => {
    const r = await retrieve(dir, 'parse_duration crashes on combined units like 1h30m: ValueError in parse_duration', { maxFiles: 3 });
    expect(r.sources[0].path).toBe('durations/parse.py');
    expect(r.sources.map((s) => s.path)).not.toContain('node_modules/junk/index.js');
    expect(r.sources.every((s) => !s.path.startsWith('tests/'))).toBe(true);
    expect(r.tests[0].path).toBe('tests/test_parse.py');
  });

  it('a Python repository has no project file to show (its tests import the package by name)', async () => {
    const r = await retrieve(dir, 'parse_duration crashes', { maxFiles: 3 });
    expect(await projectFiles(dir, [...r.sources, ...r.tests])).toEqual([]);
  });

  it('retrieves the code of any ecosystem, not only Python and JS (a Go module: its source and its _test.go)', async () => {
    const go = await mkdtemp(join(tmpdir(), 'swt-retrieval-go-'));
    try {
      const files: Record<string, string> = {
        'go.mod': 'module example.com/durations\n\ngo 1.21\n',
        'durations.go': 'package durations\n\n// Parse returns the seconds in a duration like 1h30m.\nfunc Parse(text string) (int, error) {\n\treturn 0, nil\n}\n',
        'colors.go': 'package durations\n\nfunc Paint(text string) string { return text }\n',
        'durations_test.go': 'package durations\n\nimport "testing"\n\nfunc TestParseHours(t *testing.T) {\n\tif got, _ := Parse("2h"); got != 7200 {\n\t\tt.Fatal(got)\n\t}\n}\n',
        'README.md': 'Parse durations.\n',
      };
      for (const [p, t] of Object.entries(files)) await writeFile(join(go, p), t);
      const r = await retrieve(go, 'Parse returns 0 for combined units like 1h30m', { maxFiles: 2 });
      expect(r.sources[0]!.path).toBe('durations.go');
      expect(r.sources.map((f) => f.path)).not.toContain('README.md');
      expect(r.tests.map((f) => f.path)).toEqual(['durations_test.go']);
      // The file that names the module, for a new test's import path (the 1.5B dropped Masterminds/semver's /v3).
      expect(await projectFiles(go, [...r.sources, ...r.tests])).toEqual([{ path: 'go.mod', score: 0, content: 'module example.com/durations\n\ngo 1.21\n', truncated: false }]);
      // A small model's prompt (whole-file answers) shows it first and the test by its imports; a remote model's prompt is the paper's.
      const ctx = (local: boolean) => ({ workbench: { repoDir: go, testCommand: 'go test ./...' }, issue: { title: 'Parse returns 0 for 1h30m', body: '' }, llm: { local, contextLimit: 8192 }, options: {} }) as unknown as StrategyContext;
      const small = (await prepareZeroShotPlus(ctx(true))).prompt;
      expect(small).toContain('[start of go.mod]\nmodule example.com/durations\n\ngo 1.21\n[end of go.mod]\n[start of durations.go]');
      expect(small).toContain('[start of durations_test.go]\npackage durations\n\nimport "testing"\n… (file truncated)\n[end of durations_test.go]');
      const remote = (await prepareZeroShotPlus(ctx(false))).prompt;
      expect(remote).not.toContain('[start of go.mod]');
      expect(remote).toContain('func TestParseHours');
    } finally {
      await rm(go, { recursive: true, force: true });
    }
  });

  it('respects the character budget', async () => {
    const r = await retrieve(dir, 'parse duration format paint', { maxChars: 700 });
    const total = [...r.sources, ...r.tests].reduce((n, f) => n + f.content.length, 0);
    expect(total).toBeLessThanOrEqual(700);
  });

  it('works with fewer than three documents (the library needs three)', () => {
    expect(rankBm25([{ id: 'a.py', path: 'a.py', body: 'def alpha(): pass' }], 'alpha', 5)).toEqual([{ id: 'a.py', score: expect.any(Number) }]);
  });

  it('builds the ZeroShotPlus prompt with numbered files and the custom diff format', async () => {
    const r = await retrieve(dir, 'parse_duration 1h30m', { maxFiles: 1 });
    const p = zeroShotPlusPrompt({ issue: { title: 'Crash', body: 'parse_duration("1h30m") fails' }, sources: r.sources, tests: r.tests, testCommand: 'python3 -m pytest {files}', language: 'python' });
    expect(p).toContain('<issue>\nCrash\n\nparse_duration("1h30m") fails\n</issue>');
    expect(p).toContain('[start of durations/parse.py]\n1 UNITS = {"s": 1}');
    expect(p).toContain('[start of tests/test_parse.py]');
    expect(p).toContain('```custom-diff\ndiff\n<path/filename>');
    expect(p).toContain("Make sure to implement only test cases and don't try to fix the issue itself.");
  });
});
