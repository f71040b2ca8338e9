/**
 * Deno's test runner end to end with no configuration, in real containers (the `deno` npm package
 * from the npm registry through the egress proxy): a Deno project with no package.json, its
 * deno.json's `test` task giving `--allow-env` and its `imports` an npm: package (fetched into
 * Deno's cache at install time; the tests run offline), a TypeScript test file with `t.step`s and a test
 * that reads the environment. The new test is F→P, the others P→P (the one reading the
 * environment passes because the task's permission is kept), a broken test F→F, an ignored test
 * skipped on both sides (F→F). The confirmation reruns select the new test with `--filter`. And a
 * package.json project whose test script runs `deno test --allow-read`: npm's install, then the Deno CLI.
 */
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns } from '../helpers/ecosystemRun.js';

const DENO_JSON = `${JSON.stringify({ tasks: { test: 'deno test --allow-env' }, imports: { 'is-odd': 'npm:is-odd@3.0.1' } }, null, 2)}\n`;

const BUGGY = 'export function add(a: number, b: number): number {\n  return a - b;\n}\n';
const FIXED = 'export function add(a: number, b: number): number {\n  return a + b;\n}\n';

const OLD_TEST = [
  'import assert from "node:assert";',
  'import isOdd from "is-odd";',
  'import { add } from "../src/calc.ts";',
  '',
  'Deno.test("zero", () => {',
  '  assert.strictEqual(add(0, 0), 0);',
  '});',
  '',
  'Deno.test("steps", async (t) => {',
  '  await t.step("same", () => assert.strictEqual(add(2, 2) - add(2, 2), 0));',
  '});',
  '',
  'Deno.test("npm import", () => {',
  '  assert.ok(isOdd(add(1, 0)));',
  '});',
  '',
  'Deno.test("reads env", () => {',
  '  assert.strictEqual(typeof Deno.env.get("HOME"), "string");',
  '});',
  '',
  'Deno.test("broken", () => {',
  '  assert.strictEqual(1, 2);',
  '});',
  '',
  'Deno.test.ignore("later", () => {});',
  '',
].join('\n');

const TEST_PATCH = [
  'diff --git a/test/calc_test.ts b/test/calc_test.ts',
  '--- a/test/calc_test.ts',
  '+++ b/test/calc_test.ts',
  '@@ -6,6 +6,10 @@',
  '   assert.strictEqual(add(0, 0), 0);',
  ' });',
  ' ',
  '+Deno.test("adds two", () => {',
  '+  assert.strictEqual(add(1, 2), 3);',
  '+});',
  '+',
  ' Deno.test("steps", async (t) => {',
  '   await t.step("same", () => assert.strictEqual(add(2, 2) - add(2, 2), 0));',
  ' });',
  '',
].join('\n');

const sandbox = createDockerSandbox();
afterAll(cleanUpEcosystemRuns);

it('deno test, no configuration (real containers): the new test F→P, the others P→P with the task’s --allow-env, a broken test F→F', async () => {
  const repo = createGitRepo({ 'deno.json': DENO_JSON, 'src/calc.ts': BUGGY, 'test/calc_test.ts': OLD_TEST });
  const base = repo.sha;
  const head = repo.commit({ 'src/calc.ts': FIXED }, 'fix');
  const v = await validate(sandbox, { repo: repo.path, base, head, testPatch: TEST_PATCH });
  expect(v.runner).toBe('deno-test');
  expect(v.tests.map((t) => [t.id, t.transition]).sort()).toEqual([
    ['test/calc_test.ts > adds two', 'F2P'],
    ['test/calc_test.ts > broken', 'F2F'],
    // an ignored test counts as failing on its side
    ['test/calc_test.ts > later', 'F2F'],
    // deno.json's npm: import, fetched at install time, loads offline
    ['test/calc_test.ts > npm import', 'P2P'],
    ['test/calc_test.ts > reads env', 'P2P'],
    // a test with steps, and its step
    ['test/calc_test.ts > steps > same', 'P2P'],
    ['test/calc_test.ts > steps', 'P2P'],
    ['test/calc_test.ts > zero', 'P2P'],
  ]);
  expect(v.success).toBe(true);
  // the confirmation reruns select the new test by name (--filter): the tests filtered out are not in their reports
  expect(v.confirmation).toMatchObject({ tests: ['test/calc_test.ts > adds two'], alone: true });
  const reruns = [...v.confirmation!.runs.base, ...v.confirmation!.runs.head];
  expect(reruns.length).toBeGreaterThan(0);
  for (const run of reruns) expect(run.tests.map((t) => t.id)).toEqual(['test/calc_test.ts > adds two']);
}, 900_000);

const PKG = `${JSON.stringify({ name: 'deno-pkg', version: '1.0.0', scripts: { test: 'deno test --allow-read' } }, null, 2)}\n`;
// No node: import here: in a package.json project Deno type-checks it against node_modules' @types/node.
const READ_TEST = [
  'import { add } from "../src/calc.ts";',
  'const assert = { strictEqual: (a: unknown, b: unknown) => { if (a !== b) throw new Error(`${a} !== ${b}`); } };',
  '',
  'Deno.test("reads a file", async () => {',
  '  assert.strictEqual((await Deno.readTextFile("test/data.txt")).trim(), "3");',
  '});',
  '',
].join('\n');
const READ_PATCH = [
  'diff --git a/test/calc_test.ts b/test/calc_test.ts',
  '--- a/test/calc_test.ts',
  '+++ b/test/calc_test.ts',
  '@@ -4,3 +4,7 @@',
  ' Deno.test("reads a file", async () => {',
  '   assert.strictEqual((await Deno.readTextFile("test/data.txt")).trim(), "3");',
  ' });',
  '+',
  '+Deno.test("adds from the file", async () => {',
  '+  assert.strictEqual(add(1, 2), Number(await Deno.readTextFile("test/data.txt")));',
  '+});',
  '',
].join('\n');

it('a package.json whose test script runs deno test --allow-read: npm’s install and the Deno CLI, the script’s permission kept', async () => {
  const repo = createGitRepo({ 'package.json': PKG, 'src/calc.ts': BUGGY, 'test/calc_test.ts': READ_TEST, 'test/data.txt': '3\n' });
  const base = repo.sha;
  const head = repo.commit({ 'src/calc.ts': FIXED }, 'fix');
  const v = await validate(sandbox, { repo: repo.path, base, head, testPatch: READ_PATCH });
  expect(v.runner).toBe('deno-test');
  expect(v.tests.map((t) => [t.id, t.transition]).sort()).toEqual([
    ['test/calc_test.ts > adds from the file', 'F2P'],
    ['test/calc_test.ts > reads a file', 'P2P'],
  ]);
  expect(v.success).toBe(true);
}, 900_000);
