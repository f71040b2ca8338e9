/**
 * The Node module's ava runner, on `--tap` output captured from real runs of ava 4.3.3 and 6.4.1
 * (Node 22, swt-base/node:22) on the test files beside them (fixtures/node/ava/*.js.txt): a
 * failing file, a crash, a duplicate title, a syntax error, skips and todos; and camelcase's own
 * test.js at e7dccc9^ with the fix's test patch. Plus ava's test-file conventions and commands.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { node } from '../../src/ecosystems/node/index.js';
import { ava, bunTest, jasmine } from '../../src/ecosystems/node/runners.js';
import { pathInfo } from '../../src/ecosystems/index.js';
import { buildRerunCommand, buildTestCommand, runnerFromCommand } from '../../src/harness/runners.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { isTestFile } from '../../src/harness/testFiles.js';

const read = (name: string) => readFileSync(join(process.cwd(), 'test', 'unit', 'fixtures', 'node', 'ava', name), 'utf8');
const ctx = (file: string) => ({ files: [file], file, output: '' });

describe.each(['4.3.3', '6.4.1'])('ava %s --tap', (v) => {
  it('a failing file: passes, assertion failures, an error thrown in a test, skip and todo as skipped, test.failing as passed', () => {
    const r = ava.parse(read(`ava-${v}-mixed.tap`), ctx('fx/mixed.js'));
    const byId = Object.fromEntries(r.tests.map((t) => [t.id, t]));
    expect(Object.keys(byId).sort()).toEqual(['fx/mixed.js > fails', 'fx/mixed.js > known failure', 'fx/mixed.js > later', 'fx/mixed.js > passes', 'fx/mixed.js > skipped one', 'fx/mixed.js > throws']);
    expect(byId['fx/mixed.js > passes'].outcome).toBe('passed');
    expect(byId['fx/mixed.js > known failure'].outcome).toBe('passed');
    expect(byId['fx/mixed.js > skipped one']).toMatchObject({ outcome: 'skipped', message: 'skipped' });
    expect(byId['fx/mixed.js > later']).toMatchObject({ outcome: 'skipped', message: 'todo' });
    expect(byId['fx/mixed.js > fails']).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(byId['fx/mixed.js > fails'].message).toMatch(/^one is not two\nDifference.*\n- 1\n\+ 2/);
    expect(byId['fx/mixed.js > throws']).toMatchObject({ outcome: 'failed', failureKind: 'error' });
    expect(byId['fx/mixed.js > throws'].message).toMatch(/Error thrown in test[\s\S]*boom/);
    expect(r.fileErrors).toEqual([]);
    expect(r.complete).toBe(true);
  });

  it('a file that throws while loading, a duplicate title and a syntax error are the file’s errors', () => {
    const crash = ava.parse(read(`ava-${v}-crash.tap`), ctx('fx/crash.js'));
    expect(crash.fileErrors).toEqual([{ file: 'fx/crash.js', kind: 'collection', message: expect.stringMatching(/^Error: module crashed\nfx\/crash\.js exited with a non-zero exit code: 1$/) }]);
    // ava 4 still ran the test registered before the throw; ava 6 did not.
    expect(crash.tests.map((t) => t.id)).toEqual(v === '4.3.3' ? ['fx/crash.js > before crash'] : []);
    const dup = ava.parse(read(`ava-${v}-dup.tap`), ctx('fx/dup.js'));
    expect(dup.fileErrors[0].message).toMatch(/^Error: Duplicate test title: same/);
    expect(dup.tests.every((t) => t.outcome === 'passed')).toBe(true);
    const syntax = ava.parse(read(`ava-${v}-syntax.tap`), ctx('fx/syntax.js'));
    expect(syntax).toMatchObject({ tests: [], fileErrors: [{ file: 'fx/syntax.js', kind: 'collection', message: expect.stringMatching(/^SyntaxError: Unexpected token ';'/) }] });
  });
});

it('ava: camelcase’s test.js with the fix’s new assertions, before the fix (real run)', () => {
  const r = ava.parse(read('ava-4.3.3-camelcase-test.js.tap'), ctx('test.js'));
  expect(r.tests.filter((t) => t.outcome === 'failed').map((t) => t.id)).toEqual(['test.js > camelCase', 'test.js > camelCase with pascalCase option']);
  expect(r.tests.filter((t) => t.outcome === 'passed')).toHaveLength(5);
  expect(r.tests[0].message).toMatch(/b2B|b2b/);
});

it('ava: one file per invocation, --tap teed into the report, --match of the titles for reruns; a run with a missing report blames the file', () => {
  const spec = runnerFromCommand('npx ava {files}');
  expect(spec.kind).toBe('ava');
  const cmd = buildTestCommand(spec, ['test.js', 'test/a b.js'], '/swt-out');
  expect(cmd).toContain('( { { npx ava --tap test.js; echo $? > /swt-out/ava-0.tap.rc; } | tee /swt-out/ava-0.tap; }; exit');
  expect(cmd).toContain("npx ava --tap 'test/a b.js';");
  const rerun = buildRerunCommand(spec, [{ file: 'test.js', ids: ['test.js > camelCase', "test.js > it's > nested"] }], 1, '/swt-out');
  expect(rerun).toContain("npx ava --tap --match camelCase --match 'it'\\''s > nested' test.js;");
  const parsed = parseRunReports(spec, { files: ['test.js', 'b.test.js'], reports: { 'ava-0.tap': read('ava-4.3.3-camelcase-test.js.tap') }, output: 'b.test.js: SyntaxError: x', exitCode: 1, timedOut: false });
  expect(parsed.tests).toHaveLength(7);
  expect(parsed.fileErrors.map((e) => e.file)).toEqual(['b.test.js']);
});

it('ava: detected from package.json; its default files (test.js at the root, src/test.js, test-*.js) are test files', () => {
  expect(node.defaultRunner({ files: ['package.json', 'test.js'], packageJson: { devDependencies: { ava: '^4.3.0', xo: '*' }, scripts: { test: 'xo && ava && tsd' } } })).toEqual({ kind: 'ava', template: 'npx ava {files}' });
  for (const f of ['test.js', 'test.mjs', 'src/test.js', 'source/test.ts', 'lib/test-parse.js', 'test/foo.js', '__tests__/foo.js']) expect([f, isTestFile(f)]).toEqual([f, true]);
  for (const f of ['lib/test.js', 'index.js', 'test-utils.js', 'scripts/test.sh']) expect([f, isTestFile(f)]).toEqual([f, false]);
  expect(node.isTestFile(pathInfo('test.js'))).toBe(true);
});

/**
 * jasmine, through swt's reporter, on real runs of jasmine 3.99.0 and 5.13.0 (Node 22) of the
 * specs beside the reports (fixtures/node/jasmine/*_spec.js.txt); jasmine orders specs at random.
 */
