/**
 * swt eval --coverage on the project's own fixture instances (real containers, both counters:
 * py-durations runs pytest under `trace`, ts-chunk runs vitest under NODE_V8_COVERAGE), the
 * report page in a real Chromium, resuming, and comparing two runs.
 */
import { jest } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createFixtureRepo, type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { parseInstances, parsePredictions, repoDirName } from '../../src/eval/instances.js';
import { runEval } from '../../src/eval/runEval.js';
import { writeReportHtml } from '../../src/report/write.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { artifactsDir, withPage } from '../helpers/browser.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

/**
 * A test of only the "invalid character" path of parse_duration. Counted by hand (durations/parse.py):
 * X* (lines the original tests/test_parse.py or the golden tests execute) is
 *   base: 11 `unit = text[-1]`, 12 `if unit not in UNITS`, 14 `return int(...)`  (13's raise never runs)
 *   head: 11–18 (the loop over characters), 21 `if number:`, 23 `return total`  (19 `else:` has no
 *         line event; 20 and 22, the raises, never run)                                   → 13 lines
 * parse_duration("5x") raises at base on line 13 after 11 and 12, and at head walks 11–16 ('5' is a
 * digit, 'x' fails both tests) and raises on line 20: it raises the count of base 11, 12 and
 * head 11, 12, 13, 14, 15, 16                                                              → 8 / 13
 */
const PARTIAL_TEST = ['', '', 'def test_unknown_character():', '    with pytest.raises(ValueError):', '        parse_duration("5x")'];

function appendPatch(file: string, afterLine: number, lines: string[]): string {
  return [`diff --git a/${file} b/${file}`, `--- a/${file}`, `+++ b/${file}`, `@@ -${afterLine},0 +${afterLine + 1},${lines.length} @@`, ...lines.map((l) => `+${l}`), ''].join('\n');
}

