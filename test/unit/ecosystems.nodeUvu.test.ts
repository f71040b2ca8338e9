/**
 * The Node module's uvu runner, on the JSON lines swt's hook wrote in real runs of uvu 0.5.6, 0.4.1
 * and 0.3.5 (Node 22, swt-base/node:22, the harness's own prepare + command, one file per run) on
 * the test files beside them (fixtures/node/uvu/*.txt): a failing file with suites, duplicate
 * names, test.skip, an async throw and a failing after.each; test.only; a file that throws while
 * loading; a before hook that throws (uvu itself then runs nothing and exits 0); an ES module file
 * (0.3/0.4's CLI cannot load one); and a `-r esm` package whose test imports `../src`, run with
 * esm dropped (0.5.6 and 0.3.5). Plus the command built from a user's template and detection from package.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { node } from '../../src/ecosystems/node/index.js';
import { uvu } from '../../src/ecosystems/node/runners.js';
import { uvuTemplate } from '../../src/ecosystems/node/uvu.js';
import { buildTestCommand, runnerFromCommand } from '../../src/harness/runners.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';

const read = (name: string) => readFileSync(join(process.cwd(), 'test', 'unit', 'fixtures', 'node', 'uvu', name), 'utf8');
const ctx = (v: string, name: string, file: string) => ({ files: [file], file, output: read(`uvu-${v}-${name}.out.txt`) });

describe.each(['0.5.6', '0.4.1', '0.3.5'])('uvu %s with swt’s hook', (v) => {
  it('a failing file: suites and the default suite, passes, assertion and error failures, duplicate names (a failure wins), test.skip', () => {
    const r = uvu.parse(read(`uvu-${v}-mixed.jsonl`), ctx(v, 'mixed', 'test/mixed.js'));
    const byId = Object.fromEntries(r.tests.map((t) => [t.id, t]));
    expect(r.complete).toBe(true);
    expect(r.fileErrors).toEqual([]);
    expect(byId['test/mixed.js > math > adds'].outcome).toBe('passed');
    expect(byId['test/mixed.js > math > subtracts wrongly']).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(byId['test/mixed.js > math > subtracts wrongly'].message).toMatch(/^Assertion: Expected values to be strictly equal:/);
    expect(byId['test/mixed.js > math > same name']).toMatchObject({ outcome: 'failed', message: expect.stringMatching(/second of the same name fails/) });
    expect(byId['test/mixed.js > math > later']).toMatchObject({ outcome: 'skipped', message: 'test.skip' });
    expect(byId['test/mixed.js > math > async throws']).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringMatching(/^TypeError: boom/) });
    expect(byId['test/mixed.js > top level passes'].outcome).toBe('passed');
    expect(byId['test/mixed.js > top level fails']).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    // no frame of swt's hook in a message
    expect(r.tests.every((t) => !/swt-uvu-hook/.test(t.message ?? ''))).toBe(true);
    if (v === '0.3.5') {
      // 0.3 gives hooks no ctx.__test__: the after.each never throws there
      expect(byId['test/mixed.js > hooks > after each fails here'].outcome).toBe('passed');
      expect(byId['test/mixed.js > hooks > fine'].outcome).toBe('passed');
    } else {
      expect(byId['test/mixed.js > hooks > after each fails here']).toMatchObject({ outcome: 'failed', message: expect.stringMatching(/afterEach broke/) });
      // the after.each throws again in uvu's catch: the suite stops there
      expect(byId['test/mixed.js > hooks > fine']).toBeUndefined();
    }
  });

  it('a run killed midway (a timeout: no exit record, a line cut short) is incomplete and keeps what it reported', () => {
    const lines = read(`uvu-${v}-mixed.jsonl`).trim().split('\n');
    const cut = [...lines.slice(0, 6), lines[6]!.slice(0, 20)].join('\n');
    const r = uvu.parse(cut, ctx(v, 'mixed', 'test/mixed.js'));
    expect(r.complete).toBe(false);
    expect(r.tests.map((t) => t.id)).toEqual(['test/mixed.js > math > later', 'test/mixed.js > math > adds', 'test/mixed.js > math > subtracts wrongly']);
  });

  it('test.only: the other tests of the suite are skipped', () => {
    const r = uvu.parse(read(`uvu-${v}-only.jsonl`), ctx(v, 'only', 'test/only.js'));
    expect(r.tests).toEqual([
      { id: 'test/only.js > focus > not focused', file: 'test/only.js', outcome: 'skipped', message: 'not in test.only' },
      { id: 'test/only.js > focus > focused', file: 'test/only.js', outcome: 'passed' },
    ]);
  });

  it('a file that throws while loading, and a before hook that throws, are the file’s errors', () => {
    const crash = uvu.parse(read(`uvu-${v}-crash.jsonl`), ctx(v, 'crash', 'test/crash.js'));
    expect(crash.tests).toEqual([]);
    expect(crash.fileErrors).toHaveLength(1);
    expect(crash.fileErrors[0]).toMatchObject({ file: 'test/crash.js', kind: 'collection' });
    expect(crash.fileErrors[0]!.message).toMatch(/did not load[\s\S]*load failure in crash\.js/);
    const before = uvu.parse(read(`uvu-${v}-before.jsonl`), ctx(v, 'before', 'test/before.js'));
    expect(read(`uvu-${v}-before.out.txt`)).toMatch(/exit 0\s*$/);
    expect(before.tests).toEqual([]);
    expect(before.fileErrors[0]!.message).toMatch(/^before hook of suite "setup": Error: before hook broke/);
  });

  it('an ES module test file', () => {
    const r = uvu.parse(read(`uvu-${v}-esm.jsonl`), ctx(v, 'esm', 'test/esm.test.mjs'));
    if (v === '0.5.6') {
      expect(r.tests.map((t) => [t.id, t.outcome])).toEqual([
        ['test/esm.test.mjs > esm suite > works', 'passed'],
        ['test/esm.test.mjs > esm suite > fails', 'failed'],
        ['test/esm.test.mjs > esm top', 'passed'],
      ]);
      expect(r.fileErrors).toEqual([]);
    } else {
      // uvu before 0.5 requires every file: an .mjs does not load
      expect(r.tests).toEqual([]);
      expect(r.fileErrors[0]!.message).toMatch(/did not load/);
    }
  });
});

it.each(['0.5.6', '0.3.5'])('uvu %s -r esm on Node 22: esm dropped, the test’s `../src` directory import resolved, `uvu` imported as its CommonJS build (which 0.3’s CLI fills), its test passes (real run)', (v) => {
  expect(read('esm-loader-test-index.js.txt')).toContain("import add from '../src';");
  const out = read(`uvu-${v}-esm-loader-dropped.out.txt`);
  expect(out).toContain('swt: dropped -r esm');
  const r = uvu.parse(read(`uvu-${v}-esm-loader-dropped.jsonl`), { files: ['test/index.js'], file: 'test/index.js', output: out });
  expect(r.tests).toEqual([{ id: 'test/index.js > adds', file: 'test/index.js', outcome: 'passed' }]);
  expect(r.fileErrors).toEqual([]);
});

it('the command: the template’s dir, pattern and -C dropped, each file as its dir and an anchored pattern, the hook preloaded', () => {
  expect(uvuTemplate('npx uvu -r esm test -i suites')).toEqual({ template: 'npx uvu -i suites {files}', droppedEsm: true });
  expect(uvuTemplate('npm run build && uvu -r tsm tests --bail && echo ok')).toEqual({ template: 'npm run build && uvu -r tsm --bail {files} && echo ok', droppedEsm: false });
  const spec = runnerFromCommand('npx uvu -r esm test -i suites');
  expect(spec.kind).toBe('uvu');
  const cmd = buildTestCommand(spec, ['test/a.b.js', 'index.test.js']);
  expect(cmd).toContain("export SWT_UVU_OUT=/swt-out/uvu-0.jsonl; export SWT_UVU_ESM=1;");
  expect(cmd).toContain('export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--require /swt-out/swt-uvu-hook.cjs"; npx uvu -i suites test \'^a\\.b\\.js$\'');
  expect(cmd).toContain("npx uvu -i suites . '^index\\.test\\.js$'");
  expect(cmd).toContain("> /swt-out/swt-uvu-hook.cjs;");
  // a run whose file crashed before the hook wrote a thing: the harness blames the file
  const parsed = parseRunReports(spec, { files: ['test/a.b.js'], reports: {}, output: 'Error: boom\n    at test/a.b.js:1', exitCode: 1, timedOut: false });
  expect(parsed.fileErrors.map((e) => e.file)).toEqual(['test/a.b.js']);
});

it('uvu: detected from package.json with the script’s -r modules', () => {
  expect(node.defaultRunner({ files: ['package.json', 'test/test.js'], packageJson: { devDependencies: { uvu: '^0.5.6' }, scripts: { test: 'uvu test' } } })).toEqual({ kind: 'uvu', template: 'npx uvu {files}' });
  expect(node.defaultRunner({ files: ['package.json', 'test/index.ts'], packageJson: { devDependencies: { uvu: '0.5.1', tsm: '2' }, scripts: { build: 'bundt', test: 'uvu -r tsm test' } } })).toEqual({ kind: 'uvu', template: 'npx uvu -r tsm {files}' });
  expect(node.runnerNames).toContain('uvu');
});