const readJ = (name: string) => readFileSync(join(process.cwd(), 'test', 'unit', 'fixtures', 'node', 'jasmine', name), 'utf8');

describe.each(['3.99.0', '5.13.0'])('jasmine %s', (v) => {
  it('a failing file: suites in the id, expectation failures as assertions, thrown errors as errors, xit skipped, a duplicate name failing once fails', () => {
    const r = jasmine.parse(readJ(`jasmine-${v}-mixed_spec.jsonl`), ctx('spec/mixed_spec.js'));
    const byId = Object.fromEntries(r.tests.map((t) => [t.id, t]));
    expect(Object.keys(byId).sort()).toEqual([
      'spec/mixed_spec.js > math > adds',
      'spec/mixed_spec.js > math > fails',
      'spec/mixed_spec.js > math > is pending',
      'spec/mixed_spec.js > math > nested > deep',
      'spec/mixed_spec.js > math > same name',
      'spec/mixed_spec.js > math > throws',
      'spec/mixed_spec.js > top level',
    ]);
    expect(byId['spec/mixed_spec.js > math > fails']).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringMatching(/^Expected 2 to be 3\./) });
    expect(byId['spec/mixed_spec.js > math > throws']).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringMatching(/^TypeError: boom/) });
    expect(byId['spec/mixed_spec.js > math > is pending']).toMatchObject({ outcome: 'skipped', message: 'Temporarily disabled with xit' });
    expect(byId['spec/mixed_spec.js > math > same name'].outcome).toBe('failed');
    expect(byId['spec/mixed_spec.js > math > nested > deep'].outcome).toBe('passed');
    expect(r).toMatchObject({ fileErrors: [], complete: true });
  });

  it('an afterAll that throws is the file’s error; a file that throws while loading leaves no report and is blamed from the output', () => {
    const r = jasmine.parse(readJ(`jasmine-${v}-afterall_spec.jsonl`), ctx('spec/afterall_spec.js'));
    expect(r.tests).toEqual([{ id: 'spec/afterall_spec.js > with afterAll > passes', file: 'spec/afterall_spec.js', outcome: 'passed' }]);
    expect(r.fileErrors).toEqual([{ file: 'spec/afterall_spec.js', kind: 'collection', message: expect.stringMatching(/^afterAll in with afterAll: Error: cleanup failed/) }]);
    const files = ['spec/mixed_spec.js', 'spec/crash_spec.js', 'spec/afterall_spec.js'];
    const run = parseRunReports(runnerFromCommand('npx jasmine {files}'), {
      files,
      reports: { 'jasmine-0.jsonl': readJ(`jasmine-${v}-mixed_spec.jsonl`), 'jasmine-2.jsonl': readJ(`jasmine-${v}-afterall_spec.jsonl`) },
      output: readJ(`jasmine-${v}-run.out.txt`),
      exitCode: 1,
      timedOut: false,
    });
    expect(run.fileErrors.map((e) => e.file).sort()).toEqual(['spec/afterall_spec.js', 'spec/crash_spec.js']);
    expect(run.fileErrors.find((e) => e.file === 'spec/crash_spec.js')!.message).toMatch(/spec file crashed while loading/);
  });
});

