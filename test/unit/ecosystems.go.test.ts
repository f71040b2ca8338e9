import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { go, goPackagePeer, goTestName, goVersionOf, packagesOf } from '../../src/ecosystems/go/index.js';
import { packageDir, parseGoTestJson } from '../../src/ecosystems/go/goTestJson.js';
import { changedGoTests } from '../../src/ecosystems/go/changedTests.js';
import { compareRuns, judgedTests, reproduces } from '../../src/harness/classify.js';
import { renderText } from '../../src/harness/render.js';
import type { RunResult } from '../../src/results/types.js';
import { judgeRuns } from '../../src/generation/verify.js';
import { counterFor, withCoverage } from '../../src/coverage/instrument.js';
import { coverPackages, parseGoCoverProfile } from '../../src/coverage/goCover.js';
import { repoInfoOf } from '../../src/generation/repoFiles.js';
import { zeroShotPlusPrompt } from '../../src/generation/prompts.js';
import { planSnippetTest } from '../../src/generation/snippet/index.js';
import { buildTestCommand, detectRunner, runnerFromCommand } from '../../src/harness/runners.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { isTestFile, isTestPath } from '../../src/harness/testFiles.js';
import { environmentDefaults } from '../../src/pipeline/environmentDefaults.js';

// Real `go test -json` output (stdout) and the go command's stderr, captured from the module in
// fixtures/go/module with Debian bookworm's Go 1.19, Debian trixie's Go 1.24 (the offline golang image) and Go 1.26.
const FIX = fileURLToPath(new URL('./fixtures/go/', import.meta.url));
const read = (version: string, name: string) => readFileSync(join(FIX, version, name), 'utf8');
const FILES = ['calc/calc_test.go', 'broken/broken_test.go'];

describe.each(['go1.19', 'go1.24', 'go1.26'])('go test -json from %s', (version) => {
  const parsed = parseGoTestJson(read(version, 'build-panic-skip-dup.json'), { files: FILES, output: read(version, 'build-panic-skip-dup.stderr') });
  const byId = new Map(parsed.tests.map((t) => [t.id, t]));

  it('gives each test its Go id, with Go\'s #01 for duplicate subtest names', () => {
    expect([...byId.keys()].sort()).toEqual([
      'example.com/fx/calc.TestAdd',
      'example.com/fx/calc.TestAddWrong',
      'example.com/fx/calc.TestDivPanics',
      'example.com/fx/calc.TestSkipped',
      'example.com/fx/calc.TestTable',
      'example.com/fx/calc.TestTable/other_case',
      'example.com/fx/calc.TestTable/same',
      'example.com/fx/calc.TestTable/same#01',
      'example.com/fx/calc.TestTable/same#02',
    ]);
    expect(byId.get('example.com/fx/calc.TestTable/same')!.outcome).toBe('passed');
    expect(byId.get('example.com/fx/calc.TestTable/same#02')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('got 6 want 7') });
    expect(byId.get('example.com/fx/calc.TestAdd')!.file).toBe('calc/calc_test.go');
  });

  it('reads failures, skips and panics', () => {
    expect(byId.get('example.com/fx/calc.TestAddWrong')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('Add(2, 2) = 4, want 5') });
    expect(byId.get('example.com/fx/calc.TestSkipped')).toMatchObject({ outcome: 'skipped', message: expect.stringContaining('not on this platform') });
    expect(byId.get('example.com/fx/calc.TestDivPanics')).toMatchObject({ outcome: 'failed', failureKind: 'error', message: expect.stringContaining('integer divide by zero') });
  });

  it('turns a package that does not build into a build failure with the compiler\'s message', () => {
    expect(parsed.buildFailures).toEqual([{ unit: 'example.com/fx/broken', dir: 'broken', message: expect.stringContaining('undefined: New') }]);
    expect(parsed.fileErrors).toEqual([{ file: 'broken/broken_test.go', kind: 'collection', message: expect.stringContaining('undefined: New') }]);
    expect(parsed.tests.some((t) => t.id.startsWith('example.com/fx/broken'))).toBe(false);
  });

  it('reports the test a -timeout killed as a timeout, and its finished neighbour as passed', () => {
    const slow = parseGoTestJson(read(version, 'timeout.json'), { files: ['slow/slow_test.go'], output: read(version, 'timeout.stderr') });
    const ids = new Map(slow.tests.map((t) => [t.id, t]));
    expect(ids.get('example.com/fx/slow.TestQuick')!.outcome).toBe('passed');
    expect(ids.get('example.com/fx/slow.TestHangs')).toMatchObject({ outcome: 'failed', failureKind: 'timeout', message: expect.stringContaining('test timed out after 3s') });
  });

  it('runs through the harness\'s report reading, build failures included', () => {
    const run = parseRunReports(runnerFromCommand('go test {files}'), {
      files: FILES,
      reports: { 'go-test.json': read(version, 'build-panic-skip-dup.json') },
      output: read(version, 'build-panic-skip-dup.stderr'),
      exitCode: Number(read(version, 'build-panic-skip-dup.exit').replace('exit ', '')),
      timedOut: false,
    });
    expect(run.reportFound).toBe(true);
    expect(run.buildFailures?.map((b) => b.dir)).toEqual(['broken']);
    expect(run.tests).toHaveLength(9);
  });
});

