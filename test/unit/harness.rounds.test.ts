import { confirmedInProcess, joinRounds, literalsOf, roundPlan, titlesOf } from '../../src/harness/rounds.js';
import { buildRerunCommand, buildTestCommand, roundReportName, roundsFresh, roundsInProcess, runnerFromCommand, whyNoRounds } from '../../src/harness/runners.js';
import { VITEST_ROUNDS_SOURCE } from '../../src/ecosystems/node/vitestRounds.js';
import { ROUNDS_PLUGIN_SOURCE } from '../../src/ecosystems/python/rounds.js';
import type { RunResult } from '../../src/results/types.js';
import { runTestsKept } from '../../src/harness/runTests.js';

const run = (tests: Array<[string, 'passed' | 'failed']>): RunResult => ({ tests: tests.map(([id, outcome]) => ({ id, outcome })), fileErrors: [], timedOut: false, exitCode: 0, output: '', durationMs: 1 });

const PATCH = [
  'diff --git a/tests/test_a.py b/tests/test_a.py',
  '--- a/tests/test_a.py',
  '+++ b/tests/test_a.py',
  '@@ -10,3 +10,5 @@ def test_old():',
  '     assert True',
  '-    # gone',
  '+',
  '+def test_new():',
  '+    assert f() == 1',
  ' ',
  'diff --git a/tests/test_b.py b/tests/test_b.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/tests/test_b.py',
  '@@ -0,0 +1,2 @@',
  '+def test_b():',
  '+    pass',
  'diff --git a/src/f.py b/src/f.py',
  '--- a/src/f.py',
  '+++ b/src/f.py',
  '@@ -1,1 +1,1 @@',
  '-x = 0',
  '+x = 1',
  '',
].join('\n');

describe('roundPlan: which lines the first run\'s rounds ask for', () => {
  it('the added lines of each run test file, by their new-file numbers; other files are not asked for', () => {
    expect(roundPlan(PATCH, ['tests/test_a.py', 'tests/test_b.py'], 2)).toEqual({ rounds: 2, lines: { 'tests/test_a.py': [11, 12, 13], 'tests/test_b.py': [1, 2] } });
  });

  it('nothing to ask for: no rounds, no added line in a run file, an empty patch', () => {
    expect(roundPlan(PATCH, ['tests/test_a.py'], 0)).toBeUndefined();
    expect(roundPlan(PATCH, ['tests/test_c.py'], 2)).toBeUndefined();
    expect(roundPlan('', ['tests/test_a.py'], 2)).toBeUndefined();
    const onlyDeletes = ['--- a/tests/test_a.py', '+++ b/tests/test_a.py', '@@ -1,2 +1,1 @@', ' a', '-b', ''].join('\n');
    expect(roundPlan(onlyDeletes, ['tests/test_a.py'], 2)).toBeUndefined();
  });

  it('a patch that does not parse is a clear error', () => {
    expect(() => roundPlan('--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n?bad\n', ['x'], 2)).toThrow(/Cannot parse the patch/);
  });
});