it('jasmine: detected from package.json, one file per invocation with swt’s reporter (the project’s own reporter dropped), --filter for reruns; *_spec.js files are test files', () => {
  expect(node.defaultRunner({ files: ['package.json'], packageJson: { devDependencies: { jasmine: '^5' }, scripts: { test: 'jasmine' } } })).toEqual({ kind: 'jasmine', template: 'npx jasmine {files}' });
  expect(runnerFromCommand('node ./bin/jasmine.js {files}').kind).toBe('jasmine');
  expect(runnerFromCommand('npx jasmine-node {files}').kind).toBe('file-level');
  const spec = runnerFromCommand('npx jasmine --reporter=jasmine-spec-reporter {files}');
  expect(spec.kind).toBe('jasmine');
  const cmd = buildTestCommand(spec, ['spec/a_spec.js'], '/swt-out');
  expect(cmd).not.toMatch(/\n/);
  expect(cmd).toContain(" > /swt-out/swt-jasmine-reporter.cjs; rc=0; ( export SWT_JASMINE_OUT=/swt-out/jasmine-0.jsonl; npx jasmine --reporter=/swt-out/swt-jasmine-reporter.cjs spec/a_spec.js ) || rc=$?;");
  const rerun = buildRerunCommand(spec, [{ file: 'spec/a_spec.js', ids: ['spec/a_spec.js > math > adds (1+1)'] }], 1, '/swt-out');
  expect(rerun).toContain("npx jasmine --reporter=/swt-out/c0-0/swt-jasmine-reporter.cjs --filter='adds \\(1\\+1\\)' spec/a_spec.js");
  for (const f of ['spec/a_spec.js', 'spec/parserSpec.js', 'src/x_spec.mjs']) expect([f, isTestFile(f)]).toEqual([f, true]);
  expect(isTestFile('src/OpenApiSpec.ts')).toBe(false);
});

/**
 * bun test's JUnit from real runs of bun 1.1.38 and 1.2.23 (the `bun` npm package, Node 22 image)
 * on fixtures/node/bun/*.test.ts.txt: bun 1.1 flattens describes into classname, innermost first;
 * bun 1.2 nests a testsuite per describe. A file that throws while loading is only in the output.
 */
const readB = (name: string) => readFileSync(join(process.cwd(), 'test', 'unit', 'fixtures', 'node', 'bun', name), 'utf8');

