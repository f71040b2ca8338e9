/**
 * Test files from each runner's own config, on real config files of real projects
 * (fixtures/node/configs/<owner>__<repo>__<file>): ava's `files` in package.json (redux-persist),
 * mocha's `spec` in a `.mocharc.cjs` (generator-jhipster-jooq) and one built by code
 * (graphql-typegen: not read), mocha's own `.mocharc.yml` (no spec), jest's `testMatch` in a
 * `jest.config.js` (stats-frontend) and luxon's (roots only), and vitest's inline projects'
 * `include` (get-user-locale). JS/TS configs are read from their tree-sitter syntax tree: literal
 * values only, no config code runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configRules, isTestFile, testConfigFiles } from '../../src/harness/testFiles.js';
import { loadLanguage, parseIfLoaded } from '../../src/patch/structure.js';
import { testTargets } from '../../src/harness/testOwners.js';
import { testTargetsOfPatch } from '../../src/pipeline/testTargets.js';
import { cleanupGitRepos, createGitRepo, leftoverGitRepos } from '../helpers/gitRepo.js';

const read = (name: string) => readFileSync(join(process.cwd(), 'test', 'unit', 'fixtures', 'node', 'configs', name), 'utf8');
/** The rules of one real config file, put at the root under its own name. */
const rulesOf = (fixture: string) => configRules({ [fixture.split('__').pop()!]: read(fixture) }, parseIfLoaded);

beforeAll(async () => {
  await loadLanguage('javascript');
  await loadLanguage('typescript');
});

it('the config files read are the root ones of ava, jest, vitest/vite and mocha', () => {
  expect(testConfigFiles(['package.json', 'jest.config.js', 'vitest.config.ts', '.mocharc.yml', '.mocharc.cjs', 'ava.config.mjs', 'packages/a/jest.config.js', 'src/index.ts', 'tsconfig.json'])).toEqual(['package.json', 'jest.config.js', 'vitest.config.ts', '.mocharc.yml', '.mocharc.cjs', 'ava.config.mjs']);
});

it('ava: "files" in package.json (redux-persist)', () => {
  const config = rulesOf('rt2zz__redux-persist__package.json');
  expect(config.node).toEqual({ globs: ['tests/**/*.spec.js'], excludes: [], regexes: [], sources: ['package.json "ava".files'] });
  expect(isTestFile('tests/createPersistoid.spec.js', config)).toBe(true);
  expect(isTestFile('src/createPersistoid.js', config)).toBe(false);
});

it('ava: files the conventions miss become test files, `!` patterns take them back out', () => {
  const config = configRules({ 'package.json': JSON.stringify({ ava: { files: ['test_*.js', 'checks/**/*.js', '!checks/fixtures/**'] } }) }, parseIfLoaded);
  expect(isTestFile('test_sleeps.js')).toBe(false);
  expect(isTestFile('test_sleeps.js', config)).toBe(true);
  expect(isTestFile('checks/parse.js', config)).toBe(true);
  expect(isTestFile('checks/fixtures/x.js', config)).toBe(false);
});

it('mocha: spec in a .mocharc.cjs read from its syntax tree; a spec built by code is not read; a .mocharc.yml without spec names nothing', () => {
  const jooq = rulesOf('jhipster__generator-jhipster-jooq__.mocharc.cjs');
  expect(jooq.node).toMatchObject({ globs: ['**/*.spec.mjs', '**/*.spec.js'], sources: ['.mocharc.cjs spec'] });
  expect(isTestFile('generators/jooq/generator.spec.mjs', jooq)).toBe(true);
  expect(rulesOf('codemodsquad__graphql-typegen__.mocharc.cjs')).toEqual({});
  expect(rulesOf('mochajs__mocha__.mocharc.yml')).toEqual({});
  const dir = configRules({ '.mocharc.yml': 'spec: checks\nrecursive: true\n' }, parseIfLoaded);
  expect(dir.node!.globs).toEqual(['checks/**/*.{js,cjs,mjs,ts}']);
  expect(isTestFile('checks/deep/a.js', dir)).toBe(true);
  const pkg = configRules({ 'package.json': JSON.stringify({ mocha: { spec: ['lib/**/*.check.js'] } }) }, parseIfLoaded);
  expect(isTestFile('lib/x/parse.check.js', pkg)).toBe(true);
  expect(pkg.node!.sources).toEqual(['package.json "mocha".spec']);
});