describe('swt eval --coverage on fixture instances (real containers)', () => {
  let fixtures: FixtureRepo[];
  let root: string;
  let repos: string;

  beforeAll(async () => {
    fixtures = [await createFixtureRepo('py-durations'), await createFixtureRepo('ts-chunk')];
    root = await mkdtemp(join(tmpdir(), 'swt-evalcov-'));
    repos = join(root, 'repos');
    await mkdir(repos);
    for (const f of fixtures) await symlink(f.dir, join(repos, repoDirName(f.instance.repo)));
  });
  afterAll(async () => {
    await Promise.all([...fixtures.map((f) => f.cleanup()), rm(root, { recursive: true, force: true })]);
    expect(containersOfOursOnceRetired()).toBe('');
  });

  const instances = () => parseInstances(fixtures.map((f) => JSON.stringify(f.instance)).join('\n'));
  const ids = () => fixtures.map((f) => f.instance.instance_id);

  it('gold predictions: S = 100 and ΔC equals the golden tests’ own coverage of the fix (13 of 13 Python lines, 2 of 2 TypeScript)', async () => {
    const out = join(root, 'gold');
    const { report, results, label } = await runEval(createDockerSandbox(), { instances: instances(), source: { kind: 'gold' }, repos, out, concurrency: 2, coverage: true, coverageCache: false });
    await writeReportHtml(out, { report, results, title: `swt eval: ${label}` }); // as swt eval does
    const [py, ts] = results;
    expect(results.map((r) => [r.error, r.coverageError])).toEqual([[undefined, undefined], [undefined, undefined]]);
    expect(py.coverage).toMatchObject({
      counter: 'python-trace',
      executableBy: 'reference',
      lines: 13,
      covered: 13,
      dC: 1,
      referenceDC: 1,
      executable: { removed: { 'durations/parse.py': [11, 12, 14] }, added: { 'durations/parse.py': [11, 12, 13, 14, 15, 16, 17, 18, 21, 23] } },
    });
    // chunk.ts line 7 (the loop header) is removed and added; the new test calls chunk once more on both sides.
    expect(ts.coverage).toMatchObject({ counter: 'v8', lines: 2, covered: 2, dC: 1, referenceDC: 1, executable: { removed: { 'src/chunk.ts': [7] }, added: { 'src/chunk.ts': [7] } } });
    expect(report).toMatchObject({ S: 100, W: 100, dC: 100, dC_S: 100, dC_notS: null, dC_instances: 2 });
    expect(report.phases.coverageMs).toBeGreaterThan(0);
    expect(report.phases.testRunsMs).toBeGreaterThan(0);
    expect(report.images.built + report.images.reused).toBe(2);
    expect(JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))).toEqual(report);
  });

  it('empty predictions: ΔC = 0 on every instance that has executable changed lines', async () => {
    const { report, results } = await runEval(createDockerSandbox(), { instances: instances(), source: { kind: 'empty' }, repos, out: join(root, 'empty'), coverage: true });
    expect(results.map((r) => [r.applied, r.coverage?.lines, r.coverage?.dC])).toEqual([
      [false, 13, 0],
      [false, 2, 0],
    ]);
    expect(report).toMatchObject({ W: 0, S: 0, dC: 0, dC_S: null, dC_notS: 0, dC_instances: 2 });
  });

  it('a test of part of the fix: ΔC strictly between, 8 of the 13 lines counted by hand', async () => {
    const [py] = fixtures;
    const preds = [{ instance_id: py.instance.instance_id, model_name_or_path: 'partial', model_patch: appendPatch('tests/test_parse.py', 22, PARTIAL_TEST) }];
    const { results, report } = await runEval(createDockerSandbox(), {
      instances: instances(),
      source: { kind: 'file', predictions: parsePredictions(JSON.stringify(preds)) },
      repos,
      out: join(root, 'partial'),
      coverage: true,
      coverageCache: false,
    });
    expect(results[0]).toMatchObject({ applied: true, success: false, model: 'partial' });
    expect(results[0].tests.find((t) => t.id.endsWith('test_unknown_character'))?.transition).toBe('P2P');
    expect(results[0].coverage).toMatchObject({
      lines: 13,
      covered: 8,
      coveredLines: { removed: { 'durations/parse.py': [11, 12] }, added: { 'durations/parse.py': [11, 12, 13, 14, 15, 16] } },
    });
    expect(results[0].coverage!.dC).toBeCloseTo(8 / 13);
    // ts-chunk had no prediction: it counts with 0.
    expect(report.dC).toBeCloseTo(Math.round((1000 * (8 / 13 + 0)) / 2) / 10);
  });

  it('report.html renders in Chromium: the Table 2/3 summary, one row per instance, both charts drawn', async () => {
    const url = pathToFileURL(join(root, 'gold', 'report.html')).href;
    const shot = join(await artifactsDir(), 'eval-report.png');
    const { value, requested } = await withPage(url, async (page) => {
      const t2 = await page.locator('#table2 tbody tr td').allInnerTexts();
      const t3 = await page.locator('#table3 tbody tr td').allInnerTexts();
      const rows = await page.locator('#instance-table tr.instance').count();
      const bars = async (id: string) => page.locator(`${id} rect.seg`).evaluateAll((els) => els.map((e) => Number(e.getAttribute('width'))));
      const repoBars = await bars('#chart-repos');
      const phaseBars = await bars('#chart-phases');
      await page.locator('#instance-table tr.detail details summary').first().click();
      const patchVisible = await page.locator('#instance-table tr.detail details pre').first().isVisible();
      await page.screenshot({ path: shot, fullPage: true });
      return { t2, t3, rows, repoBars, phaseBars, patchVisible };
    });
    expect(value.t2).toEqual(['gold', '100.0', '100.0', '100.0', '100.0', '100.0']);
    expect(value.t3.slice(0, 4)).toEqual(['gold', '100.0', '100.0', '—']);
    expect(value.rows).toBe(2);
    expect(value.repoBars.length).toBe(2);
    expect(value.repoBars.every((w) => w > 100)).toBe(true);
    expect(value.phaseBars.length).toBeGreaterThanOrEqual(3);
    expect(value.patchVisible).toBe(true);
    // Self-contained: the page asked for nothing but itself.
    expect(requested).toEqual([url]);
  });

  it('--compare lists what each run alone solves, in the terminal and as a page Chromium renders', async () => {
    const { main } = await import('../../src/cli/main.js');
    const out = join(root, 'compare');
    const writes: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => (writes.push(String(c)), true));
    let code: number;
    try {
      code = await main(['node', 'swt', 'eval', '--compare', join(root, 'gold'), join(root, 'partial'), '--out', out]);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(0);
    const text = writes.join('');
    expect(text).toContain(`solved only by gold (2):\n  ${[...ids()].sort().join('\n  ')}`);
    expect(text).toContain('solved only by partial (0): none');
    const url = pathToFileURL(join(out, 'compare.html')).href;
    const { value } = await withPage(url, async (page) => {
      await page.screenshot({ path: join(await artifactsDir(), 'eval-compare.png'), fullPage: true });
      return { onlyA: await page.locator('#only-a li').allInnerTexts(), circles: await page.locator('#chart-overlap circle').count(), t2rows: await page.locator('#table2 tbody tr').count() };
    });
    expect(value).toEqual({ onlyA: [...ids()].sort(), circles: 2, t2rows: 2 });
  });

  it('swt validate --coverage: with golden tests as the reference, and without (every changed code line counts)', async () => {
    const { main } = await import('../../src/cli/main.js');
    const [py] = fixtures;
    const tests = join(root, 'py-tests.patch');
    const fix = join(root, 'py-fix.patch');
    await writeFile(tests, py.instance.test_patch);
    await writeFile(fix, py.instance.patch);
    const json = async (args: string[]) => {
      const writes: string[] = [];
      const spy = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => (writes.push(String(c)), true));
      try {
        expect(await main(['node', 'swt', '--quiet', 'validate', '--repo', py.dir, '--base', py.base, '--tests', tests, '--coverage', ...args, '--json'])).toBe(0);
      } finally {
        spy.mockRestore();
      }
      return JSON.parse(writes.join('').trim().split('\n').pop()!);
    };
    const withReference = await json(['--fix', fix, '--reference-tests', tests]);
    expect(withReference).toMatchObject({ success: true, coverage: { executableBy: 'reference', lines: 13, covered: 13, dC: 1 } });
    // The fix commit as head: X is base..head without the tests. Every changed code line counts:
    // base 11–14 (4) and head 11–23 (13, `else:` included); raised: base 11, 12, 14 and head 11–18, 21, 23.
    const fromHead = await json(['--head', py.head]);
    expect(fromHead).toMatchObject({ success: true, coverage: { executableBy: 'static', lines: 17, covered: 13, referenceDC: null } });
  });

  it('resumes in the same --out: finished instances are kept, a torn row is run again (its coverage from the cache), other settings are refused', async () => {
    const out = join(root, 'empty');
    const rows = (await readFile(join(out, 'results.jsonl'), 'utf8')).trim().split('\n');
    const py = rows.find((r) => r.includes(ids()[0]))!;
    const ts = rows.find((r) => r.includes(ids()[1]))!;
    // A crash while the second row was being written.
    await writeFile(join(out, 'results.jsonl'), `${py}\n${ts.slice(0, 40)}`);
    const { results, resumed } = await runEval(createDockerSandbox(), { instances: instances(), source: { kind: 'empty' }, repos, out, coverage: true });
    expect(resumed).toBe(1);
    expect(JSON.stringify(results[0])).toBe(py);
    // Its golden-test runs are the empty run's: counted once, reused from the cache.
    expect(results[1]).toMatchObject({ instance_id: ids()[1], applied: false, coverage: { lines: 2, dC: 0, runs: 0, reused: 2 } });
    expect((await readFile(join(out, 'results.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(2);
    await expect(runEval(createDockerSandbox(), { instances: instances(), source: { kind: 'empty' }, repos, out })).rejects.toMatchObject({
      code: 'BAD_INPUT',
      message: expect.stringContaining('holds 2 results of another run (empty with coverage'),
    });
  });
});
