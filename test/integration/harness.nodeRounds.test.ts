import { runTests, runTestsKept } from '../../src/harness/runTests.js';
import { roundPlan } from '../../src/harness/rounds.js';
import { runnerFromCommand } from '../../src/harness/runners.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Environment, Sandbox } from '../../src/sandbox/types.js';
import type { RunResult } from '../../src/results/types.js';
import { createGitRepo, type TempRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

// vitest's, jest's and mocha's confirmation rounds inside the first run (vitestRounds.ts,
// jestRounds.ts, mochaRounds.ts under src/ecosystems/node), on real vitest 3, 4, 5, jest 27, 29,
// 30 and mocha 10 from the npm registry in real containers. vitest 3 and 4 hold them in the
// worker that ran the file (the harness's test runner), jest 27 and 29 in the process that ran it
// (jest-runner's runTest wrapped): their round files are in the container. vitest 5 (no
// `vitest/runners`) runs them through its API in new workers, jest 30 (runTest bundled) through
// runCLI again, mocha in a new Mocha once the run is done (the project's modules loaded again).
// Either way a round runs only the tests the patch adds, from a new module state, re-drawing what
// the module drew at import (jest's rounds hold no other test in jest-circus's tree, nor a group
// left empty, and leave the snapshots of those they drop as they are); the run's own report is
// what it is without rounds; a round's console output is not in the run's. A failure whose
// details are not JSON (an error that refers to itself, a BigInt) is reported by every runner:
// jest 28 and later wrote no report for it before the harness's --json hook (jestJson.ts).

const ESM = {
  module: 'export const calls = [];\nexport const drawn = Math.random();\n',
  imports: ["import fs from 'node:fs';", "import { it, expect } from 'vitest';", "import { calls, drawn } from '../src/state.js';"],
};
const CJS = {
  module: 'exports.calls = [];\nexports.drawn = Math.random();\n',
  imports: ["const fs = require('fs');", "const { calls, drawn } = require('../src/state.js');"],
};
/** mocha has no `expect`: node's assert behind the two matchers the tests use. */
const MOCHA = {
  module: CJS.module,
  imports: [
    ...CJS.imports,
    "const assert = require('assert');",
    'const expect = (v) => ({ toEqual: (w) => assert.deepStrictEqual(v, w), not: { toContain: (x) => assert.ok(!v.includes(x)) } });',
  ],
};
const EXISTING = ['', "it('existing', () => {", '  expect(calls).toEqual([]);', '});', ''];
/** jest's also has a group whose one test no round runs, with a snapshot. */
const EXISTING_GROUP = ["describe('existing group', () => {", "  it('existing nested', () => {", '    expect(calls).toEqual([]);', "    expect('swt').toMatchSnapshot();", '  });', '});', ''];
/** Its snapshot file as no jest writes it (the comment): a round that saved the file again would drop it. jest 30 wants its own guide link. */
const SNAPSHOT_FILE = 'test/__snapshots__/state.test.js.snap';
const snapshotFile = (version: string) =>
  `// Jest Snapshot v1, ${version.startsWith('^30') ? 'https://jestjs.io/docs/snapshot-testing' : 'https://goo.gl/fbAQLP'}\n\n// written by hand\nexports[\`existing group existing nested 1\`] = \`"swt"\`;\n`;
/** What the "test patch" adds: the rounds' tests. */
const ADDED_TESTS = [
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
  "it('fails', () => {",
  "  const e = new Error('failing on purpose');",
  '  e.self = e;',
  '  throw e;',
  '});',
  '',
];
const BIGINT_TEST = ["it('fails on a BigInt', () => {", '  expect(BigInt(1)).toBe(BigInt(2));', '});', ''];
/** jest's: how many tests and groups jest-circus holds for the file when it runs (the rounds drop what they do not run). */
const HELD_TEST = [
  "it('runs among the chosen tests only', () => {",
  "  const state = global[Object.getOwnPropertySymbols(global).find((s) => String(s) === 'Symbol(JEST_STATE_SYMBOL)')];",
  "  const count = (block, type) => block.children.reduce((n, c) => n + (c.type === type ? 1 : 0) + (c.type === 'test' ? 0 : count(c, type)), 0);",
  "  fs.appendFileSync('/tmp/swt-held', `${count(state.rootDescribeBlock, 'test')}/${count(state.rootDescribeBlock, 'describeBlock')} `);",
  '});',
  '',
];

const FILE = 'test/state.test.js';
const outcomes = (r: RunResult) => Object.fromEntries(r.tests.map((t) => [t.id.replace(`${FILE} > `, ''), t.outcome]));
const messageOf = (r: RunResult, name: string) => r.tests.find((t) => t.id === `${FILE} > ${name}`)?.message;
const ADDED = { 'sees a fresh module state': 'passed', 'draws afresh at import': 'passed', 'logs a marker': 'passed', fails: 'failed' };

let sandbox: Sandbox;
/**
 * One package cache for the nine projects (EnvironmentSpec.cacheScope): each installs into an
 * empty one otherwise, and vitest 3 and jest come down from the registry three and two times.
 * The scope is a temporary repository's path, so the cache goes with it (cleanUpEcosystemRuns).
 */
let cacheScope: string;
beforeAll(() => {
  sandbox = createDockerSandbox();
  cacheScope = createGitRepo({ 'README.md': 'the package cache scope of harness.nodeRounds\n' }).path;
});
afterAll(cleanUpEcosystemRuns);

describe.each([
  { runner: 'vitest', version: '^3.2.4', image: 'node:18', where: 'in the worker that ran the file', roundFiles: true },
  { runner: 'vitest', version: '^4.1.12', image: 'node:22', where: 'in the worker that ran the file', roundFiles: true },
  { runner: 'vitest', version: '^5.1.1', image: 'node:22', where: 'in new workers', roundFiles: false },
  { runner: 'jest', version: '^27.5.1', image: 'node:18', where: 'in the process that ran the file', roundFiles: true },
  // jest 28 and later put a failure's details in their --json report, and wrote none when those were not JSON (jestJson.ts).
  { runner: 'jest', version: '^29.7.0', image: 'node:18', where: 'in the process that ran the file', roundFiles: true },
  { runner: 'jest', version: '^30.2.0', image: 'node:22', where: 'in a second runCLI', roundFiles: false },
  { runner: 'mocha', version: '^10.7.0', image: 'node:18', where: 'in a new Mocha after the run', roundFiles: false },
  // Files sharing a worker: rounds there would reset the registry the next file finds.
  { runner: 'vitest', version: '^3.2.4', image: 'node:18', where: 'in new workers when files share one (--no-isolate)', roundFiles: false, options: '--no-isolate' },
  // pnpm's layout: @vitest/runner only through the NODE_PATH its bin script sets, which import ignores.
  { runner: 'vitest', version: '^3.2.4', image: 'node:18', where: "in new workers when the workers could not import vitest's runner (pnpm)", roundFiles: false, install: 'npx --yes pnpm@9.15.9 install' },
] as const)('$runner $version: rounds $where (real containers)', ({ runner, version, image, roundFiles, ...rest }) => {
  const options = 'options' in rest ? ` ${rest.options}` : '';
  const kind = runner === 'vitest' ? ESM : runner === 'jest' ? CJS : MOCHA;
  // jest's also fails on a BigInt (not JSON either, as the failing test's error referring to itself is not).
  const added = runner === 'jest' ? [...ADDED_TESTS, ...BIGINT_TEST, ...HELD_TEST] : ADDED_TESTS;
  const expected = runner === 'jest' ? { ...ADDED, 'fails on a BigInt': 'failed', 'runs among the chosen tests only': 'passed' } : ADDED;
  const existing = runner === 'jest' ? [...EXISTING, ...EXISTING_GROUP] : EXISTING;
  const test = (withAdded: boolean) => [...kind.imports, ...existing, ...(withAdded ? added : [])].join('\n');
  const spec = runnerFromCommand(`npx ${runner}${runner === 'vitest' ? ' run' : ''}${options} {files}`);
  let repo: TempRepo;
  let env: Environment;
  let testPatch: string;
  let base: string;
  beforeAll(async () => {
    const pkg = JSON.stringify({ name: 'state', version: '1.0.0', private: true, ...(runner === 'vitest' ? { type: 'module' } : {}), devDependencies: { [runner]: version } });
    repo = createGitRepo({ 'package.json': pkg, 'src/state.js': kind.module, [FILE]: test(false), ...(runner === 'jest' ? { [SNAPSHOT_FILE]: snapshotFile(version) } : {}) });
    base = repo.sha;
    testPatch = repo.git('diff', base, repo.commit({ [FILE]: test(true) }, 'tests'));
    env = await sandbox.ensureEnvironment({ repo: repo.path, rev: base, baseImage: image, install: ('install' in rest && rest.install) || 'npm install --no-audit --no-fund', cacheScope });
  }, 900_000);

  it("each round runs the added tests from a new module state; the run's report and output are as without rounds", async () => {
    const opts = { env, repo: repo.path, state: { rev: base, patches: [testPatch] }, runner: spec, files: [FILE] };
    const { result, rounds, kept } = await runTestsKept(sandbox, { ...opts, roundPlan: roundPlan(testPatch, [FILE], 2)! });
    try {
      expect(outcomes(result)).toEqual({ existing: 'passed', ...(runner === 'jest' ? { 'existing group > existing nested': 'passed' } : {}), ...expected });
      expect(rounds).toHaveLength(2);
      // Only what the patch added; `calls` as a new module has it; `drawn` drawn again.
      for (const round of rounds!) expect(outcomes(round)).toEqual(expected);
      // A round's failure keeps its own message (jest's rounds skip only the file's formatted one).
      for (const r of [result, ...rounds!]) expect(messageOf(r, 'fails')).toContain('failing on purpose');
      // The rounds' console output is not the run's.
      expect(result.output.match(/swt-log-marker/g)).toHaveLength(1);
      const written = await kept!.rerun(`ls /tmp/swt-rounds/${runner} 2>/dev/null; true`);
      expect(written.output.trim().split('\n').filter(Boolean).sort()).toEqual(roundFiles ? ['round1-test%2Fstate.test.js.json', 'round2-test%2Fstate.test.js.json'] : []);
      if (runner === 'jest') {
        // The run holds the file's 8 tests and its group; each round only the 6 tests it runs, not the existing ones
        // its name pattern would skip, nor the group they leave empty.
        const held = await kept!.rerun('cat /tmp/swt-held');
        expect(held.output.trim()).toBe('8/1 6/0 6/0');
        // Its snapshot counts as checked in the rounds, as a skipped test's does: the file is not written again.
        expect((await kept!.rerun(`cat ${SNAPSHOT_FILE}`)).output).toBe(snapshotFile(version));
      }
    } finally {
      await kept?.release();
    }
    // The same run without rounds reports the same.
    expect(outcomes(await runTests(sandbox, opts))).toEqual(outcomes(result));
  }, 300_000);
});
