import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { etaText } from '../../src/cli/progress.js';
import { defaultConcurrency } from '../../src/eval/concurrency.js';
import { parsePredictions } from '../../src/eval/instances.js';
import { PhaseClock } from '../../src/eval/phases.js';
import { summarize, type InstanceResult } from '../../src/eval/report.js';
import { finishedRows, openRun, predictionsDigest } from '../../src/eval/resume.js';
import { COVERAGE_MARKER } from '../../src/coverage/instrument.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';

const row = (over: Partial<InstanceResult>): InstanceResult => ({ instance_id: 'x', applied: true, success: false, likelyCorrect: false, tests: [], durationMs: 1, ...over });
const cov = (dC: number | null, lines = 4) => ({ counter: 'v8' as const, dC, referenceDC: 1, lines, covered: dC === null ? 0 : Math.round(dC * lines), executableBy: 'reference' as const, executable: { removed: {}, added: {} }, coveredLines: { removed: {}, added: {} }, runs: 4, reused: 0, durationMs: 1 });

describe('summarize: ΔC as SWT-bench aggregates it (Table 3)', () => {
  it('averages the instances’ ΔC over those with executable lines, and over those with and without S', () => {
    const r = summarize([
      row({ instance_id: 'a', success: true, coverage: cov(1) }),
      row({ instance_id: 'b', success: true, coverage: cov(0.5) }),
      row({ instance_id: 'c', coverage: cov(0.25) }),
      row({ instance_id: 'd', applied: false, coverage: cov(0) }), // nothing applied, but the instance counts with 0
      row({ instance_id: 'e', coverage: cov(null, 0) }), // no executable line: left out
      row({ instance_id: 'f', error: 'install failed' }),
    ]);
    expect(r).toMatchObject({ dC: 43.8, dC_S: 75, dC_notS: 12.5, dC_instances: 4 });
  });
  it('is null when coverage was not measured, and when nothing counts', () => {
    expect(summarize([row({})])).toMatchObject({ dC: null, dC_S: null, dC_notS: null });
    expect(summarize([row({ coverageError: 'timed out' })])).toMatchObject({ dC: null, dC_instances: 0 });
  });
  it('adds up phase times and tells built images from reused ones', () => {
    const phases = { imageBuildMs: 10, installMs: 20, testRunsMs: 30, generationMs: 0, coverageMs: 5 };
    const r = summarize([
      row({ phases, environment: { image: 'swt-env:a', built: true } }),
      row({ phases, environment: { image: 'swt-env:a', built: true } }), // built concurrently, once
      row({ phases, environment: { image: 'swt-env:b', built: false } }),
      row({}),
    ]);
    expect(r.phases).toEqual({ imageBuildMs: 30, installMs: 60, testRunsMs: 90, generationMs: 0, coverageMs: 15 });
    expect(r.images).toEqual({ built: 1, reused: 2 });
  });
});

describe('predictions as SWE-bench ships them', () => {
  const a = { instance_id: 'a__b-1', model_name_or_path: 'm', model_patch: 'diff a' };
  const b = { instance_id: 'a__b-2', model_name_or_path: 'm', model_patch: null };
  it('reads JSONL, a JSON array and a JSON object keyed by instance_id alike', () => {
    for (const text of [`${JSON.stringify(a)}\n${JSON.stringify(b)}\n`, JSON.stringify([a, b], null, 2), JSON.stringify([a, b]), JSON.stringify({ 'a__b-1': { model_patch: 'diff a', model_name_or_path: 'm' }, 'a__b-2': b })]) {
      const p = parsePredictions(text, 'preds');
      expect([...p.keys()]).toEqual(['a__b-1', 'a__b-2']);
      expect(p.get('a__b-1')).toEqual(a);
      expect(p.get('a__b-2')?.model_patch).toBe('');
    }
  });
  it('a bad entry or a duplicate is a one-line error naming where', () => {
    expect(() => parsePredictions(JSON.stringify([a, { model_patch: 'x' }]), 'p.json')).toThrow(/p\.json\[1\]: instance_id/);
    expect(() => parsePredictions(`${JSON.stringify(a)}\n${JSON.stringify(a)}`, 'p.jsonl')).toThrow(/p\.jsonl: two predictions for a__b-1/);
    expect(() => parsePredictions('[{', 'p.json')).toThrow(/p\.json: not valid JSON/);
  });
});

