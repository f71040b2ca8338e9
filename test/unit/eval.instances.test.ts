import { parseInstances, parsePredictions, repoDirName } from '../../src/eval/instances.js';
import { summarize, type InstanceResult } from '../../src/eval/report.js';

const line = (o: object) => JSON.stringify(o);
const base = { instance_id: 'a__b-1', repo: 'a/b', base_commit: 'abc1234', patch: 'p', test_patch: 't', problem_statement: 'x' };

describe('SWE-bench instances', () => {
  it('accepts test lists as arrays or as JSON strings', () => {
    const text = [
      line({ ...base, FAIL_TO_PASS: ['t1'], PASS_TO_PASS: '["t2", "t3"]' }),
      '',
      line({ ...base, instance_id: 'a__b-2', FAIL_TO_PASS: "['t4']", PASS_TO_PASS: '' }),
    ].join('\n');
    const [a, b] = parseInstances(text);
    expect(a.FAIL_TO_PASS).toEqual(['t1']);
    expect(a.PASS_TO_PASS).toEqual(['t2', 't3']);
    expect(b.FAIL_TO_PASS).toEqual(['t4']);
    expect(b.PASS_TO_PASS).toEqual([]);
  });

  it('names the file and line of a broken row', () => {
    expect(() => parseInstances(`${line(base)}\n{oops`, 'in.jsonl')).toThrow(/in\.jsonl:2: not valid JSON/);
    expect(() => parseInstances(line({ ...base, repo: 'nope' }), 'in.jsonl')).toThrow(/in\.jsonl:1: repo: expected owner\/name/);
    expect(() => parseInstances(`${line(base)}\n${line(base)}`)).toThrow(/duplicate instance_id/);
  });

  it('reads predictions keyed by instance and maps repo names to directories', () => {
    const preds = parsePredictions(line({ instance_id: 'a__b-1', model_patch: null, model_name_or_path: 'm' }));
    expect(preds.get('a__b-1')?.model_patch).toBe('');
    expect(repoDirName('pillarjs/path-to-regexp')).toBe('pillarjs__path-to-regexp');
  });
});

describe('summary metrics', () => {
  const r = (over: Partial<InstanceResult>): InstanceResult => ({
    instance_id: 'x', applied: true, success: false, likelyCorrect: false, tests: [], durationMs: 1, ...over,
  });
  it('computes W, S, F2X, F2P, P2P over all instances, errors counting as misses', () => {
    const report = summarize([
      r({ success: true, tests: [{ id: 'a', base: 'fail', head: 'pass', transition: 'F2P', flaky: false }] }),
      r({ tests: [{ id: 'b', base: 'pass', head: 'pass', transition: 'P2P', flaky: false }] }),
      r({ tests: [{ id: 'c', base: 'fail', head: 'pass', transition: 'F2P', flaky: true }] }),
      r({ applied: false, error: 'missing commit' }),
    ]);
    // A flaky test counts for nothing but the flaky count.
    expect(report).toMatchObject({ instances: 4, errors: 1, W: 75, S: 25, F2X: 25, F2P: 25, P2P: 25, dC: null, dC_S: null, dC_notS: null, flaky: { tests: 1, instances: 1 } });
  });
  it('ignores pre-existing transitions (the same without the predicted tests)', () => {
    const report = summarize([
      r({ tests: [{ id: 'own', base: 'fail', head: 'pass', transition: 'F2P', flaky: false, preexisting: true }, { id: 'ours', base: 'pass', head: 'pass', transition: 'P2P', flaky: false }] }),
    ]);
    expect(report).toMatchObject({ F2X: 0, F2P: 0, P2P: 100 });
  });
  it('rounds to one decimal and handles an empty run', () => {
    expect(summarize([r({ success: true }), r({}), r({})]).S).toBe(33.3);
    expect(summarize([])).toMatchObject({ instances: 0, errors: 0, W: 0, S: 0, F2X: 0, F2P: 0, P2P: 0, dC: null, dC_instances: 0, images: { built: 0, reused: 0 } });
  });
});