describe('confirmedInProcess and joinRounds: what the rounds confirm, and the runs the verdict sees', () => {
  const rounds = [run([['a::new', 'passed'], ['a::other', 'passed']]), run([['a::new', 'passed'], ['a::other', 'failed']])];

  it('a test every round reported is confirmed; one a round missed is not; at head a test that failed in the first run is not (it reruns alone)', () => {
    const first = [run([['a::new', 'passed'], ['a::other', 'failed'], ['a::old', 'passed']])];
    expect(confirmedInProcess(['a::new', 'a::other', 'a::old'], rounds, first, 'base')).toEqual(['a::new', 'a::other']);
    expect(confirmedInProcess(['a::new', 'a::other', 'a::old'], rounds, first, 'head')).toEqual(['a::new']);
    expect(confirmedInProcess(['a::new'], undefined, first, 'base')).toEqual([]);
  });

  it('rounds that do not start from a fresh process (jest, vitest) confirm only a test whose rounds agreed with the first run: one that differs reruns in new processes', () => {
    const first = [run([['a::new', 'passed'], ['a::other', 'passed']])];
    // a::other passed, then failed in round 2: evidence from a fork (pytest), not from a reused process.
    expect(confirmedInProcess(['a::new', 'a::other'], rounds, first, 'base', true)).toEqual(['a::new', 'a::other']);
    expect(confirmedInProcess(['a::new', 'a::other'], rounds, first, 'base', false)).toEqual(['a::new']);
    expect(confirmedInProcess(['a::new', 'a::other'], rounds, first, 'head', false)).toEqual(['a::new']);
  });

  it('each confirmation run holds the rounds\' covered tests and that round\'s reruns of the rest', () => {
    const reruns = [run([['a::old', 'failed']]), run([['a::old', 'passed']])];
    expect(joinRounds(rounds, ['a::new'], reruns, 2).map((r) => r.tests.map((t) => `${t.id} ${t.outcome}`))).toEqual([
      ['a::new passed', 'a::old failed'],
      ['a::new passed', 'a::old passed'],
    ]);
    expect(joinRounds(rounds, ['a::new'], [], 2).map((r) => r.tests.map((t) => t.id))).toEqual([['a::new'], ['a::new']]);
    expect(joinRounds(rounds, [], reruns, 2)).toEqual(reruns);
  });
});

describe('literalsOf: the names a data-driven test\'s new rows give its cases', () => {
  it('quoted strings of every kind, with a letter or digit, 3 characters at least, distinct, longest first', () => {
    expect(literalsOf(['+    ":name*",', "+  it('keeps 1000 bytes', () => {", '+    [["foobar", ["foobar", "x"]]],', '+  `tpl ${x}`', '+  `plain`', '+ "+", "  ", "--"'])).toEqual([
      'keeps 1000 bytes',
      ':name*',
      'foobar',
      'plain',
    ]);
  });

  it('a patch that declares tests gives their titles only: its other literals would choose every test that mentions them', () => {
    // Added lines of a patch, as text (`describe.only` here is what the parser reads, not a focused suite of ours).
    const added = ["+      it('should emit error 416 with content-range header', function (done) {", "+          .on('error', function (err) {", "+          .set('Range', 'bytes=9-50')", '+  describe.only("a suite", () => {', '+  test(`plain`, f)'];
    expect(titlesOf(added)).toEqual(['should emit error 416 with content-range header', 'a suite', 'plain']);
    // A test named like a call (\`submit(\`) is not a declaration.
    expect(titlesOf(["+  form.submit('it(\'x\')')", "+  obj.it('nope')"])).toEqual([]);
    const send = ['--- a/t.js', '+++ b/t.js', '@@ -1,1 +1,3 @@', " it('old', f);", "+it('emits 416', function () {", "+  req.set('Range', 'bytes=9-50');", ''].join('\n');
    expect(roundPlan(send, ['t.js'], 2)?.names).toEqual(['emits 416']);
    // Rows of a data-driven test declare nothing: every literal names its cases.
    const rows = ['--- a/t.js', '+++ b/t.js', '@@ -1,1 +1,2 @@', ' const CASES = [', '+  [":name*", "foobar"],', ''].join('\n');
    expect(roundPlan(rows, ['t.js'], 2)?.names).toEqual([':name*', 'foobar']);
  });

  it('a plan carries them', () => {
    expect(roundPlan(PATCH, ['tests/test_a.py'], 2)?.names).toBeUndefined();
    const js = ['--- a/t.test.js', '+++ b/t.test.js', '@@ -1,1 +1,2 @@', " it('old', f);", "+it('adds two numbers', f);", ''].join('\n');
    expect(roundPlan(js, ['t.test.js'], 2)).toEqual({ rounds: 2, lines: { 't.test.js': [2] }, names: ['adds two numbers'] });
  });
});

