/**
 * Real SWE-bench Verified instances (fixtures/swebench: snapshots of the upstream trees with the
 * harness's own lists), the three cheapest of bench:swebench, through `swt eval` with no image,
 * install or test command: flask-5014 (2023), sympy-20590 (2020, the benchmark names its tests
 * without their file) and requests-2931 (2015: its pins resolve as of when the Python that runs it,
 * 3.9 offline, had been out for 60 days; pytest 2.8.1, pinned, runs through swt's old-pytest
 * plugin). Gold: S, and the F→P tests exactly the benchmark's FAIL_TO_PASS. Empty: S = 0.
 * Incorrect patches: requests-2931's (SWE-agent's, graded unresolved with its F→P failing),
 * flask-5014's and sympy-20590's (written for the fixture, their F→P failing in plain Docker runs): S = 0.
 * The rest of the fixture runs in `npm run bench:swebench`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newF2P, sameF2P } from '../../src/eval/benchmarkLists.js';
import { parseInstances } from '../../src/eval/instances.js';
import { runEval } from '../../src/eval/runEval.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

const DIR = join(process.cwd(), 'fixtures', 'swebench');
const CHEAPEST = ['pallets__flask-5014', 'psf__requests-2931', 'sympy__sympy-20590'];
const instances = parseInstances(readFileSync(join(DIR, 'instances.jsonl'), 'utf8'), 'fixtures/swebench/instances.jsonl').filter((i) => CHEAPEST.includes(i.instance_id));

describe('swt eval on real SWE-bench Verified instances, with no configuration (real containers, PyPI)', () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'swt-swebench-'));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it("gold tests: S on each, the F→P tests exactly the benchmark's FAIL_TO_PASS", async () => {
    expect(instances.map((i) => i.instance_id).sort()).toEqual(CHEAPEST);
    const { results, report } = await runEval(createDockerSandbox(), { instances, source: { kind: 'gold' }, repos: join(DIR, 'repos'), out: join(out, 'gold'), concurrency: 1 });
    for (const r of results) {
      const inst = instances.find((i) => i.instance_id === r.instance_id)!;
      expect({ id: r.instance_id, error: r.error, success: r.success, f2p: newF2P(r) }).toEqual({ id: r.instance_id, error: undefined, success: true, f2p: expect.any(Array) });
      expect({ id: r.instance_id, same: sameF2P(newF2P(r), inst.FAIL_TO_PASS) }).toEqual({ id: r.instance_id, same: true });
    }
    // The 2015 commit: its dependencies resolved as of Python 3.9's date, and the result says so.
    const requests = results.find((r) => r.instance_id === 'psf__requests-2931')!;
    expect(requests.warnings).toContainEqual(expect.stringMatching(/^swt: dependencies resolved as of 2020-12-04 \(uv --exclude-newer 2020-12-04T00:00:00Z\), not the base commit date 2015-12-16: Python 3\.9\.\d+ came out after it/));
    expect(report).toMatchObject({ instances: 3, errors: 0, S: 100 });
  }, 1_800_000);

  it('empty predictions: S = 0', async () => {
    const { report } = await runEval(createDockerSandbox(), { instances, source: { kind: 'empty' }, repos: join(DIR, 'repos'), out: join(out, 'empty'), concurrency: 1 });
    expect(report).toMatchObject({ instances: 3, errors: 0, W: 0, S: 0 });
  }, 900_000);

  it("incorrect patches (the F→P failing under each, in the harness's report or a plain Docker run) as the fix: S = 0, the benchmark's F→P tests still failing", async () => {
    const wrong = instances.filter((i) => i.incorrect_patch).map((i) => ({ ...i, patch: i.incorrect_patch! }));
    expect(wrong.map((i) => i.instance_id).sort()).toEqual(CHEAPEST);
    const { results, report } = await runEval(createDockerSandbox(), { instances: wrong, source: { kind: 'gold' }, repos: join(DIR, 'repos'), out: join(out, 'incorrect'), concurrency: 1 });
    expect(report).toMatchObject({ instances: 3, errors: 0, S: 0 });
    const row = (id: string) => results.find((r) => r.instance_id === id)!;
    expect(row('psf__requests-2931').tests.find((t) => t.id === 'test_requests.py::TestRequests::test_binary_put')).toMatchObject({ transition: 'F2F' });
    expect(row('pallets__flask-5014').tests.find((t) => t.id === 'tests/test_blueprints.py::test_empty_name_not_allowed')).toMatchObject({ transition: 'F2F' });
    // Symbol refuses new attributes under it, but every instance keeps its __dict__.
    expect(row('sympy__sympy-20590').tests.filter((t) => /test_immutable\b/.test(t.id))).toEqual([expect.objectContaining({ transition: 'F2F' })]);
  }, 900_000);
});
