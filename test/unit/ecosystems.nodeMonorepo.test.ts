import { node } from '../../src/ecosystems/node/index.js';
import { jestJsonPrepare } from '../../src/ecosystems/node/jestJson.js';
import { LOCAL_NPX } from '../../src/ecosystems/node/localNpx.js';
import { isNodeTestStep, workflowTestEnv } from '../../src/ecosystems/node/workflowEnv.js';
import { nestedManifests, owningPackage, workspaceGlobs, workspacePackages } from '../../src/ecosystems/node/workspaces.js';
import { factPaths } from '../../src/ecosystems/index.js';
import { groupByPackage, packageOf } from '../../src/harness/packages.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { buildRerunCommand, buildTestCommand } from '../../src/harness/runners.js';
import type { RunnerSpec } from '../../src/results/types.js';

const FILES = [
  'package.json',
  'packages/core/package.json',
  'packages/core/src/index.js',
  'packages/core/test/index.test.js',
  'packages/core/test/fixtures/pkg/package.json',
  'packages/cli/package.json',
  'packages/cli/__tests__/cli.test.js',
  'packages/cli/jest.config.js',
  'packages/cli/node_modules/x/package.json',
  'packages/legacy/package.json',
  'packages/legacy/test/a.test.js',
  'apps/web/package.json',
  'apps/web/tests/web.spec.ts',
  'tools/package.json',
  'test/root.test.js',
  '.github/workflows/ci.yml',
];