it('jest: testMatch in jest.config.js (stats-frontend), testRegex in package.json; roots alone (luxon) add nothing', () => {
  const stats = rulesOf('lobsteropteryx__stats-frontend__jest.config.js');
  expect(stats.node).toMatchObject({ globs: ['**/*.test.+(ts|tsx|js)'], sources: ['jest.config.js testMatch'] });
  expect(isTestFile('test/components/chart.test.tsx', stats)).toBe(true);
  expect(rulesOf('moment__luxon__jest.config.js')).toEqual({});
  const regex = configRules({ 'package.json': JSON.stringify({ jest: { testRegex: '/checks/.*\\.js$', testMatch: ['<rootDir>/e2e/**/*.e2e.js'] } }) }, parseIfLoaded);
  expect(isTestFile('checks/a.js', regex)).toBe(true);
  expect(isTestFile('e2e/login.e2e.js', regex)).toBe(true);
  expect(isTestFile('lib/a.js', regex)).toBe(false);
});

it("vitest: each inline project's include (get-user-locale), a project's exclude not applied to another", () => {
  const config = rulesOf('wojtekmaj__get-user-locale__vitest.config.ts');
  expect(config.node!.globs.sort()).toEqual(['src/**/*.node.{spec,test}.ts', 'src/**/*.{spec,test}.ts']);
  expect(isTestFile('src/index.node.spec.ts', config)).toBe(true);
  const own = configRules({ 'vitest.config.mts': "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['src/**/*.check.ts'], exclude: ['src/slow/**'], coverage: { include: ['src/**'] } } });\n" }, parseIfLoaded);
  expect(own.node).toEqual({ globs: ['src/**/*.check.ts'], excludes: ['src/slow/**'], regexes: [], sources: ['vitest.config.mts test.include', 'vitest.config.mts test.exclude'] });
  expect(isTestFile('src/parse.check.ts', own)).toBe(true);
  expect(isTestFile('src/slow/big.check.ts', own)).toBe(false);
  // coverage.include names source, not tests
  expect(isTestFile('src/parse.ts', own)).toBe(false);
});

it('the test targets of a patch take the config: a file only the config names runs', () => {
  const config = configRules({ 'package.json': JSON.stringify({ ava: { files: ['test_*.js'] } }) }, parseIfLoaded);
  expect(testTargets({ touched: ['test_sleeps.js', 'wrapper.js'], files: ['package.json', 'test_sleeps.js', 'wrapper.js'], config }).files).toEqual(['test_sleeps.js']);
  expect(testTargets({ touched: ['test_sleeps.js'], files: ['package.json', 'test_sleeps.js'] }).files).toEqual([]);
});

describe('the pipeline reads the root configs of a real git repository', () => {
  afterAll(() => {
    cleanupGitRepos();
    expect(leftoverGitRepos()).toEqual([]);
  });

  it("a test patch adding a file only ava's files and vitest's include name: those files run, nothing of the config runs", async () => {
    const repo = createGitRepo({
      'package.json': JSON.stringify({ name: 'x', ava: { files: ['test_*.js'] } }),
      // a config that would write a file if it ran: it is only parsed
      'vitest.config.ts': "import { writeFileSync } from 'node:fs';\nwriteFileSync('ran', '1');\nexport default { test: { include: ['checks/**/*.ts'] } };\n",
      'wrapper.js': 'module.exports = 1;\n',
    });
    const base = repo.sha;
    repo.commit({ 'test_sleeps.js': "require('./wrapper');\n", 'checks/parse.ts': 'export {};\n' });
    const patch = repo.git('diff', base, repo.sha);
    const targets = await testTargetsOfPatch(repo.path, base, patch);
    expect(targets.files.sort()).toEqual(['checks/parse.ts', 'test_sleeps.js']);
    expect(repo.git('ls-files', '--others')).toBe('');
  });
});