describe('the run command with rounds', () => {
  it('says why a runner holds no rounds (its tests that move rerun in new processes), and nothing where it does', () => {
    expect(whyNoRounds(runnerFromCommand('npx ava {files}'), 1)).toBe('ava cannot repeat tests faithfully inside its run here: the tests that moved reran in new processes');
    expect(whyNoRounds(runnerFromCommand('bundle exec rspec {files}'), 2)).toBe('rspec ran once per file: the tests that moved reran in new processes');
    // PHPUnit runs a file per process: rounds in a run of one file only.
    expect(whyNoRounds(runnerFromCommand('vendor/bin/phpunit {files}'), 2)).toBe('phpunit ran once per file: the tests that moved reran in new processes');
    expect(whyNoRounds(runnerFromCommand('ruby -Itest {files}'), 3)).toBe('minitest ran once per file: the tests that moved reran in new processes');
    for (const cmd of ['cargo test {files}', 'go test {files}', 'mvn test {files}', 'npx jest {files}', 'python3 -m pytest {files}', 'vendor/bin/phpunit {files}', 'ruby -Itest {files}', 'bundle exec rspec {files}']) expect(whyNoRounds(runnerFromCommand(cmd), 1)).toBeUndefined();
  });

  const pytest = runnerFromCommand('python3 -m pytest -p no:cacheprovider {files}');
  const plan = { rounds: 2, lines: { "tests/it's.py": [3] } };

  it('pytest: the plugin written to /tmp and enabled by environment; the project\'s command unchanged; one line', () => {
    const plain = buildTestCommand(pytest, ["tests/it's.py"], '/swt-out');
    const withRounds = buildTestCommand(pytest, ["tests/it's.py"], '/swt-out', { rounds: plan });
    expect(withRounds).not.toMatch(/[\r\n]/);
    expect(withRounds).toContain(`PYTEST_ADDOPTS="\${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }-p swt_rounds"`);
    expect(withRounds).toContain(`printf '%s' '{"rounds":2,"lines":{"tests/it'\\''s.py":[3]}}' > /tmp/swt-rounds/plan.json`);
    // The command the project asked for ends both, the same.
    const command = plain.slice(plain.indexOf('python3 -m pytest'));
    expect(withRounds.endsWith(command)).toBe(true);
    expect(roundReportName(pytest, 2)).toBe('junit.xml.round2');
    expect(ROUNDS_PLUGIN_SOURCE.length).toBeGreaterThan(50);
  });

  it('jest: the hook preloaded through NODE_OPTIONS (one the command sets itself wins: no rounds); one line', () => {
    const jest = runnerFromCommand('npx jest {files}');
    const withRounds = buildTestCommand(jest, ['a.test.js'], '/swt-out', { rounds: plan });
    expect(withRounds).not.toMatch(/[\r\n]/);
    expect(withRounds).toContain('export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--require /tmp/swt-rounds/jest-rounds.cjs"');
    // After the --json hook's own preload (jestJson.ts), before the command, which is as without rounds.
    expect(withRounds.indexOf('--require /tmp/swt-jest-json.cjs')).toBeLessThan(withRounds.indexOf('--require /tmp/swt-rounds/jest-rounds.cjs'));
    expect(withRounds.endsWith(' npx jest --ci --runTestsByPath --json --outputFile=/swt-out/jest.json a.test.js')).toBe(true);
    expect(buildTestCommand(jest, ['a.test.js'], '/swt-out').endsWith(' npx jest --ci --runTestsByPath --json --outputFile=/swt-out/jest.json a.test.js')).toBe(true);
    expect(roundReportName(jest, 1)).toBe('jest.json.round1');
  });

  it('vitest: the harness\'s reporter added to the run\'s own (only with rounds), the plan by environment; one line', () => {
    const vitest = runnerFromCommand('npx vitest run {files}');
    const plain = buildTestCommand(vitest, ['a.test.ts'], '/swt-out');
    const withRounds = buildTestCommand(vitest, ['a.test.ts'], '/swt-out', { rounds: plan });
    expect(withRounds).not.toMatch(/[\r\n]/);
    expect(plain).not.toContain('vitest-rounds');
    expect(withRounds).toContain(' && export SWT_ROUNDS=/tmp/swt-rounds/plan.json;');
    // vite loads a reporter only from the project (server.fs.allow), not from /tmp.
    expect(withRounds).toContain('mkdir -p /tmp/swt-rounds ./node_modules/.swt-rounds && printf');
    // The workers' test runner beside it, which the reporter names to vitest.
    expect(withRounds).toMatch(/ > \.\/node_modules\/\.swt-rounds\/vitest-runner\.mjs && export SWT_ROUNDS=/);
    expect(withRounds).toContain("npx vitest run --reporter=default --reporter=junit --outputFile.junit=/swt-out/junit.xml --reporter=./node_modules/.swt-rounds/vitest-rounds.mjs a.test.ts");
    // Its reruns stay as they were: a rerun holds no rounds.
    expect(buildRerunCommand(vitest, [{ file: 'a.test.ts', ids: ['a.test.ts > x'] }], 1, '/swt-out')).not.toContain('vitest-rounds');
    expect(roundReportName(vitest, 2)).toBe('junit.xml.round2');
    expect(VITEST_ROUNDS_SOURCE.join('\n')).toContain('export default class');
  });

  it('mocha: the hook required after the reporter (after the project\'s own --require modules), the plan by environment; reruns without it; one line', () => {
    const mocha = runnerFromCommand('npx mocha --exit -r ts-node/register {files}');
    const withRounds = buildTestCommand(mocha, ['t/a.js'], '/swt-out', { rounds: plan });
    expect(withRounds).not.toMatch(/[\r\n]/);
    expect(withRounds).toContain(' && export SWT_ROUNDS=/tmp/swt-rounds/plan.json;');
    expect(withRounds).toContain('npx mocha --exit -r ts-node/register --require /swt-out/swt-mocha-reporter.cjs --require /tmp/swt-rounds/mocha-rounds.cjs --reporter /swt-out/swt-mocha-reporter.cjs t/a.js');
    expect(buildTestCommand(mocha, ['t/a.js'], '/swt-out')).not.toContain('mocha-rounds');
    expect(buildRerunCommand(mocha, [{ file: 't/a.js', ids: ['t/a.js > x'] }], 1, '/swt-out')).not.toContain('mocha-rounds');
    expect(roundReportName(mocha, 1)).toBe('mocha.jsonl.round1');
    expect(roundsFresh(mocha)).toBe(false);
    expect(roundsFresh(runnerFromCommand('python3 -m pytest {files}'))).toBe(true);
  });

  it('a runner without rounds, or a run per file or per package, gets the command it always had', () => {
    const ava = runnerFromCommand('npx ava {files}');
    expect(roundsInProcess(ava, 1)).toBe(false);
    expect(buildTestCommand(ava, ['a.test.js'], '/swt-out', { rounds: plan })).toBe(buildTestCommand(ava, ['a.test.js'], '/swt-out'));
    const grouped = { ...pytest, packages: [{ dir: 'a', runner: pytest }] };
    expect(roundsInProcess(grouped, 1)).toBe(false);
    expect(roundsInProcess(pytest, 2)).toBe(true);
    const phpunit = runnerFromCommand('vendor/bin/phpunit {files}');
    expect(roundsInProcess(phpunit, 1)).toBe(true);
    expect(roundsInProcess(phpunit, 2)).toBe(false);
    expect(buildTestCommand(phpunit, ['tests/ATest.php', 'tests/BTest.php'], '/swt-out', { rounds: plan })).toBe(buildTestCommand(phpunit, ['tests/ATest.php', 'tests/BTest.php'], '/swt-out'));
    expect(buildTestCommand(phpunit, ['tests/ATest.php'], '/swt-out', { rounds: plan })).toContain('PHP_INI_SCAN_DIR=');
  });
});