describe('resuming', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'swt-resume-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps the rows that parse and drops a torn last line', () => {
    const rows = finishedRows(`${JSON.stringify(row({ instance_id: 'a' }))}\n${JSON.stringify(row({ instance_id: 'b' }))}\n{"instance_id":"c","app`);
    expect([...rows.keys()]).toEqual(['a', 'b']);
  });

  it('reuses a run of the same settings, refuses another, and starts over when fresh', async () => {
    const settings = { predictions: 'gold', coverage: true, reruns: 0 };
    expect((await openRun(dir, settings, false)).size).toBe(0);
    await writeFile(join(dir, 'results.jsonl'), `${JSON.stringify(row({ instance_id: 'a' }))}\n{"torn`);
    expect([...(await openRun(dir, settings, false)).keys()]).toEqual(['a']);
    expect(await readFile(join(dir, 'results.jsonl'), 'utf8')).toBe(`${JSON.stringify(row({ instance_id: 'a' }))}\n`);
    await expect(openRun(dir, { ...settings, coverage: false }, false)).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('holds 1 results of another run (gold with coverage, reruns 0)') });
    expect((await openRun(dir, { ...settings, coverage: false }, true)).size).toBe(0);
    expect(await readFile(join(dir, 'results.jsonl'), 'utf8')).toBe('');
  });

  it('tells prediction files apart by content', () => {
    const p1 = new Map([['a', { model_patch: 'x' }]]);
    const p2 = new Map([['a', { model_patch: 'y' }]]);
    expect(predictionsDigest(p1)).not.toBe(predictionsDigest(p2));
    expect(predictionsDigest(p1)).toBe(predictionsDigest(new Map(p1)));
  });
});

describe('concurrency and ETA', () => {
  it('defaults to what the cores and the memory allow, at least one', () => {
    const GiB = 1024 ** 3;
    expect(defaultConcurrency({ cpus: 2, memoryBytes: 23 * GiB })).toBe(2);
    expect(defaultConcurrency({ cpus: 16, memoryBytes: 24 * GiB })).toBe(4); // 3 containers × 2 GiB each
    expect(defaultConcurrency({ cpus: 8, memoryBytes: 2 * GiB })).toBe(1);
    expect(defaultConcurrency({ cpus: 8, memoryBytes: 24 * GiB }, 1 * GiB)).toBe(8);
  });
  it('estimates the time left from the pace so far', () => {
    expect(etaText(60_000, 2, 6)).toBe('2m 00s');
    expect(etaText(10_000, 5, 6)).toBe('2s');
    expect(etaText(0, 0, 6)).toBe('?');
  });
});

describe('PhaseClock', () => {
  /**
   * A sandbox that takes the given times on a clock of the test's own, in place of Docker: what is
   * under test is the booking, so the figures are exact and no test waits.
   */
  let now = 0;
  const clockNow = () => now;
  function slowSandbox(env: Partial<Environment>): Sandbox {
    const wait = async (ms: number) => {
      await Promise.resolve();
      now += ms;
    };
    return {
      async ensureEnvironment(_spec, onProgress) {
        await wait(30);
        onProgress?.('installing dependencies: npm ci');
        await wait(60);
        return { image: 'swt-env:k', key: 'k', baseImage: 'node:22', snapshotRev: 'r', cached: false, buildMs: 90, ...env };
      },
      async run() {
        await wait(100);
        return { exitCode: 0, timedOut: false, oomKilled: false, output: '', files: {}, durationMs: 100 };
      },
      openSession: () => Promise.reject(new Error('not used')),
    };
  }
  const env = { repo: '.', rev: 'r', baseImage: 'node:22', install: 'npm ci' };
  const req = (command: string) => ({ env: {} as Environment, repo: '.', state: { rev: 'r', patches: [] }, command });

  it('books environment builds (image, then install), test runs, coverage runs and generation to the instance', async () => {
    const clock = new PhaseClock(slowSandbox({}), clockNow);
    const { times, environment } = await clock.instance(async () => {
      await clock.generation(async () => {
        await clock.sandbox.ensureEnvironment(env);
        await clock.sandbox.run(req('npx vitest run a.ts'));
      });
      await clock.sandbox.run(req('npx vitest run a.ts'));
      await clock.sandbox.run(req(`export ${COVERAGE_MARKER}'["a.ts"]'; npx vitest run a.ts`));
    });
    expect(environment).toEqual({ image: 'swt-env:k', built: true });
    // The generation's environment build is booked as build and install, not as generation; its
    // run is generation, not a test run.
    expect(times).toEqual({ imageBuildMs: 30, installMs: 60, testRunsMs: 100, coverageMs: 100, generationMs: 100 });
  });

  it('a cached environment is all lookup: no install time, not built', async () => {
    const clock = new PhaseClock(slowSandbox({ cached: true }), clockNow);
    const { times, environment } = await clock.instance(() => clock.sandbox.ensureEnvironment(env));
    expect(environment).toEqual({ image: 'swt-env:k', built: false });
    expect(times).toMatchObject({ installMs: 0, imageBuildMs: 90 });
  });
});
