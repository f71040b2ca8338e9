import { summarize, type InstanceResult } from '../../src/eval/report.js';
import { compareEvalRuns, renderCompareHtml, renderCompareText } from '../../src/report/compare.js';
import { renderReportHtml } from '../../src/report/html.js';

const row = (over: Partial<InstanceResult>): InstanceResult => ({ instance_id: 'x', repo: 'o/r', applied: true, success: false, likelyCorrect: false, tests: [], durationMs: 1200, ...over });

describe('report.html', () => {
  const results = [
    row({
      instance_id: 'o__r-1',
      success: true,
      model: 'gpt-x',
      testPatch: '+<script>alert(1)</script>',
      tests: [{ id: 't::a', base: 'fail', head: 'pass', transition: 'F2P', flaky: false, baseFailure: 'AssertionError: <b>1</b> != 2' }],
      coverage: { counter: 'python-trace', dC: 0.5, referenceDC: 1, lines: 2, covered: 1, executableBy: 'reference', executable: { removed: { 'a.py': [3] }, added: { 'a.py': [4] } }, coveredLines: { removed: {}, added: { 'a.py': [4] } }, runs: 4, reused: 0, durationMs: 10 },
      phases: { imageBuildMs: 1000, installMs: 2000, testRunsMs: 3000, generationMs: 0, coverageMs: 4000 },
    }),
    row({ instance_id: 'o__q-2', repo: 'o/q', model: 'gpt-x', applied: false, error: 'install command `npm ci` exited with 1' }),
  ];
  const html = renderReportHtml({ title: 'swt eval: file:abc', report: summarize(results), results, generatedAt: '2026-01-01T00:00:00Z' });

  it('is one page with nothing to fetch: inline style, inline SVG, no script, no external URL', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).toContain('<svg id="chart-repos"');
    expect(html).toContain('<svg id="chart-phases"');
  });

  it('escapes what the predictions and the runs wrote', () => {
    expect(html).toContain('+&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('AssertionError: &lt;b&gt;1&lt;/b&gt; != 2');
  });

  it('has the Table 2 and Table 3 rows under the model’s name, and one row per instance', () => {
    expect(html).toMatch(/<table id="table2"[^]*<td>gpt-x<\/td><td class="num">50\.0<\/td><td class="num">50\.0<\/td>/);
    expect(html).toMatch(/<table id="table3"[^]*<td>gpt-x<\/td><td class="num">50\.0<\/td><td class="num">50\.0<\/td><td class="num">—<\/td><td class="num">1<\/td>/);
    expect(html.match(/<tr class="instance"/g)).toHaveLength(2);
    expect(html).toContain('50.0% <span class="muted">(1/2)</span>');
    expect(html).toContain('<span class="miss">3</span>');
    expect(html).toContain('<span class="hit">4</span>');
  });
});

describe('comparing two runs', () => {
  const a = { label: 'run-a', results: [row({ instance_id: '1', success: true }), row({ instance_id: '2', success: true }), row({ instance_id: '3' })] };
  const b = { label: 'run-b', results: [row({ instance_id: '2', success: true }), row({ instance_id: '3', success: true }), row({ instance_id: '4', success: true })] };
  const c = compareEvalRuns({ ...a, report: summarize(a.results) }, { ...b, report: summarize(b.results) });

  it('lists what each run alone solves and what both do (paper Fig. 6)', () => {
    expect(c).toMatchObject({ names: ['run-a', 'run-b'], onlyA: ['1'], onlyB: ['3', '4'], both: ['2'] });
    const text = renderCompareText(c);
    expect(text).toContain('solved only by run-a (1):\n  1');
    expect(text).toContain('solved only by run-b (2):\n  3\n  4');
    expect(text).toContain('solved by both: 1; by either: 4');
    expect(text.split('\n')[1]).toMatch(/^run-a\s+100\.0\s+66\.7/);
  });

  it('renders a page with both runs in the tables and the overlap drawn', () => {
    const html = renderCompareHtml(c);
    expect(html.match(/<table id="table2"[^]*?<\/table>/)![0].match(/<tr>/g)).toHaveLength(3);
    expect(html).toContain('<svg id="chart-overlap"');
    expect(html.match(/<tr class="instance"/g)).toHaveLength(4);
  });

  it('two runs of the same model get told apart', () => {
    const same = (label: string) => ({ label, report: summarize([]), results: [row({ model: 'm' })] });
    expect(compareEvalRuns(same('x'), same('y')).names).toEqual(['m (A)', 'm (B)']);
  });
});