describe('the Go ecosystem', () => {
  it('detects go.mod, reads its version and installs through the module proxy', () => {
    const facts = { files: ['go.mod', 'go.sum', 'calc/calc.go', 'calc/calc_test.go'], manifests: { 'go.mod': 'module example.com/x\n\ngo 1.22.3\n' } };
    expect(detectRunner(facts)).toEqual({ kind: 'go-test', template: 'go test {files}' });
    expect(environmentDefaults(facts)).toEqual({ image: 'golang:1.22', install: expect.stringMatching(/^go mod download && \{ go test .* -exec true \.\/\.\.\. .*\|\| echo 'swt: go mod download failed/) });
    expect(goVersionOf('module m\ngo 1.21\ntoolchain go1.23.4\n')).toBe('1.23');
    expect(goVersionOf('module m\n')).toBeUndefined();
    expect(environmentDefaults({ files: ['go.mod'], manifests: { 'go.mod': 'module m\n' } }).image).toBe('golang:1.24');
  });

  it('picks Go or the front end\'s runner by the files the test patch touches', () => {
    const facts = { files: ['go.mod', 'main.go', 'web/package.json', 'package.json'], manifests: { 'go.mod': 'module m\ngo 1.22\n', 'package.json': '{"devDependencies":{"vitest":"1"}}' } };
    expect(detectRunner(facts, ['web/a.test.ts']).kind).toBe('vitest');
    expect(detectRunner(facts, ['api/handler_test.go']).kind).toBe('go-test');
  });

  it('knows _test.go files and testdata', () => {
    expect(isTestFile('calc/calc_test.go')).toBe(true);
    expect(isTestFile('calc/calc.go')).toBe(false);
    expect(isTestFile('calc/testdata/x_test.go')).toBe(false);
    expect(isTestPath('calc/testdata/golden.txt')).toBe(true);
    expect(isTestPath('calc/testdata/x_test.go')).toBe(true);
  });

  it('a new test file\'s package peer: another _test.go of its directory (its baseline runs the package without it)', () => {
    const files = ['calc/z_test.go', 'calc/calc.go', 'calc/a_test.go', 'calc/sub/b_test.go', 'root_test.go', 'calc/testdata/x.txt'];
    expect(go.unitPeer).toBe(goPackagePeer);
    expect(goPackagePeer('calc/new_test.go', files)).toBe('calc/a_test.go');
    expect(goPackagePeer('calc/a_test.go', files)).toBe('calc/z_test.go');
    expect(goPackagePeer('new_test.go', files)).toBe('root_test.go');
    // A new package, or one with no test yet: nothing else of it runs.
    expect(goPackagePeer('calc/sub/deeper/n_test.go', files)).toBeUndefined();
    expect(goPackagePeer('other/n_test.go', files)).toBeUndefined();
  });

  it('runs the packages of the touched files, with JSON events into the report', () => {
    expect(packagesOf(['a_test.go', 'x/y/b_test.go', 'x/y/c_test.go'])).toEqual(['.', './x/y']);
    expect(buildTestCommand(runnerFromCommand('go test {files}'), ['calc/calc_test.go', 'x_test.go'], '/swt-out')).toBe(
      'mkdir -p /swt-out 2>/dev/null; export GOTMPDIR="$HOME/.cache/swt-go-tmp"; mkdir -p "$GOTMPDIR"; go test -json -count=1 -vet=off ./calc . > /swt-out/go-test.json',
    );
    // One package with the default command, in a container kept for reruns: the run leaves its test binary for them.
    expect(buildTestCommand(runnerFromCommand('go test {files}'), ['calc/calc_test.go'], '/swt-out', { kept: true })).toBe(
      'mkdir -p /swt-out 2>/dev/null; export GOTMPDIR="$HOME/.cache/swt-go-tmp"; mkdir -p "$GOTMPDIR"; go test -json -count=1 -vet=off -o "$GOTMPDIR/swt-first-run.test" ./calc > /swt-out/go-test.json',
    );
    expect(buildTestCommand(runnerFromCommand('go test {files}'), ['calc/calc_test.go'], '/swt-out')).not.toContain(' -o ');
    expect(packageDir('example.com/m/x/y', ['', 'y', 'x/y'])).toBe('x/y');
    expect(packageDir('example.com/m', ['', 'x'])).toBe('');
  });

  it('reruns chosen tests with -run on the file\'s package: whole top-level tests, ids exactly as parsed', () => {
    const spec = runnerFromCommand('go test {files}');
    const ids = ['example.com/fx/calc.TestAddWrong', 'example.com/fx/calc.TestTable/same#02', 'example.com/fx/calc.TestTable/other_case'];
    // The first run's own binary when its container kept it, else go test -run.
    expect(go.runners[0].commandForTests!(spec, 'calc/calc_test.go', ids, '/swt-out/c0-0', 'go-test.json')).toBe(
      'export GOTMPDIR="$HOME/.cache/swt-go-tmp"; mkdir -p "$GOTMPDIR"; if [ -x "$GOTMPDIR/swt-first-run.test" ]; then ' +
        // The test2json the rounds found in this container, else go tool test2json (compiledRounds.test.ts).
        'swt_tool=; [ -f "$GOTMPDIR/swt-test2json" ] && read -r swt_tool < "$GOTMPDIR/swt-test2json"; swt_test2json() { if [ -x "$swt_tool" ]; then "$swt_tool" "$@"; else go tool test2json "$@"; fi; }; ' +
        `( cd ./calc && "$GOTMPDIR/swt-first-run.test" -test.count=1 -test.timeout=10m0s -test.v=test2json -test.run='^(TestAddWrong|TestTable)$' 2>&1 ) | swt_test2json -t -p example.com/fx/calc > /swt-out/c0-0/go-test.json; ` +
        `else go test -json -count=1 -vet=off -run='^(TestAddWrong|TestTable)$' ./calc > /swt-out/c0-0/go-test.json; fi`,
    );
    // A template of the project's own (its go flags would not reach the binary): go test -run only.
    expect(go.runners[0].commandForTests!(runnerFromCommand('go test -short {files}'), 'calc/calc_test.go', ids, '/swt-out/c0-0', 'go-test.json')).toBe(
      `export GOTMPDIR="$HOME/.cache/swt-go-tmp"; mkdir -p "$GOTMPDIR"; go test -short -json -count=1 -vet=off -run='^(TestAddWrong|TestTable)$' ./calc > /swt-out/c0-0/go-test.json`,
    );
    // A package path may hold dots and a subtest's name anything.
    expect(goTestName('gopkg.in/yaml.v3.TestDecode/a.b/c')).toBe('TestDecode');
    expect(goTestName('example.com/m.ExampleParse')).toBe('ExampleParse');
  });

});

describe('a Go package that does not build at base', () => {
  // The test patch adds TestNew (calling New, which only the fix adds) to broken/, whose TestOld
  // already passed: at base the package does not build, so TestOld fails with it.
  const TEST_PATCH = [
    'diff --git a/broken/broken_test.go b/broken/broken_test.go',
    '--- a/broken/broken_test.go',
    '+++ b/broken/broken_test.go',
    '@@ -8,3 +8,9 @@ func TestOld(t *testing.T) {',
    ' \t\tt.Fatal("old")',
    ' \t}',
    ' }',
    '+',
    '+func TestNew(t *testing.T) {',
    '+\tif New() != 2 {',
    '+\t\tt.Fatal("new")',
    '+\t}',
    '+}',
    '',
  ].join('\n');
  const FILES = ['broken/broken_test.go'];
  const baseRun = (version: string): RunResult => {
    const parsed = parseRunReports(runnerFromCommand('go test {files}'), {
      files: FILES,
      reports: { 'go-test.json': read(version, 'build-panic-skip-dup.json') },
      output: read(version, 'build-panic-skip-dup.stderr'),
      exitCode: 1,
      timedOut: false,
    });
    // The captured run also ran calc/; this side is about broken/ alone.
    const tests = parsed.tests.filter((t) => t.id.startsWith('example.com/fx/broken'));
    return { tests, fileErrors: parsed.fileErrors, ...(parsed.buildFailures ? { buildFailures: parsed.buildFailures } : {}), timedOut: false, exitCode: 1, output: read(version, 'build-panic-skip-dup.stderr'), durationMs: 1 };
  };
  const headRun: RunResult = {
    tests: [
      { id: 'example.com/fx/broken.TestOld', file: 'broken/broken_test.go', outcome: 'passed' },
      { id: 'example.com/fx/broken.TestNew', file: 'broken/broken_test.go', outcome: 'passed' },
    ],
    fileErrors: [],
    timedOut: false,
    exitCode: 0,
    output: '',
    durationMs: 1,
  };

  it('names the tests the patch adds or changes, by package and function', () => {
    expect(changedGoTests(TEST_PATCH)).toEqual([{ dir: 'broken', name: 'TestNew' }]);
    const edit = ['--- a/x_test.go', '+++ b/x_test.go', '@@ -3,4 +3,4 @@ func TestA(t *testing.T) {', ' \ta := 1', '-\tb := 2', '+\tb := 3', ' }', ' ', ' func TestB(t *testing.T) {', '+\tt.Log("x")', ''].join('\n');
    expect(changedGoTests(edit)).toEqual([{ dir: '', name: 'TestA' }, { dir: '', name: 'TestB' }]);
  });

  it.each(['go1.19', 'go1.24', 'go1.26'])('judges only the added test (%s): TestNew F→P, TestOld not judged, never F→P', (version) => {
    const changedTest = go.changedTests!(TEST_PATCH);
    const v = compareRuns([baseRun(version)], [headRun], { changedTest });
    const byId = Object.fromEntries(v.tests.map((t) => [t.id.replace('example.com/fx/broken.', ''), t]));
    expect(byId.TestNew).toMatchObject({ transition: 'F2P', baseFailure: { kind: 'collection', message: expect.stringContaining('undefined: New') } });
    expect(byId.TestNew.notJudged).toBeUndefined();
    expect(byId.TestOld.notJudged).toMatch(/example\.com\/fx\/broken did not build at base/);
    expect(judgedTests(v).map((t) => t.id)).toEqual(['example.com/fx/broken.TestNew']);
    expect(v.success).toBe(true);
    expect(v.counts.F2P).toBe(2); // both moved; only one is judged
    // Without the ecosystem's knowledge of changed tests, the neighbour would count as F→P.
    expect(judgedTests(compareRuns([baseRun(version)], [headRun])).filter(reproduces)).toHaveLength(2);
    expect(renderText(v)).toContain('(not judged)');
  });

  it('refuses a reproduction that fails at base only because it calls something that does not exist', () => {
    const files = [{ path: 'broken/broken_test.go', isNew: false, isDeleted: false, text: '', added: ['func TestNew(t *testing.T) {', '\tif New() != 2 {'] }];
    const j = judgeRuns({ title: 'New returns the wrong value', body: 'New() should be 2' }, files as never, [baseRun('go1.26'), baseRun('go1.26')]);
    expect(j.status).toBe('not-reproduced');
    expect(j.ownError).toBe(true);
    expect(j.reason).toMatch(/its own error.*undefined: New/);
  });
});

describe('Go in the other layers', () => {
  it('counts lines for ΔC from go test\'s own count-mode cover profile', () => {
    expect(counterFor('go-test')).toBe('go-cover');
    // Real profile (Go 1.26) of calc/ with TestAdd and TestTable run: Add 5 times, Div never.
    expect(parseGoCoverProfile(read('go1.26', 'cover-count.out'), ['calc/calc.go'])).toEqual({ 'calc/calc.go': { 3: 5 } });
    expect(coverPackages(['calc/calc.go', 'main.go', 'calc/x.go'])).toEqual(['./calc', '.']);
    const cmd = withCoverage('go-cover', 'go test -json ./calc > /swt-out/go-test.json', ['calc/calc.go']);
    expect(cmd).toContain("GOFLAGS='-covermode=count -coverpkg=./calc -coverprofile=/swt-out/swt-coverage/go.cov'");
  });
  it('generation names the language and the snippet strategy refuses with the reason', async () => {
    const info = repoInfoOf(['go.mod', 'clampx.go', 'clampx_test.go'], 'go test {files}', undefined, async () => undefined);
    expect(info).toMatchObject({ runner: 'go-test', language: 'go' });
    expect(zeroShotPlusPrompt({ issue: { title: 't', body: 'b' }, sources: [], tests: [], testCommand: 'go test {files}', language: 'go' })).toContain('Tests are written in Go and run with `go test {files}`');
    const plan = await planSnippetTest({ title: 'Clamp(15, 0, 10) returns 15', body: '```go\nClamp(15, 0, 10) // 15, want 10\n```' }, info);
    expect(plan).toEqual({ ok: false, reason: expect.stringContaining('no test writer for go') });
  });
});
