/**
 * ΔC on the real example instances (real containers): sqlparse counts with Python's trace, send
 * (JavaScript, mocha), cookie (TypeScript, vitest) and path-to-regexp (TypeScript, jest + ts-jest)
 * with V8 coverage mapped back through source maps.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePredictions } from '../../src/eval/instances.js';
import { runEval } from '../../src/eval/runEval.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';
import { examplesDir, loadExampleInstances } from '../helpers/examples.js';

/**
 * sqlparse: a test that splits two plain statements. Counted by hand in
 * sqlparse/engine/statement_splitter.py; X* (what tests/test_split.py or the golden tests execute):
 *   base 124: the `elif (ttype not in (T.Whitespace, T.Comment.Single,` line the fix modifies
 *   head 66, 67, 68 (`if self._seen_begin and (ttype is T.Keyword or …) and unified in (…)`; the
 *        tuple's continuation lines 69–70 are one constant, no line event), 71, 72, 73 (its body),
 *        135 (the modified `elif`)                                                            → 8 lines
 * 'SELECT 1; SELECT 2;' never sees BEGIN: each keyword token reaches head 66 and stops there
 * (`self._seen_begin` is false), every token goes through base 124 / head 135. Raised: base 124,
 * head 66 and 135                                                                          → 3 / 8
 */
const SQLPARSE_PARTIAL = ['', '', 'def test_split_two_plain_statements():', "    assert sqlparse.split('SELECT 1; SELECT 2;') == ['SELECT 1;', 'SELECT 2;']"];

/**
 * path-to-regexp: a new spec file compiling only `:id*`, an unprefixed repeated parameter. Counted
 * by hand in src/index.ts (V8 blocks, mapped from ts-jest's output); X*:
 *   base 566 `route += \`(${token.pattern})${token.modifier}\`` (the line the fix replaces)
 *   head 566 `if (token.modifier === "+" || token.modifier === "*") {`, 567 its `route += …`,
 *        568 `} else {`, 569 the else's `route += …`, 570 `}`                                → 6 lines
 * The spec file is new, so without it nothing runs (T_R is empty) and "raised" means "run at all".
 * `:id*` takes base 566, and at head 566, the then-block 567, and 568, which lies in neither
 * branch's block whole and so takes the count of the block around it; not 569–570 (the else-block)
 *                                                                                          → 4 / 6
 */
const PATH_TO_REGEXP_PARTIAL_SPEC = [
  'import { pathToRegexp } from "./index";',
  '',
  'describe("swt partial", () => {',
  '  it("matches a repeated unprefixed parameter", () => {',
  '    expect(pathToRegexp(":id*").exec("a/b")).not.toBeNull();',
  '  });',
  '});',
];

function appendPatch(file: string, afterLine: number, lines: string[]): string {
  return [`diff --git a/${file} b/${file}`, `--- a/${file}`, `+++ b/${file}`, `@@ -${afterLine},0 +${afterLine + 1},${lines.length} @@`, ...lines.map((l) => `+${l}`), ''].join('\n');
}
function newFilePatch(file: string, lines: string[]): string {
  return [`diff --git a/${file} b/${file}`, 'new file mode 100644', '--- /dev/null', `+++ b/${file}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`), ''].join('\n');
}

describe('ΔC on the real example instances (real containers)', () => {
  const instances = loadExampleInstances();
  const repos = join(examplesDir(), 'repos');
  const byRepo = (repo: string) => instances.find((i) => i.repo === repo)!;
  let out: string;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'swt-examples-cov-'));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('gold predictions: S = 100 and every instance’s ΔC is the golden tests’ own coverage of the fix', async () => {
    const { results, report } = await runEval(createDockerSandbox(), { instances, source: { kind: 'gold' }, repos, out: join(out, 'gold'), concurrency: 2, coverage: true, coverageCache: false });
    const figures: Record<string, unknown> = {};
    for (const r of results) {
      expect({ id: r.instance_id, error: r.error, coverageError: r.coverageError, success: r.success }).toEqual({ id: r.instance_id, error: undefined, coverageError: undefined, success: true });
      expect(r.coverage!.lines).toBeGreaterThan(0);
      expect(r.coverage!.dC).toBe(r.coverage!.referenceDC);
      figures[r.repo!] = `${r.coverage!.covered}/${r.coverage!.lines}`;
    }
    process.stderr.write(`[examples] gold ΔC per instance (covered/executable): ${JSON.stringify(figures)}; dC ${report.dC}\n`);
    expect(figures).toMatchObject({ 'andialbrecht/sqlparse': '8/8', 'pillarjs/path-to-regexp': '4/6' });
    expect(results.find((r) => r.repo === 'jshttp/cookie')!.coverage!.counter).toBe('v8');
    expect(results.find((r) => r.repo === 'andialbrecht/sqlparse')!.coverage!.counter).toBe('python-trace');
    const mean = results.reduce((a, r) => a + r.coverage!.dC!, 0) / results.length;
    expect(report).toMatchObject({ S: 100, dC: Math.round(1000 * mean) / 10, dC_S: Math.round(1000 * mean) / 10, dC_notS: null, dC_instances: instances.length });
  });

  it('empty predictions: ΔC = 0 on every instance', async () => {
    const { results, report } = await runEval(createDockerSandbox(), { instances, source: { kind: 'empty' }, repos, out: join(out, 'empty'), concurrency: 2, coverage: true });
    for (const r of results) expect({ id: r.instance_id, dC: r.coverage?.dC, counts: (r.coverage?.lines ?? 0) > 0 }).toEqual({ id: r.instance_id, dC: 0, counts: true });
    expect(report).toMatchObject({ W: 0, S: 0, dC: 0, dC_instances: instances.length });
  });

  it('tests of part of the fix: ΔC strictly between, as counted by hand (sqlparse 3/8 with trace, path-to-regexp 4/6 with V8)', async () => {
    const sql = byRepo('andialbrecht/sqlparse');
    const ptr = byRepo('pillarjs/path-to-regexp');
    const preds = [
      { instance_id: sql.instance_id, model_name_or_path: 'partial', model_patch: appendPatch('tests/test_split.py', 256, SQLPARSE_PARTIAL) },
      { instance_id: ptr.instance_id, model_name_or_path: 'partial', model_patch: newFilePatch('src/swt-partial.spec.ts', PATH_TO_REGEXP_PARTIAL_SPEC) },
    ];
    const { results } = await runEval(createDockerSandbox(), {
      instances: [sql, ptr],
      source: { kind: 'file', predictions: parsePredictions(preds.map((p) => JSON.stringify(p)).join('\n')) },
      repos,
      out: join(out, 'partial'),
      concurrency: 2,
      coverage: true,
      coverageCache: false,
    });
    const [s, p] = results;
    expect([s.error, p.error, s.coverageError, p.coverageError]).toEqual([undefined, undefined, undefined, undefined]);
    expect(s.coverage).toMatchObject({ lines: 8, covered: 3, coveredLines: { removed: { 'sqlparse/engine/statement_splitter.py': [124] }, added: { 'sqlparse/engine/statement_splitter.py': [66, 135] } } });
    expect(p.coverage).toMatchObject({ lines: 6, covered: 4, coveredLines: { removed: { 'src/index.ts': [566] }, added: { 'src/index.ts': [566, 567, 568] } } });
    process.stderr.write(`[examples] partial ΔC: sqlparse ${s.coverage!.covered}/${s.coverage!.lines}, path-to-regexp ${p.coverage!.covered}/${p.coverage!.lines}\n`);
  });
});