describe('runTestsKept with rounds: what the run\'s own rounds reported', () => {
  const junit = (cases: string) => `<testsuites><testsuite name="pytest">${cases}</testsuite></testsuites>`;
  const ran = '<testcase classname="t.test_a" name="test_x" file="t/test_a.py"/>';
  const skipped = '<testcase classname="t.test_a" name="test_y" file="t/test_a.py"><skipped message="deselected"/></testcase>';
  const env = { image: 'swt-env:abc', key: 'abc', baseImage: 'python:3.11', snapshotRev: 'base', cached: true, buildMs: 0 };
  const opts = { env, repo: '/repos/x', state: { rev: 'base', patches: [] }, runner: runnerFromCommand('python3 -m pytest {files}'), files: ['t/test_a.py'], roundPlan: { rounds: 2, lines: { 't/test_a.py': [1] } } };
  const sandbox = (files: Record<string, string>) => ({ run: async () => ({ exitCode: 0, timedOut: false, oomKilled: false, output: '', files, durationMs: 1 }) });

  it('a round counts only for the tests it ran: one it reported skipped (a name filter left it out) is not there', async () => {
    const r = await runTestsKept(sandbox({ 'junit.xml': junit(ran + skipped), 'junit.xml.round1': junit(ran + skipped), 'junit.xml.round2': junit(ran) }), opts, false);
    expect(r.result.tests.map((t) => t.id)).toEqual(['t/test_a.py::test_x', 't/test_a.py::test_y']);
    expect(r.rounds?.map((x) => x.tests.map((t) => `${t.id} ${t.outcome}`))).toEqual([['t/test_a.py::test_x passed'], ['t/test_a.py::test_x passed']]);
  });

  it('a hook that kept the run from running (RSpec: its report holds only the load error): the run again without it, and no rounds', async () => {
    const rspec = { ...opts, runner: runnerFromCommand('bundle exec rspec {files}'), files: ['spec/a_spec.rb'], roundPlan: { rounds: 2, lines: { 'spec/a_spec.rb': [1] } } };
    const loadError = JSON.stringify({ version: '3.12.0', messages: ['No examples found.'], examples: [], summary: { errors_outside_of_examples_count: 1 } });
    const ranOk = JSON.stringify({ version: '3.12.0', examples: [{ full_description: 'A works', status: 'passed', file_path: './spec/a_spec.rb' }], summary: {} });
    const commands: string[] = [];
    const outcomes = [
      { output: 'An error occurred while loading /tmp/swt-rounds/rspec-rounds.rb.\nLoadError:\n  cannot load such file -- /tmp/swt-rounds/rspec-rounds.rb', files: { 'rspec-0.json': loadError } },
      { output: '1 example, 0 failures', files: { 'rspec-0.json': ranOk } },
    ];
    const box = { run: async (req: { command: string }) => (commands.push(req.command), { exitCode: 0, timedOut: false, oomKilled: false, durationMs: 1, ...outcomes[commands.length - 1]! }) };
    const r = await runTestsKept(box, rspec, false);
    expect(commands).toHaveLength(2);
    expect(commands[0]).toContain('SPEC_OPTS="--require /tmp/swt-rounds/rspec-rounds.rb $SPEC_OPTS"');
    expect(commands[1]).not.toContain('rspec-rounds');
    expect(r.result.tests.map((t) => `${t.id} ${t.outcome}`)).toEqual(['spec/a_spec.rb > A works passed']);
    expect(r.rounds).toBeUndefined();
    // A report with tests in it stands, whatever the output says.
    commands.length = 0;
    outcomes.reverse();
    outcomes[0] = { ...outcomes[0]!, output: 'cannot load such file -- /tmp/swt-rounds/rspec-rounds.rb' };
    expect((await runTestsKept(box, rspec, false)).result.tests).toHaveLength(1);
    expect(commands).toHaveLength(1);
  });

  it('a round that did not report: no rounds at all', async () => {
    const r = await runTestsKept(sandbox({ 'junit.xml': junit(ran), 'junit.xml.round1': junit(ran) }), opts, false);
    expect(r.rounds).toBeUndefined();
  });
});