describe('workspaces: which packages a monorepo has and which owns a file', () => {
  it('reads npm/yarn `workspaces` (array and yarn `{ packages }`), pnpm-workspace.yaml and lerna.json', () => {
    expect(workspaceGlobs({ workspaces: ['packages/*', './apps/*/'] }, {})).toEqual(['packages/*', 'apps/*']);
    expect(workspaceGlobs({ workspaces: { packages: ['packages/*'], nohoist: ['**/x'] } }, {})).toEqual(['packages/*']);
    expect(workspaceGlobs({}, { 'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n  - '!packages/legacy'\n" })).toEqual(['packages/*', '!packages/legacy']);
    expect(workspaceGlobs({}, { 'lerna.json': '{"packages":["apps/*"],"version":"independent"}' })).toEqual(['apps/*']);
    expect(workspaceGlobs({ name: 'single' }, {})).toEqual([]);
    // Broken files name nothing rather than throw: the install says why.
    expect(workspaceGlobs(undefined, { 'pnpm-workspace.yaml': 'packages: [', 'lerna.json': '{' })).toEqual([]);
  });

  it('a package is a package.json under a glob, not excluded, not installed, not a fixture', () => {
    expect(nestedManifests(FILES)).toEqual(['packages/core/package.json', 'packages/cli/package.json', 'packages/legacy/package.json', 'apps/web/package.json', 'tools/package.json']);
    expect(workspacePackages(FILES, ['packages/*', 'apps/*', '!packages/legacy'])).toEqual(['apps/web', 'packages/cli', 'packages/core']);
    expect(workspacePackages(FILES, ['packages/**'])).toEqual(['packages/cli', 'packages/core', 'packages/legacy']);
    expect(workspacePackages(FILES, [])).toEqual([]);
  });

  it('the owner of a file is the deepest package holding it; the root owns the rest', () => {
    const dirs = ['packages/core', 'packages/core/sub', 'packages/cli'];
    expect(owningPackage('packages/core/test/index.test.js', dirs)).toBe('packages/core');
    expect(owningPackage('packages/core/sub/t.test.js', dirs)).toBe('packages/core/sub');
    expect(owningPackage('packages/corex/t.test.js', dirs)).toBeUndefined();
    expect(owningPackage('test/root.test.js', dirs)).toBeUndefined();
  });
});

describe('the Node default runner of a monorepo', () => {
  const manifests: Record<string, string> = {
    'package.json': JSON.stringify({ private: true, workspaces: ['packages/*', 'apps/*'], devDependencies: { mocha: '^10' } }),
    'packages/core/package.json': JSON.stringify({ name: 'core', scripts: { test: 'node --test' } }),
    'packages/cli/package.json': JSON.stringify({ name: 'cli', devDependencies: { jest: '^29', 'ts-jest': '^29' } }),
    'packages/legacy/package.json': JSON.stringify({ name: 'legacy' }),
    'apps/web/package.json': JSON.stringify({ name: 'web', devDependencies: { vitest: '^2' } }),
    'tools/package.json': JSON.stringify({ name: 'tools', devDependencies: { jest: '^29' } }),
    '.github/workflows/ci.yml': 'jobs:\n  test:\n    env:\n      TZ: UTC\n    steps:\n      - run: npm ci\n      - run: npm test\n',
  };

  it('reads the workspace packages and workflows besides the root manifest', () => {
    const read = factPaths(FILES);
    expect(read).toEqual(expect.arrayContaining(['package.json', 'packages/core/package.json', 'apps/web/package.json', '.github/workflows/ci.yml']));
    expect(read).not.toContain('packages/cli/node_modules/x/package.json');
    expect(read).not.toContain('packages/core/test/fixtures/pkg/package.json');
  });

  it('each package that names a runner runs its own files with it (its own jest config counts); the root keeps its own', () => {
    const spec = node.defaultRunner({ files: FILES, manifests });
    expect(spec.kind).toBe('mocha');
    expect(spec.packages).toEqual([
      { dir: 'apps/web', runner: { kind: 'vitest', template: 'npx vitest run {files}' } },
      // packages/cli has its own jest.config.js: no ts-jest preset forced on it
      { dir: 'packages/cli', runner: { kind: 'jest', template: 'npx jest {files}' } },
      { dir: 'packages/core', runner: { kind: 'node-test', template: 'node --test {files}' } },
    ]);
    expect(node.testEnvironment!({ files: FILES, manifests })).toEqual({ env: { TZ: 'UTC' }, source: '.github/workflows/ci.yml, job test, step `npm test`' });
    expect(node.testEnvironment!({ files: ['package.json'], manifests: { 'package.json': '{}' } })).toBeUndefined();
  });

  it('a repository with no workspaces has no packages', () => {
    const spec = node.defaultRunner({ files: ['package.json', 'test/a.test.js'], manifests: { 'package.json': '{"devDependencies":{"jest":"1"}}' } });
    expect(spec).toEqual({ kind: 'jest', template: 'npx jest {files}' });
  });
});

describe('workflow test environment', () => {
  const wf = (text: string) => ({ '.github/workflows/test.yml': text });

  it('takes workflow, job and step env of the step that runs the tests, later levels winning', () => {
    const text = [
      'name: Test',
      'env:',
      '  LANG: C.UTF-8',
      '  FEATURE_X: "off"',
      'jobs:',
      '  build-and-test:',
      '    runs-on: ubuntu-latest',
      '    env:',
      '      LANG: en_US.utf8',
      '      LIMIT_JEST: yes',
      '      TZ: America/New_York',
      '    steps:',
      '      - uses: actions/checkout@v4',
      '      - run: npm ci',
      '      - run: npm run test',
      '        env:',
      '          FEATURE_X: on',
      '          RETRIES: 3',
      '          CI: true',
    ].join('\n');
    const r = workflowTestEnv(wf(text), isNodeTestStep);
    expect(r).toEqual({
      env: { LANG: 'en_US.utf8', FEATURE_X: 'on', LIMIT_JEST: 'yes', TZ: 'America/New_York', RETRIES: '3', CI: 'true' },
      source: '.github/workflows/test.yml, job build-and-test, step `npm run test`',
      refused: [],
    });
  });

  it('refuses every ${{ }} expression (secrets, matrix, vars), credential-like and runner-owned names, and non-scalars', () => {
    const text = [
      'env:',
      '  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}',
      '  TZ: ${{ matrix.tz }}',
      'jobs:',
      '  t:',
      '    env:',
      '      API_KEY: literal-but-a-key',
      '      PATH: /opt/bin',
      '      LIST: [a, b]',
      '      MIXED: "prefix-${{ vars.X }}"',
      '      LOCALE: de_DE.UTF-8',
      '    steps:',
      '      - run: yarn test --ci',
    ].join('\n');
    const r = workflowTestEnv(wf(text), isNodeTestStep)!;
    expect(r.env).toEqual({ LOCALE: 'de_DE.UTF-8' });
    expect(r.refused.map((x) => x.split(' ')[0])).toEqual(['NPM_TOKEN', 'TZ', 'API_KEY', 'PATH', 'LIST', 'MIXED']);
    expect(JSON.stringify(r)).not.toContain('secrets.');
  });

  it('a step-level expression overrides (and so removes) a job-level literal', () => {
    const text = 'jobs:\n  t:\n    env:\n      TZ: UTC\n    steps:\n      - run: npx jest\n        env:\n          TZ: ${{ matrix.tz }}\n';
    expect(workflowTestEnv(wf(text), isNodeTestStep)).toBeUndefined();
  });

  it('nothing when no step runs the tests, the file does not parse, or it is not a workflow', () => {
    expect(workflowTestEnv(wf('env:\n  TZ: UTC\njobs:\n  lint:\n    steps:\n      - run: npm run lint\n'), isNodeTestStep)).toBeUndefined();
    expect(workflowTestEnv(wf('jobs: [\n'), isNodeTestStep)).toBeUndefined();
    expect(workflowTestEnv({ 'docker-compose.yml': 'jobs:\n  t:\n    env: {TZ: UTC}\n    steps:\n      - run: npm test\n' }, isNodeTestStep)).toBeUndefined();
  });

  it('recognises the ways a Node workflow runs tests', () => {
    for (const run of ['npm test', 'npm t', 'npm run test', 'pnpm test', 'yarn test --ci', 'npm run test:unit', 'npx jest --coverage', 'npx vitest run', 'node --test test/', 'npm ci\nnpm test']) {
      expect({ run, test: isNodeTestStep(run) }).toEqual({ run, test: true });
    }
    for (const run of ['npm ci', 'npm run lint', 'npm run build', 'yarn install --frozen-lockfile', 'npm run testify-docs']) {
      expect({ run, test: isNodeTestStep(run) }).toEqual({ run, test: false });
    }
  });
});

describe('harness: runs grouped by owning package', () => {
  const spec: RunnerSpec = {
    kind: 'mocha',
    template: 'npx mocha {files}',
    env: { TZ: 'America/New_York', LANG: 'en_US.utf8' },
    packages: [
      { dir: 'packages/core', runner: { kind: 'node-test', template: 'node --test {files}' } },
      { dir: 'packages/cli', runner: { kind: 'jest', template: 'npx jest {files}' } },
    ],
  };

  it('groups files by package, relative to it; the root keeps the rest', () => {
    expect(groupByPackage(spec, ['packages/cli/__tests__/a.test.js', 'test/root.test.js', 'packages/cli/b.test.js'])).toEqual([
      { dir: 'packages/cli', spec: spec.packages![1].runner, files: ['packages/cli/__tests__/a.test.js', 'packages/cli/b.test.js'], local: ['__tests__/a.test.js', 'b.test.js'] },
      { dir: '', spec: { kind: 'mocha', template: 'npx mocha {files}' }, files: ['test/root.test.js'], local: ['test/root.test.js'] },
    ]);
    expect(packageOf(spec, 'packages/core/test/x.test.js').dir).toBe('packages/core');
  });

  it('one command per group, from its directory, with its own out dir and exit status, under the workflow environment', () => {
    const cmd = buildTestCommand(spec, ['packages/cli/__tests__/a.test.js', 'packages/core/test/x.test.js'], '/swt-out');
    expect(cmd.startsWith('mkdir -p /swt-out 2>/dev/null; export TZ=America/New_York LANG=en_US.utf8; rc=0; ')).toBe(true);
    expect(cmd).toContain(`( cd packages/cli && mkdir -p /swt-out/p0 2>/dev/null;${LOCAL_NPX}${jestJsonPrepare()} npx jest --ci --runTestsByPath --json --outputFile=/swt-out/p0/jest.json __tests__/a.test.js ); s=$?; echo $s > /swt-out/p0/exit-status;`);
    expect(cmd).toContain('( cd packages/core && mkdir -p /swt-out/p1 2>/dev/null;');
    expect(cmd).toContain('--test-reporter-destination=/swt-out/p1/junit-0.xml');
    expect(cmd.endsWith('exit $rc')).toBe(true);
  });

  it('a spec with only an environment exports it before the one command', () => {
    expect(buildTestCommand({ kind: 'jest', template: 'npx jest {files}', env: { TZ: 'UTC' } }, ['a.test.js'], '/o')).toBe(
      `mkdir -p /o 2>/dev/null; export TZ=UTC;${LOCAL_NPX}${jestJsonPrepare()} npx jest --ci --runTestsByPath --json --outputFile=/o/jest.json a.test.js`,
    );
    expect(buildTestCommand({ kind: 'jest', template: 'npx jest {files}', env: { FLAGS: "a b'c" } }, ['a.test.js'], '/o')).toContain(`export FLAGS='a b'\\''c';`);
    expect(() => buildTestCommand({ kind: 'jest', template: 'npx jest', env: { 'A B': 'x' } }, ['a.test.js'])).toThrow(/not a valid name/);
  });

  it('parses each group with its own runner and exit status, ids repository-relative', () => {
    const jestReport = JSON.stringify({
      testResults: [
        {
          name: '/testbed/packages/cli/__tests__/a.test.js',
          status: 'failed',
          assertionResults: [
            { ancestorTitles: ['cli'], title: 'parses', status: 'passed', failureMessages: [] },
            { ancestorTitles: ['cli'], title: 'exits', status: 'failed', failureMessages: ['Error: boom'] },
          ],
        },
      ],
    });
    const junit = '<?xml version="1.0"?><testsuites><testsuite name="core"><testcase name="adds" classname="core"/></testsuite></testsuites>';
    const parsed = parseRunReports(spec, {
      files: ['packages/cli/__tests__/a.test.js', 'packages/core/test/x.test.js'],
      reports: { 'p0/jest.json': jestReport, 'p0/exit-status': '1\n', 'p1/junit-0.xml': junit, 'p1/exit-status': '0\n' },
      output: '',
      exitCode: 1,
      timedOut: false,
      root: '/testbed',
    });
    expect(parsed.fileErrors).toEqual([]);
    expect(parsed.tests.map((t) => [t.id, t.file, t.outcome])).toEqual([
      ['packages/cli/__tests__/a.test.js > cli > parses', 'packages/cli/__tests__/a.test.js', 'passed'],
      ['packages/cli/__tests__/a.test.js > cli > exits', 'packages/cli/__tests__/a.test.js', 'failed'],
      ['packages/core/test/x.test.js > core > adds', 'packages/core/test/x.test.js', 'passed'],
    ]);
  });

  it('a group that wrote no report is that group\'s file error, not the others\'', () => {
    const parsed = parseRunReports(spec, {
      files: ['packages/cli/__tests__/a.test.js', 'test/root.test.js'],
      reports: { 'p0/exit-status': '1' },
      output: 'Error: Cannot find module jest',
      exitCode: 1,
      timedOut: false,
      root: '/testbed',
    });
    expect(parsed.fileErrors.map((e) => e.file)).toEqual(['packages/cli/__tests__/a.test.js', 'test/root.test.js']);
    expect(parsed.reportFound).toBe(false);
  });

  it('reruns a file from its package with ids as its own run names them', () => {
    const cmd = buildRerunCommand(spec, [{ file: 'packages/cli/__tests__/a.test.js', ids: ['packages/cli/__tests__/a.test.js > cli > exits'] }], 1, '/swt-out');
    expect(cmd.startsWith('rc=0; export TZ=America/New_York LANG=en_US.utf8; ')).toBe(true);
    expect(cmd).toContain("( cd packages/cli && npx jest --ci --runTestsByPath --json --outputFile=/swt-out/c0-0/jest.json -t exits __tests__/a.test.js ) || rc=$?;");
  });
});
