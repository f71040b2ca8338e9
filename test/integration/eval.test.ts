/** swt eval on the project's own fixture instances (no ../shared needed), on real containers. */
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFixtureRepo, type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { parseInstances, parsePredictions, repoDirName } from '../../src/eval/instances.js';
import { runEval } from '../../src/eval/runEval.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';

describe('swt eval on fixture instances (real containers)', () => {
  let fixtures: FixtureRepo[];
  let root: string;
  let repos: string;

  beforeAll(async () => {
    fixtures = [await createFixtureRepo('py-durations'), await createFixtureRepo('ts-chunk')];
    root = await mkdtemp(join(tmpdir(), 'swt-eval-'));
    repos = join(root, 'repos');
    await rm(repos, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(repos));
    for (const f of fixtures) await symlink(f.dir, join(repos, repoDirName(f.instance.repo)));
  });
  afterAll(async () => {
    await Promise.all([...fixtures.map((f) => f.cleanup()), rm(root, { recursive: true, force: true })]);
    expect(containersOfOursOnceRetired()).toBe('');
  });

  const instances = () => parseInstances(fixtures.map((f) => JSON.stringify(f.instance)).join('\n'));

  it('gold predictions: S = 100, F2P = 100, rows and report on disk', async () => {
    const out = join(root, 'gold');
    const { report, results } = await runEval(createDockerSandbox(), { instances: instances(), source: { kind: 'gold' }, repos, out, concurrency: 2 });
    expect(report).toMatchObject({ instances: 2, errors: 0, W: 100, S: 100, F2X: 100, F2P: 100, P2P: 100, dC: null, dC_S: null, dC_notS: null });
    expect(results.map((r) => r.likelyCorrect)).toEqual([true, true]);
    expect(JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))).toEqual(report);
  });

  it('predictions in the custom diff format apply (W) and reproduce (S)', async () => {
    const [py, ts] = fixtures;
    const preds = [
      { instance_id: py.instance.instance_id, model_patch: 'I add a test.\n```\ndiff\ntests/test_parse.py\ninsert\nEOF\ndef test_combined_units():\n    assert parse_duration("1h30m") == 5400\n```' },
      {
        instance_id: ts.instance.instance_id,
        model_patch: "diff\nsrc/chunk.spec.ts\ninsert\n8\n  it('keeps the remainder', () => {\n    expect(chunk([1, 2, 3], 2)).toEqual([[1, 2], [3]]);\n  });\nend diff",
      },
    ];
    const { report, results } = await runEval(createDockerSandbox(), {
      instances: instances(),
      source: { kind: 'file', predictions: parsePredictions(preds.map((p) => JSON.stringify(p)).join('\n')) },
      repos,
      out: join(root, 'custom'),
    });
    expect(results.map((r) => r.error)).toEqual([undefined, undefined]);
    expect(report).toMatchObject({ W: 100, S: 100, F2P: 100 });
    expect(results[0].testPatch).toContain('+++ b/tests/test_parse.py');
  });

  it('bad rows become errors or misses, and the run goes on', async () => {
    const [py, ts] = fixtures;
    const lines = [
      JSON.stringify({ ...py.instance, instance_id: 'missing-commit', base_commit: 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef' }),
      JSON.stringify({ ...py.instance, instance_id: 'missing-repo', repo: 'nobody/nothing' }),
      JSON.stringify({ ...ts.instance, instance_id: 'broken-install', install: 'npm install --no-such-flag-exists && exit 3' }),
      JSON.stringify(py.instance),
    ];
    const preds = [{ instance_id: py.instance.instance_id, model_patch: 'diff --git a/x b/x\n@@ garbage' }];
    await writeFile(join(root, 'bad.jsonl'), lines.join('\n'));
    const { results, report } = await runEval(createDockerSandbox(), {
      instances: parseInstances(lines.join('\n')),
      source: { kind: 'file', predictions: new Map([...parsePredictions(preds.map((p) => JSON.stringify(p)).join('\n')), ['missing-commit', { instance_id: 'missing-commit', model_patch: py.instance.test_patch }], ['missing-repo', { instance_id: 'missing-repo', model_patch: py.instance.test_patch }], ['broken-install', { instance_id: 'broken-install', model_patch: ts.instance.test_patch }]]) },
      repos,
      out: join(root, 'bad'),
    });
    const byId = Object.fromEntries(results.map((r) => [r.instance_id, r]));
    expect(byId['missing-commit'].error).toMatch(/unknown revision/);
    expect(byId['missing-repo'].error).toMatch(/not found/);
    expect(byId['broken-install'].error).toMatch(/install/i);
    expect(byId[py.instance.instance_id]).toMatchObject({ applied: false, success: false });
    expect(byId[py.instance.instance_id].error).toBeUndefined();
    expect(report).toMatchObject({ instances: 4, errors: 3, W: 0, S: 0 });
  });
});
