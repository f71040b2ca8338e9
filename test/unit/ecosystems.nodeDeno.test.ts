/**
 * Deno's test runner in the Node module, on JUnit reports (`--junit-path`) and output captured
 * from real runs of deno 1.46.3, 2.0.6 and 2.9.6 (the `deno` npm package, Node 22 image) on the
 * test files beside them (fixtures/node/deno/*_test.ts.txt): passes, assertion failures, a throw,
 * `Deno.test.ignore` and `ignore: true`, nested `t.step`s (one failing, one ignored), two tests
 * named alike (one failing), a test that needs `--allow-env`; a file that throws while loading,
 * one that does not type-check and one importing a module that does not exist; a `--filter` rerun.
 * Plus detection (package.json script, deno.json/deno.jsonc task), the project's own options,
 * the install, the commands and Deno's test-file globs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { node } from '../../src/ecosystems/node/index.js';
import { denoTest } from '../../src/ecosystems/node/runners.js';
import { denoTestOptions } from '../../src/ecosystems/node/deno.js';
import { buildRerunCommand, buildTestCommand, runnerFromCommand } from '../../src/harness/runners.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { configRules, isTestFile } from '../../src/harness/testFiles.js';
import { parseIfLoaded } from '../../src/patch/structure.js';

const read = (name: string) => readFileSync(join(process.cwd(), 'test', 'unit', 'fixtures', 'node', 'deno', name), 'utf8');
const F = 'test/mixed_test.ts';
const ctx = (file: string, output = '') => ({ files: [file], file, output });

describe.each(['1.46.3', '2.0.6', '2.9.6'])('deno %s --junit-path', (v) => {
  it('ids `file > test`, steps `file > test > step > …`; ignored tests and steps skipped; a duplicate name failing once fails', () => {
    const r = denoTest.parse(read(`deno-${v}-mixed.xml`), ctx(F));
    expect(Object.fromEntries(r.tests.map((t) => [t.id, t.outcome]))).toEqual({
      [`${F} > adds`]: 'passed',
      [`${F} > fails`]: 'failed',
      [`${F} > throws`]: 'failed',
      [`${F} > ignored one`]: 'skipped',
      [`${F} > ignored by option`]: 'skipped',
      // a test with steps is a test of its own (failed by its failing step) and the suite of its steps
      [`${F} > outer`]: 'failed',
      [`${F} > outer > inner`]: 'passed',
      [`${F} > outer > inner > deep`]: 'passed',
      [`${F} > outer > failing step`]: 'failed',
      [`${F} > outer > ignored step`]: 'skipped',
      [`${F} > same`]: 'failed',
      // no --allow-env: Deno's default permissions
      [`${F} > reads env`]: 'failed',
    });
    const byId = Object.fromEntries(r.tests.map((t) => [t.id, t]));
    expect(byId[`${F} > fails`]).toMatchObject({ file: F, failureKind: 'assertion' });
    // 1.46's node:assert colours its diff even in the XML: the message has no escape codes
    expect(byId[`${F} > fails`].message).toMatch(/^Uncaught AssertionError: (Values are not strictly equal|Expected values to be strictly equal)/);
    expect(byId[`${F} > fails`].message).not.toMatch(/\u001b/);
    expect(byId[`${F} > throws`]).toMatchObject({ failureKind: 'error', message: expect.stringMatching(/TypeError: boom/) });
    expect(byId[`${F} > reads env`].message).toMatch(/Requires env access to "HOME", run again with the --allow-env flag/);
    expect(r.fileErrors).toEqual([]);
  });

  it('with the permission the project gives (--allow-env) the test that reads the environment passes', () => {
    const r = denoTest.parse(read(`deno-${v}-mixed-env.xml`), ctx(F));
    expect(r.tests.find((t) => t.id === `${F} > reads env`)?.outcome).toBe('passed');
  });

  it("a file that throws while loading: an empty report, the output's “(uncaught error)” is the file's error", () => {
    const file = 'test/crash_test.ts';
    const r = denoTest.parse(read(`deno-${v}-crash.xml`), ctx(file, read(`deno-${v}-crash.out.txt`)));
    expect(r.tests).toEqual([]);
    expect(r.fileErrors).toEqual([{ file, kind: 'collection', message: expect.stringMatching(/^error: \(in promise\) Error: module crashed while loading/) }]);
  });

  it('a file that does not type-check, or imports what does not exist: no report, the type error from the output', () => {
    for (const [name, file, text] of [['typeerr', 'test/typeerr_test.ts', /TS2322/], ['missing', 'test/missing_test.ts', /TS2307 \[ERROR\]: Cannot find module|Module not found "file:.*\/src\/nope\.ts"/]] as const) {
      const run = parseRunReports(runnerFromCommand('deno test {files}'), { files: [file], reports: {}, output: read(`deno-${v}-${name}.out.txt`), exitCode: 1, timedOut: false });
      expect(run.tests).toEqual([]);
      expect(run.fileErrors).toEqual([{ file, kind: 'collection', message: expect.stringMatching(text) }]);
    }
    // a test importing what does not exist is broken itself (a reproduction failing only so is refused); a type error of its own is not that
    expect(node.ownErrorText!.test(read(`deno-${v}-missing.out.txt`))).toBe(true);
    expect(node.ownErrorText!.test(read(`deno-${v}-typeerr.out.txt`))).toBe(false);
  });

  it('a --filter rerun reports only the tests it ran (Deno lists the others as skipped with no time: left out)', () => {
    const r = denoTest.parse(read(`deno-${v}-filter.xml`), ctx(F));
    expect(r.tests.map((t) => [t.id, t.outcome])).toEqual([[`${F} > same`, 'failed']]);
  });
});

const pkg = (scripts: Record<string, string>, devDependencies: Record<string, string> = {}) => JSON.stringify({ name: 'x', scripts, devDependencies });

describe('deno test: detection, options, install', () => {
  it('a package.json script running deno test: its permissions and config kept, its files, watch and reporter dropped', () => {
    const facts = { files: ['package.json', 'src/a_test.ts'], manifests: { 'package.json': pkg({ test: 'deno fmt --check && deno test -A --unstable-kv --config ./deno.test.json --reporter=dot --watch src/' }) } };
    expect(node.detect(facts)).toBe(30);
    expect(node.defaultRunner(facts)).toEqual({ kind: 'deno-test', template: '"$HOME"/.swt-pm/bin/deno test -A --unstable-kv --config ./deno.test.json {files}' });
    // deno is no dependency: npm's install, then the Deno CLI from the npm registry
    const install = node.environment(facts).install;
    expect(install).toMatch(/^npm install --no-audit --no-fund; /);
    expect(install).toContain("npm install -g --prefix \"$HOME\"/.swt-pm/deno@2 --no-audit --no-fund --loglevel=error deno@2 >/dev/null");
    expect(install).toContain('ln -sf "$HOME"/.swt-pm/deno@2/bin/deno "$HOME"/.swt-pm/bin/deno');
  });

  it('the deno npm package as a dependency runs through npx (its own version)', () => {
    const facts = { files: ['package.json'], manifests: { 'package.json': pkg({ test: 'deno test --allow-read' }, { deno: '1.46.3' }) } };
    expect(node.defaultRunner(facts)).toEqual({ kind: 'deno-test', template: 'npx deno test --allow-read {files}' });
    expect(node.environment(facts).install).toBe('npm install --no-audit --no-fund');
  });

  it('deno.json or deno.jsonc (comments, trailing commas) with a test task and no package.json: detected, the task’s permissions, only the CLI installed', () => {
    const jsonc = '{\n  // tasks\n  "tasks": { "test": "deno test --allow-read=. --allow-env", },\n}\n';
    const facts = { files: ['deno.jsonc', 'mod.ts', 'mod_test.ts'], manifests: { 'deno.jsonc': jsonc } };
    expect(node.detect(facts)).toBe(30);
    expect(node.defaultRunner(facts)).toEqual({ kind: 'deno-test', template: '"$HOME"/.swt-pm/bin/deno test --allow-read=. --allow-env {files}' });
    expect(node.environment(facts)).toEqual({ image: 'node:22', install: expect.stringMatching(/^if npm install -g --prefix "\$HOME"\/\.swt-pm\/deno@2 .* deno@2 >\/dev\/null/) });
    // Deno 2.1's object form of a task
    const obj = { files: ['deno.json'], manifests: { 'deno.json': JSON.stringify({ tasks: { test: { command: 'deno test -A', description: 'tests' } } }) } };
    expect(node.defaultRunner(obj).template).toBe('"$HOME"/.swt-pm/bin/deno test -A {files}');
    // deno.json's imports fetched into Deno's cache at install time (no deno.lock written), jsr: failing only with a note
    const withImports = { files: ['deno.json', 'a_test.ts'], manifests: { 'deno.json': JSON.stringify({ tasks: { test: 'deno test' }, imports: { 'is-odd': 'npm:is-odd@3.0.1' } }) } };
    expect(node.environment(withImports).install).toMatch(/"\$HOME"\/\.swt-pm\/bin\/deno; env \$\{SSL_CERT_FILE:\+DENO_CERT="\$SSL_CERT_FILE"\} "\$HOME"\/\.swt-pm\/bin\/deno install --no-lock \|\| echo 'swt: deno install of the deno\.json imports failed/);
    expect(node.environment({ ...withImports, files: [...withImports.files, 'deno.lock'] }).install).toContain('/bin/deno install || echo');
    expect(node.environment(facts).install).not.toContain('bin/deno install');
    // a deno.json with no test task is no runner
    expect(node.detect({ files: ['deno.json'], manifests: { 'deno.json': '{"tasks":{"dev":"deno run main.ts"}}' } })).toBe(0);
  });

  it('another runner the project names wins over a deno.json task', () => {
    const facts = { files: ['package.json', 'deno.json'], manifests: { 'package.json': pkg({ test: 'vitest' }, { vitest: '^3' }), 'deno.json': '{"tasks":{"test":"deno test"}}' } };
    expect(node.defaultRunner(facts).kind).toBe('vitest');
  });

  it('options: a value in the next word kept with its option, shell syntax and positional files dropped', () => {
    expect(denoTestOptions('deno test -c deno.json --allow-net=localhost:8080 --filter foo tests/ -- --arg')).toEqual(['-c', 'deno.json', '--allow-net=localhost:8080']);
    expect(denoTestOptions('deno test --allow-run=$(whoami) -A')).toEqual(['-A']);
    expect(denoTestOptions('deno task test')).toEqual([]);
  });
});

it('deno test: one file per invocation, --junit-path before the files; reruns --filter the top-level tests by exact name', () => {
  const spec = runnerFromCommand('deno test -A {files}');
  expect(spec.kind).toBe('deno-test');
  const cmd = buildTestCommand(spec, ['test/a_test.ts', 'test/b_test.ts'], '/swt-out');
  expect(cmd).toContain('deno test -A --junit-path=/swt-out/junit-0.xml test/a_test.ts');
  expect(cmd).toContain('deno test -A --junit-path=/swt-out/junit-1.xml test/b_test.ts');
  const rerun = buildRerunCommand(spec, [{ file: 'test/a_test.ts', ids: ['test/a_test.ts > outer > inner > deep', 'test/a_test.ts > a (b)'] }], 1, '/swt-out');
  expect(rerun).toContain("deno test -A --junit-path=/swt-out/c0-0/junit-0.xml --filter='/^(?:outer|a \\(b\\))$/' test/a_test.ts");
});

it("Deno's test files: `*_test`, `*.test` and `test` modules anywhere when Deno runs the tests, and deno.json's test.include/exclude", () => {
  const rules = configRules({ 'deno.json': JSON.stringify({ tasks: { test: 'deno test' }, test: { include: ['checks/*.ts', 'tools/'], exclude: ['src/vendor/'] } }) }, parseIfLoaded);
  for (const f of ['src/mod_test.ts', 'lib/util.test.mjs', 'test.ts', 'checks/x.ts', 'tools/a/x_test.js']) expect([f, isTestFile(f, rules)]).toEqual([f, true]);
  for (const f of ['tools/x.ts', 'src/vendor/y_test.ts']) expect([f, isTestFile(f, rules)]).toEqual([f, false]);
  expect(isTestFile('src/mod_test.ts')).toBe(false);
  expect(isTestFile('src/mod.ts', rules)).toBe(false);
  const viaScript = configRules({ 'package.json': pkg({ test: 'deno test -A' }) }, parseIfLoaded);
  expect(isTestFile('src/mod_test.ts', viaScript)).toBe(true);
});
