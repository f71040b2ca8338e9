import { runTests, runTestsKept } from '../../src/harness/runTests.js';
import { roundPlan } from '../../src/harness/rounds.js';
import { runnerFromCommand } from '../../src/harness/runners.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import type { RunResult } from '../../src/results/types.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

// vitest's confirmation rounds inside the first run (src/ecosystems/node/vitestRounds.ts), on real
// vitest 3, 4 and 5 from the npm registry in real containers. vitest 3 and 4 hold them in the
// worker that ran the file (the harness's test runner: its round files are in the container);
// vitest 5, which has no `vitest/runners`, runs them through its API in new workers. Either way a
// round runs only the tests the patch adds, from a new module state, re-drawing what the module
// drew at import; the run's own report is what it is without rounds; a round's console output is
// not in the run's.

const MODULE = 'export const calls = [];\nexport const drawn = Math.random();\n';
const OLD = "import { it, expect } from 'vitest';\nimport { calls } from '../src/state.js';\n\nit('existing', () => {\n  expect(calls).toEqual([]);\n});\n";
/** The test file once the "test patch" is in: what it adds is the round's tests. */
const NEW = [
  "import fs from 'node:fs';",
  "import { it, expect } from 'vitest';",
  "import { calls, drawn } from '../src/state.js';",
  '',
  "it('existing', () => {",
  '  expect(calls).toEqual([]);',
  '});',
  '',
  "it('sees a fresh module state', () => {",
  '  calls.push(1);',
  '  expect(calls).toEqual([1]);',
  '});',
  '',
  "it('draws afresh at import', () => {",
  "  const seen = fs.existsSync('/tmp/swt-draws') ? fs.readFileSync('/tmp/swt-draws', 'utf8').split(' ') : [];",
  "  fs.appendFileSync('/tmp/swt-draws', `${drawn} `);",
  '  expect(seen).not.toContain(String(drawn));',
  '});',
  '',
  "it('logs a marker', () => {",
  "  console.log('swt-log-marker');",
  '});',
  '',
].join('\n');

const FILES = ['test/state.test.js'];
const RUNNER = runnerFromCommand('npx vitest run {files}');
const outcomes = (r: RunResult) => Object.fromEntries(r.tests.map((t) => [t.id.replace('test/state.test.js > ', ''), t.outcome]));
const ADDED = { 'sees a fresh module state': 'passed', 'draws afresh at import': 'passed', 'logs a marker': 'passed' };

let sandbox: Sandbox;
beforeAll(() => {
  sandbox = createDockerSandbox();
});
afterAll(cleanUpEcosystemRuns);

describe.each([
  { vitest: '^3.2.4', image: 'node:18', inWorker: true },
  { vitest: '^4.1.12', image: 'node:22', inWorker: true },
  { vitest: '^5.1.1', image: 'node:22', inWorker: false },
])('vitest $vitest rounds inside the first run (real containers)', ({ vitest, image, inWorker }) => {
  let repo: TempRepo;
  let env: Environment;
  let testPatch: string;
  let base: string;
  beforeAll(async () => {
    const pkg = JSON.stringify({ name: 'state', version: '1.0.0', private: true, type: 'module', devDependencies: { vitest } });
    repo = createGitRepo({ 'package.json': pkg, 'src/state.js': MODULE, 'test/state.test.js': OLD });
    base = repo.sha;
    testPatch = repo.git('diff', base, repo.commit({ 'test/state.test.js': NEW }, 'tests'));
    env = await sandbox.ensureEnvironment({ repo: repo.path, rev: base, baseImage: image, install: 'npm install --no-audit --no-fund' });
  }, 900_000);

  it(`each round runs the added tests from a new module state ${inWorker ? 'in the worker that ran the file' : 'in new workers'}; the run's report and output are as without rounds`, async () => {
    const opts = { env, repo: repo.path, state: { rev: base, patches: [testPatch] }, runner: RUNNER, files: FILES };
    const plan = roundPlan(testPatch, FILES, 2)!;
    const { result, rounds, kept } = await runTestsKept(sandbox, { ...opts, roundPlan: plan });
    try {
      expect(outcomes(result)).toEqual({ existing: 'passed', ...ADDED });
      expect(rounds).toHaveLength(2);
      // Only what the patch added; `calls` as a new module has it; `drawn` drawn again.
      for (const round of rounds!) expect(outcomes(round)).toEqual(ADDED);
      // The rounds' console output is not the run's.
      expect(result.output.match(/swt-log-marker/g)).toHaveLength(1);
      const where = await kept!.rerun('ls /tmp/swt-rounds/vitest 2>/dev/null; true');
      expect(where.output.trim().split('\n').filter(Boolean).sort()).toEqual(inWorker ? ['round1-test%2Fstate.test.js.json', 'round2-test%2Fstate.test.js.json'] : []);
    } finally {
      await kept?.release();
    }
    // The same run without rounds reports the same.
    expect(outcomes(await runTests(sandbox, opts))).toEqual(outcomes(result));
  }, 300_000);
});