describe.each(['1.1.38', '1.2.23'])('bun %s', (v) => {
  const expected = (file: string) => ({
    [`${file} > adds`]: 'passed',
    [`${file} > fails`]: 'failed',
    [`${file} > throws`]: 'failed',
    [`${file} > skipped one`]: 'skipped',
    [`${file} > later`]: 'skipped',
    [`${file} > outer > inner > deep`]: 'passed',
    [`${file} > outer > same`]: 'failed',
  });

  it('ids as bun names them (file > describe > test) in both layouts; skip and todo skipped; a duplicate name failing once fails', () => {
    const r = bunTest.parse(readB(`bun-${v}-mixed.xml`), { files: ['test/mixed.test.ts'], output: '' });
    expect(Object.fromEntries(r.tests.map((t) => [t.id, t.outcome]))).toEqual(expected('test/mixed.test.ts'));
    expect(r.tests.find((t) => t.id.endsWith('> fails'))).toMatchObject({ failureKind: 'assertion', file: 'test/mixed.test.ts' });
    expect(r.fileErrors).toEqual([]);
  });

  it('a file that throws while loading, run beside another, is that file’s error (from the output)', () => {
    const files = ['test/mixed.test.ts', 'test/crash.test.ts'];
    const run = parseRunReports(runnerFromCommand('npx bun test {files}'), { files, reports: { 'junit.xml': readB(`bun-${v}-both.xml`) }, output: readB(`bun-${v}-both.out.txt`), exitCode: 1, timedOut: false });
    expect(Object.fromEntries(run.tests.map((t) => [t.id, t.outcome]))).toEqual(expected('test/mixed.test.ts'));
    expect(run.fileErrors).toEqual([{ file: 'test/crash.test.ts', kind: 'collection', message: expect.stringMatching(/module crashed while loading/) }]);
  });
});

it('bun test: detected from the test script, junit reporter options before the files, -t for reruns', () => {
  expect(node.defaultRunner({ files: ['package.json', 'bun.lockb'], packageJson: { scripts: { test: 'bun test' } } })).toEqual({ kind: 'bun-test', template: '"$HOME"/.swt-pm/bin/bun test {files}' });
  expect(node.defaultRunner({ files: ['package.json'], packageJson: { devDependencies: { bun: '^1.2' }, scripts: { test: 'bun test' } } })).toEqual({ kind: 'bun-test', template: 'npx bun test {files}' });
  const spec = runnerFromCommand('bun test {files}');
  expect(spec.kind).toBe('bun-test');
  expect(buildTestCommand(spec, ['test/a.test.ts'], '/swt-out')).toBe('mkdir -p /swt-out 2>/dev/null; bun test --reporter=junit --reporter-outfile=/swt-out/junit.xml test/a.test.ts');
  expect(buildRerunCommand(spec, [{ file: 'test/a.test.ts', ids: ['test/a.test.ts > outer > same'] }], 1, '/swt-out')).toContain("bun test --reporter=junit --reporter-outfile=/swt-out/c0-0/junit.xml -t same test/a.test.ts");
});

describe("a test script whose tool no runner reads: file-level, from the script's own tool", () => {
  const runnerFor = (test: string, deps: Record<string, string> = {}) => node.defaultRunner({ files: ['package.json', 'test.js'], packageJson: { devDependencies: deps, scripts: { test } } });

  it('takes the tool after the linters and wrappers, with its flags and their values but not its files (compact-encoding: `standard && brittle test.js`)', () => {
    expect(runnerFor('standard && brittle test.js', { brittle: '^3', standard: '^17' })).toEqual({ kind: 'file-level', template: 'npx brittle {files}', ecosystem: 'node' });
    expect(runnerFor('eslint . && c8 --reporter=lcov pta -r tsm test --bail')).toEqual({ kind: 'file-level', template: 'npx pta -r tsm --bail {files}', ecosystem: 'node' });
    expect(runnerFor('NODE_ENV=test zora test/*.js')).toEqual({ kind: 'file-level', template: 'npx zora {files}', ecosystem: 'node' });
  });

  it('keeps node --test where the script runs node itself, a task runner, or nothing (as before)', () => {
    for (const script of ['node test.js', 'npm run build && node test/index.js', 'gulp test', 'make test', 'echo "Error: no test specified" && exit 1', 'xo']) {
      expect(runnerFor(script)).toEqual({ kind: 'node-test', template: 'node --test {files}' });
    }
  });

  it('leaves a runner swt reads to its own parser', () => {
    expect(runnerFor('standard && tape test.js', { tape: '^5' })).toEqual({ kind: 'tap', template: 'npx tape {files}' });
    expect(runnerFor('eslint . && c8 --reporter=lcov uvu -r tsm test --bail')).toEqual({ kind: 'uvu', template: 'npx uvu -r tsm {files}' });
  });
});
