import { baselineAtBase, baselineKey, hasBaseline } from '../../src/pipeline/baselineRuns.js';
import type { RunResult } from '../../src/results/types.js';

const result = (over: Partial<RunResult> = {}): RunResult => ({ tests: [{ id: 't', outcome: 'passed' }], fileErrors: [], timedOut: false, exitCode: 0, output: '', durationMs: 1, ...over }) as RunResult;

describe('the base baseline kept per process', () => {
  it('runs once per key: the same image, revision, files, runner and limits answer from the first run', async () => {
    const key = baselineKey('img:1', 'rev-a', ['t.py'], { kind: 'pytest' }, { timeoutMs: 1 });
    let runs = 0;
    const run = async () => (runs++, result());
    expect(hasBaseline(key)).toBe(false);
    const first = await baselineAtBase(key, run);
    expect(hasBaseline(key)).toBe(true);
    expect(await baselineAtBase(key, run)).toBe(first);
    expect(runs).toBe(1);
    // Anything else different is another run.
    for (const other of [baselineKey('img:2', 'rev-a', ['t.py'], { kind: 'pytest' }, { timeoutMs: 1 }), baselineKey('img:1', 'rev-b', ['t.py'], { kind: 'pytest' }, { timeoutMs: 1 }), baselineKey('img:1', 'rev-a', ['u.py'], { kind: 'pytest' }, { timeoutMs: 1 }), baselineKey('img:1', 'rev-a', ['t.py'], { kind: 'pytest', env: { TZ: 'UTC' } }, { timeoutMs: 1 }), baselineKey('img:1', 'rev-a', ['t.py'], { kind: 'pytest' }, { timeoutMs: 2 })]) {
      await baselineAtBase(other, run);
    }
    expect(runs).toBe(6);
  });

  it.each([
    ['timed out', { timedOut: true, exitCode: null }],
    ['past its disk limit', { diskLimit: true }],
    ['killed', { exitCode: 137 }],
    ['terminated', { exitCode: 143 }],
  ])('keeps no run that was cut short (%s), nor a failed one', async (_why, over) => {
    const key = baselineKey('img:1', `rev-${_why}`, ['t.py'], {}, {});
    await baselineAtBase(key, async () => result(over as Partial<RunResult>));
    await new Promise((r) => setImmediate(r));
    expect(hasBaseline(key)).toBe(false);
    const failed = baselineKey('img:1', `rev-${_why}-throws`, ['t.py'], {}, {});
    await expect(baselineAtBase(failed, async () => Promise.reject(new Error('engine gone')))).rejects.toThrow('engine gone');
    await new Promise((r) => setImmediate(r));
    expect(hasBaseline(failed)).toBe(false);
  });

  it('keeps the newest 200 keys', async () => {
    const first = baselineKey('lru', 'r0', [], {}, {});
    await baselineAtBase(first, async () => result());
    for (let i = 1; i <= 200; i++) await baselineAtBase(baselineKey('lru', `r${i}`, [], {}, {}), async () => result());
    expect(hasBaseline(first)).toBe(false);
    expect(hasBaseline(baselineKey('lru', 'r200', [], {}, {}))).toBe(true);
  });
});
