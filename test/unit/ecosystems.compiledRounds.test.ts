/**
 * Confirmation rounds of Go, Maven, cargo and CTest (src/ecosystems/{go,java,rust,c}/rounds.ts): which tests
 * a round runs (the awk choice, run here with the machine's awk, mawk as in the golang and maven
 * images, on real test files and the plan roundPlan makes of a real patch), and how the first
 * run's command calls the rounds. The rounds themselves run in real containers in
 * test/integration/ecosystems.go.test.ts, ecosystems.java.test.ts, ecosystems.c.test.ts and
 * pipeline.validateFlaky.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cChooseCommand } from '../../src/ecosystems/c/rounds.js';
import { goChooseCommand } from '../../src/ecosystems/go/rounds.js';
import { javaChooseCommand } from '../../src/ecosystems/java/rounds.js';
import { rustChooseCommand, rustTemplateHasRounds } from '../../src/ecosystems/rust/rounds.js';
import { roundPlan } from '../../src/harness/rounds.js';
import { runnerDef } from '../../src/ecosystems/index.js';
import { buildTestCommand, roundsFresh, roundsInProcess, runnerFromCommand } from '../../src/harness/runners.js';
import { ABOVE, OLD_TEST } from '../helpers/goClampx.js';
import { OLD_TEST as GREETER_TEST, TEST_PATCH } from '../helpers/mavenGreeter.js';
import { INTEGRATION_PATCH, LIB, OLD_TEST as RUST_TEST, UNIT_PATCH } from '../helpers/rustDescribe.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'swt-rounds-choice-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `files`, applies `patch` with git apply, and runs `command` there: what it prints, split. */
function choose(files: Record<string, string>, patch: string, command: string | undefined): string[] {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  writeFileSync(join(dir, 'p.diff'), patch);
  execFileSync('git', ['apply', 'p.diff'], { cwd: dir });
  if (!command) throw new Error('no command');
  return execFileSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8' }).trim().split(/[|\s]+/).filter(Boolean).sort();
}

const GO_FILE = 'clampx_test.go';

describe('go test rounds', () => {
  it('choose the top-level tests whose lines the patch adds to, not their neighbours', () => {
    expect(choose({ [GO_FILE]: OLD_TEST }, ABOVE, goChooseCommand(roundPlan(ABOVE, [GO_FILE], 2)!))).toEqual(['TestClampAbove']);
  });

  it('choose a test whose body gained a line, a one-line test, and no test for a line outside any', () => {
    const before = ['package p', '', 'import "testing"', '', 'var x = 1', '', 'func TestA(t *testing.T) {', '\tt.Log("a")', '}', '', 'func TestB(t *testing.T) {', '\tt.Log("b")', '}', ''].join('\n');
    const patch = [
      `--- a/${GO_FILE}`,
      `+++ b/${GO_FILE}`,
      '@@ -2,9 +2,11 @@',
      ' ',
      ' import "testing"',
      ' ',
      '-var x = 1',
      '+var x = 2',
      ' ',
      ' func TestA(t *testing.T) {',
      ' \tt.Log("a")',
      '+\tt.Log("more")',
      ' }',
      '+func TestOne(t *testing.T) { t.Log("one") }',
      ' ',
      '',
    ].join('\n');
    expect(choose({ [GO_FILE]: before }, patch, goChooseCommand(roundPlan(patch, [GO_FILE], 2)!))).toEqual(['TestA', 'TestOne']);
  });

  it('run the binary through their wrapper and convert the rounds after the run, keeping go test\'s exit status', () => {
    const spec = runnerFromCommand('go test {files}');
    expect(roundsInProcess(spec, 1)).toBe(true);
    // Each round a new process of the test binary: a round that differs is evidence.
    expect(roundsFresh(spec)).toBe(true);
    const cmd = buildTestCommand(spec, ['calc/calc_test.go'], '/swt-out', { kept: true, rounds: { rounds: 2, lines: { 'calc/calc_test.go': [3] } } });
    // The wrapper: the binary kept for the reruns, its run as go test asked, then each round.
    expect(cmd).toContain(`'#!/bin/sh' 'ln -f "$1" "$GOTMPDIR/swt-first-run.test" 2>/dev/null || cp "$1" "$GOTMPDIR/swt-first-run.test" 2>/dev/null' '"$@"' 'rc=$?'`);
    expect(cmd).toContain(`'[ -z "$SWT_GO_SEL" ] || "$1" -test.count=1 -test.timeout=10m0s -test.v=test2json -test.run="^($SWT_GO_SEL)$" > "$GOTMPDIR/swt-round2.out" 2>&1' 'swt_n=0;`);
    expect(cmd).toContain(`> "$GOTMPDIR/swt-test2json"' 'exit $rc'`);
    expect(cmd).toContain('go test -json -count=1 -vet=off -exec "$GOTMPDIR/swt-rounds-exec" ./calc > /swt-out/go-test.json; swt_rc=$?; swt_go_rounds; (exit $swt_rc)');
    // Each round's output becomes JSON beside the others', waited for by their own ids only.
    expect(cmd).toContain('swt_w=; { [ -f "$GOTMPDIR/swt-round1.out" ] && swt_test2json -t -p "$pkg" < "$GOTMPDIR/swt-round1.out" > /swt-out/go-test.json.round1; } & swt_w="$swt_w $!";');
    expect(cmd).toContain('/swt-out/go-test.json.round2; } & swt_w="$swt_w $!"; wait $swt_w; };');
    // A template of the project's own (its flags would not reach the binary): no rounds, as before.
    expect(buildTestCommand(runnerFromCommand('go test -short {files}'), ['calc/calc_test.go'], '/swt-out', { kept: true, rounds: { rounds: 2, lines: { 'calc/calc_test.go': [3] } } })).not.toContain('-exec "$GOTMPDIR');
  });

  it('convert with the toolchain\'s own test2json when the wrapper finds exactly one beside the go first on its PATH, else with go tool test2json', () => {
    choose({ [GO_FILE]: OLD_TEST }, ABOVE, 'true');
    const out = join(dir, 'out');
    mkdirSync(out);
    writeFileSync(join(out, 'go-test.json'), '{"Action":"start","Package":"example.com/clampx"}\n');
    const cmd = buildTestCommand(runnerFromCommand('go test {files}'), [GO_FILE], out, { kept: true, rounds: roundPlan(ABOVE, [GO_FILE], 2)! });
    const prepare = cmd.slice(0, cmd.indexOf(' go test -json'));
    expect(prepare).toContain('swt_go_rounds()');
    /** A Go root under `name`: bin/go, and a test2json in each of `arches`' tool directories, each logging its calls. */
    const goRoot = (name: string, arches: string[], withGo = true) => {
      const root = join(dir, name);
      mkdirSync(join(root, 'bin'), { recursive: true });
      if (withGo) writeFileSync(join(root, 'bin/go'), '#!/bin/sh\n', { mode: 0o755 });
      for (const a of arches) {
        mkdirSync(join(root, 'pkg/tool', a), { recursive: true });
        writeFileSync(join(root, 'pkg/tool', a, 'test2json'), `#!/bin/sh\necho "direct $*" >> ${join(dir, 'calls')}\n`, { mode: 0o755 });
      }
      return join(root, 'bin');
    };
    /** The prepare, the wrapper as go test runs it (its bin first on PATH; the binary: true), then the rounds' conversion; the calls made. */
    const calls = (bin: string) => {
      rmSync(join(dir, 'calls'), { force: true });
      const script = `${prepare} PATH="${bin}:$PATH" "$GOTMPDIR/swt-rounds-exec" true; go() { echo "go $*" >> ${join(dir, 'calls')}; }; swt_go_rounds`;
      execFileSync('sh', ['-c', script], { cwd: dir, env: { ...process.env, HOME: join(dir, 'home') } });
      return execFileSync('sort', [join(dir, 'calls')], { encoding: 'utf8' }).trim().split('\n');
    };
    expect(calls(goRoot('go', ['linux_amd64']))).toEqual(['direct -t -p example.com/clampx', 'direct -t -p example.com/clampx']);
    // A rerun of the first run's binary in that container converts with the tool the rounds found.
    const binary = join(dir, 'home/.cache/swt-go-tmp/swt-first-run.test');
    writeFileSync(binary, '#!/bin/sh\necho "=== RUN   TestClampAbove"\n', { mode: 0o755 });
    rmSync(join(dir, 'calls'), { force: true });
    const rerun = runnerDef('go-test').def.commandForTests!(runnerFromCommand('go test {files}'), GO_FILE, ['example.com/clampx.TestClampAbove'], dir, 'rerun.json');
    execFileSync('sh', ['-c', `go() { echo "go $*" >> ${join(dir, 'calls')}; }; ${rerun}`], { cwd: dir, env: { ...process.env, HOME: join(dir, 'home') } });
    expect(execFileSync('cat', [join(dir, 'calls')], { encoding: 'utf8' }).trim()).toBe('direct -t -p example.com/clampx');
    // Two tool directories (a toolchain built for another platform too): which is this one's is not sure.
    expect(calls(goRoot('cross', ['linux_amd64', 'linux_arm64']))).toEqual(['go tool test2json -t -p example.com/clampx', 'go tool test2json -t -p example.com/clampx']);
    // Go before 1.19 does not put its bin first: the first directory holds no go.
    expect(calls(goRoot('gopath', ['linux_amd64'], false))).toEqual(['go tool test2json -t -p example.com/clampx', 'go tool test2json -t -p example.com/clampx']);
  });
});

const JAVA_FILE = 'src/test/java/com/example/GreeterTest.java';

describe('Maven rounds', () => {
  it('choose the test methods the patch adds lines to; an added annotation or blank line belongs to none', () => {
    expect(choose({ [JAVA_FILE]: GREETER_TEST }, TEST_PATCH, javaChooseCommand(roundPlan(TEST_PATCH, [JAVA_FILE], 2)!))).toEqual(['com.example.GreeterTest#greetsNobody']);
  });

  it('are planned before Maven, run in its JVM for the root module, else after the reports are collected, in the module, and keep Maven\'s exit status', () => {
    const spec = runnerFromCommand('mvn test {files}');
    expect(roundsInProcess(spec, 1)).toBe(true);
    // No argLine, no POM system properties: a round that differs proves nothing; Maven reruns decide.
    expect(roundsFresh(spec)).toBe(false);
    const plan = { rounds: 2, lines: { [`core/${JAVA_FILE}`]: [12] } };
    const cmd = buildTestCommand(spec, [`core/${JAVA_FILE}`], '/swt-out', { kept: true, rounds: plan });
    expect(cmd).toMatch(/swt_java_rounds_plan core; mvn test .* -pl core -am \$\{swt_java_ext:\+"\$swt_java_ext"\} > .*> \/swt-out\/maven-reports\.txt; swt_java_rounds core; exit \$rc \)$/);
    // After Maven, its own JVM in the module's directory, unless the spy wrote the last round's report.
    expect(cmd).toContain('swt_java_rounds() { [ -n "$SWT_JAVA_ROUNDS" ] && [ ! -f /swt-out/maven-reports.txt.round2 ] || return 0;');
    expect(cmd).toContain('( cd "$1" && xargs -0 java -XX:TieredStopAtLevel=1 -cp "$HOME/.cache/swt-rounds" SwtRounds )');
    // Without rounds, neither; two modules in one run: no rounds.
    expect(buildTestCommand(spec, [JAVA_FILE], '/swt-out', { kept: true })).not.toMatch(/swt_java_rounds|swt_java_ext/);
    expect(buildTestCommand(spec, [`core/${JAVA_FILE}`, `api/${JAVA_FILE}`], '/swt-out', { kept: true, rounds: plan })).not.toMatch(/swt_java_rounds(_plan)? (core|api);/);
  });

  it('plan the chosen tests for the spy, which Maven loads for the root module only, when it is registered and the project names no core extensions that way', () => {
    const spec = runnerFromCommand('mvn test {files}');
    const home = join(dir, 'home');
    const runner = join(home, '.cache/swt-rounds');
    mkdirSync(join(runner, 'META-INF/plexus'), { recursive: true });
    writeFileSync(join(runner, 'SwtRounds.class'), '');
    writeFileSync(join(runner, 'META-INF/plexus/components.xml'), '');
    const planned = (module: string) => {
      const at = module === '.' ? '' : `${module}/`;
      const patch = TEST_PATCH.replaceAll('/src/', `/${at}src/`);
      choose({ [`${at}${JAVA_FILE}`]: GREETER_TEST }, patch, 'true');
      const cmd = buildTestCommand(spec, [`${at}${JAVA_FILE}`], '/swt-out', { kept: true, rounds: roundPlan(patch, [`${at}${JAVA_FILE}`], 2)! });
      // The command up to Maven, with Maven's words printed instead of run.
      const script = cmd.replace(/ mvn test /, ' printf "%s|" ').replace(/ > \/swt-out\/build-output\.txt 2>&1;.*$/, '; echo; printf "%s\\n" "$SWT_JAVA_ROUNDS"; )');
      return execFileSync('sh', ['-c', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: home } }).trim().split('\n');
    };
    const root = planned('.');
    expect(root[0].split('|')).toContain(`-Dmaven.ext.class.path=${runner}`);
    expect(root.slice(1)).toEqual(['.', '/swt-out/maven-reports.txt', '2', 'com.example.GreeterTest#greetsNobody']);
    // A module: its own JVM after Maven (Maven's cannot enter the module's directory).
    const core = planned('core');
    expect(core[0]).not.toContain('maven.ext.class.path');
    expect(core.slice(1)).toEqual(['core', '/swt-out/maven-reports.txt', '2', 'com.example.GreeterTest#greetsNobody']);
    // The project's own core extensions by that property: not replaced.
    mkdirSync(join(dir, '.mvn'));
    writeFileSync(join(dir, '.mvn/maven.config'), '-Dmaven.ext.class.path=ext/x.jar\n');
    expect(planned('.')[0]).not.toContain('maven.ext.class.path');
    rmSync(join(dir, '.mvn'), { recursive: true });
    // The spy not registered (it did not compile): no extension either.
    rmSync(join(runner, 'META-INF/plexus/components.xml'));
    expect(planned('.')[0]).not.toContain('maven.ext.class.path');
  });
});

describe('cargo test rounds', () => {
  it('choose the functions the patch adds lines to, in an integration test file and in a #[cfg(test)] module; an attribute or blank line belongs to none', () => {
    expect(choose({ 'tests/describe.rs': RUST_TEST }, INTEGRATION_PATCH, rustChooseCommand(roundPlan(INTEGRATION_PATCH, ['tests/describe.rs'], 2)!))).toEqual(['one']);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    expect(choose({ 'src/lib.rs': LIB(false) }, UNIT_PATCH, rustChooseCommand(roundPlan(UNIT_PATCH, ['src/lib.rs'], 2)!))).toEqual(['one']);
  });

  it('choose a function whose body gained a line (pub, async, one-line fns too), not one the line merely follows', () => {
    const before = ['mod t {', '    #[test]', '    fn a() {', '        let x = 1;', '    }', '', '    pub(crate) async fn b() {}', '}', ''].join('\n');
    const patch = ['--- a/tests/t.rs', '+++ b/tests/t.rs', '@@ -3,6 +3,9 @@ mod t {', '     fn a() {', '         let x = 1;', '+        assert_eq!(x, 1);', '     }', ' ', '     pub(crate) async fn b() {}', '+    // a note', '+', ' }', ''].join('\n');
    expect(choose({ 'tests/t.rs': before }, patch, rustChooseCommand(roundPlan(patch, ['tests/t.rs'], 2)!))).toEqual(['a']);
  });

  it('run each test binary through their runner (cargo\'s own runner hook), write the rounds\' reports after cargo, and keep its exit status', () => {
    const spec = runnerFromCommand('cargo test {files}');
    expect(roundsInProcess(spec, 1)).toBe(true);
    // A new process of the same binary per round, with cargo's environment: a round that differs is evidence.
    expect(roundsFresh(spec)).toBe(true);
    const cmd = buildTestCommand(spec, ['tests/describe.rs'], '/swt-out', { kept: true, rounds: { rounds: 2, lines: { 'tests/describe.rs': [9] } } });
    expect(cmd).toContain(`'"$@"' 'rc=$?' 'set -f'`);
    expect(cmd).toContain(`'[ -z "$names" ] || "$1" $names --exact > "$HOME/.cache/swt-rust-rounds"/r2/"$b".out 2>&1' 'exit $rc'`);
    expect(cmd).toContain('for h in $swt_h; do export "CARGO_TARGET_${h}_RUNNER=$HOME/.cache/swt-rust-rounds/runner"; done');
    // The project's own runner or [env] in its cargo config: no rounds.
    expect(cmd).toContain(`! grep -qsE '^[[:space:]]*(runner[[:space:]]*=|\\[env\\])' .cargo/config.toml .cargo/config`);
    expect(cmd).toMatch(/\( swt_rust_rounds_on; rc=0; .*cargo test --no-fail-fast --offline --test describe >> \/swt-out\/cargo-test\.txt 2>&1 \|\| rc=\$\?; swt_rust_rounds; exit \$rc \)$/);
    expect(cmd).toContain('> /swt-out/cargo-test.txt.round2;');
    // Build flags and libtest arguments of the project's own are fine; more than one command is not: its tests rerun through cargo.
    expect(rustTemplateHasRounds('cargo test {files} -- --test-threads=1')).toBe(true);
    expect(rustTemplateHasRounds('cargo +1.85 test --features serde {files}')).toBe(true);
    expect(buildTestCommand(runnerFromCommand('cargo build && cargo test {files}'), ['tests/describe.rs'], '/swt-out', { kept: true, rounds: { rounds: 2, lines: { 'tests/describe.rs': [9] } } })).not.toContain('swt_rust_rounds_on;');
  });
});

describe('CTest and Meson rounds', () => {
  const FILE = 'tests/text_test.cpp';
  const before = [
    '#include <gtest/gtest.h>',
    '#include "text.h"',
    '',
    'static int helper() { return 1; }',
    '',
    'TEST(Clamp, Below) {',
    '  EXPECT_EQ(helper(), 1);',
    '}',
    '',
    'TEST_P(Widths, Fit) {',
    '  EXPECT_TRUE(true);',
    '}',
    '',
    'TEST(Clamp, Above) {',
    '  EXPECT_EQ(2, 2);',
    '}',
    '',
  ].join('\n');
  const patch = [
    `--- a/${FILE}`,
    `+++ b/${FILE}`,
    '@@ -1,16 +1,23 @@',
    ' #include <gtest/gtest.h>',
    ' #include "text.h"',
    ' ',
    '-static int helper() { return 1; }',
    '+static int helper() { return 2 - 1; }',
    ' ',
    ' TEST(Clamp, Below) {',
    '   EXPECT_EQ(helper(), 1);',
    ' }',
    '+TEST(Clamp, One) { EXPECT_EQ(1, 1); }',
    ' ',
    ' TEST_P(Widths, Fit) {',
    '+  EXPECT_FALSE(false);',
    '   EXPECT_TRUE(true);',
    ' }',
    ' ',
    ' TEST(Clamp, Above) {',
    '   EXPECT_EQ(2, 2);',
    ' }',
    '+',
    '+TEST_CASE("wraps [at] 80 (cols)", "[wrap]") {',
    '+  CHECK(true);',
    '+}',
    '+SCENARIO("a line") { }',
    '',
  ].join('\n');

  /** What the choice prints for `kind` on the patched file. */
  function chosen(kind: 'f' | 'r'): string {
    mkdirSync(join(dir, 'tests'), { recursive: true });
    writeFileSync(join(dir, FILE), before);
    writeFileSync(join(dir, 'p.diff'), patch);
    execFileSync('git', ['apply', 'p.diff'], { cwd: dir });
    const command = cChooseCommand(roundPlan(patch, [FILE], 2)!, kind)!;
    const out = execFileSync('sh', ['-c', command], { cwd: dir, encoding: 'utf8' }).trim();
    rmSync(join(dir, 'tests'), { recursive: true, force: true });
    return out;
  }

  it('choose the declarations whose lines the patch adds to (a one-line test, a parameterized one, test cases), not a helper above them nor an untouched test', () => {
    const filter = chosen('f').split(':').sort();
    // Each GoogleTest test as GTEST_FILTER names it, value-parameterized and typed instances too.
    expect(filter).toEqual(['*/Clamp.One/*', '*/Widths.Fit/*', 'Clamp.One', 'Clamp/*.One', 'Widths.Fit', 'Widths/*.Fit'].sort());
    const regex = new RegExp(chosen('r').replace(/\(\^\|\[\^A-Za-z0-9_\]\)/g, '(?:^|[^A-Za-z0-9_])'));
    // CTest's -R (ERE, as here): the discovered names of the chosen tests, a test case's exact name escaped.
    for (const name of ['Clamp.One', 'Inst/Widths.Fit/3', 'Widths/0.Fit', 'pre.Clamp.One', 'wraps [at] 80 (cols)', 'Scenario: a line']) expect(regex.test(name)).toBe(true);
    for (const name of ['Clamp.Below', 'Clamp.Above', 'Clamp.OneMore', 'XClamp.One', 'wraps [at] 80 (cols)x', 'a line']) expect(regex.test(name)).toBe(false);
  });

  it('run after the run\'s own tests, with no build, each into its own bundle, and keep the run\'s exit status', () => {
    const spec = runnerFromCommand('ctest');
    expect(roundsInProcess(spec, 1)).toBe(true);
    // CTest starts every test as a new process, as a rerun does: a round that differs is evidence.
    expect(roundsFresh(spec)).toBe(true);
    const cmd = buildTestCommand(spec, [FILE], '/swt-out', { kept: true, rounds: { rounds: 2, lines: { [FILE]: [9] } } });
    expect(cmd).toMatch(/^mkdir -p \/swt-out 2>\/dev\/null; SWT_C_FILTER="\$\(awk -v K=f [\s\S]*\)"; SWT_C_REGEX="\$\(awk -v K=r /);
    const [run, rounds] = cmd.split('if [ -n "$SWT_C_REGEX" ]');
    // The build happens once, before the run's tests.
    expect(run).toContain('cmake --build .swt-build');
    expect(rounds).not.toContain('cmake');
    expect(rounds).toContain('[ -z "$SWT_C_FILTER" ] || export GTEST_FILTER="$SWT_C_FILTER"');
    for (const r of [1, 2]) {
      expect(rounds).toContain(`: > /swt-out/c-tests.txt.round${r}; rm -rf /swt-out/round${r}/gtest`);
      expect(rounds).toContain(`export GTEST_OUTPUT=xml:/swt-out/round${r}/gtest/; swt_rc=0; if [ -n "$swt_listed" ]; then ctest --test-dir .swt-build --output-junit /swt-out/round${r}/ctest.xml`);
    }
    expect(rounds).toContain('-R "$SWT_C_REGEX"; else ctest');
    // CTest's listing is asked once, by the run; the rounds read it.
    expect(cmd.match(/--show-only=json-v1/g)).toHaveLength(1);
    // The run decides -R from the names its console says it started; the whole binaries' commands are worked out once, by the run.
    expect(rounds).toContain(`sed -n 's/^ *Start *[0-9]*: //p' /swt-out/ctest.out | grep -qE "$SWT_C_REGEX" && swt_listed=1;`);
    expect(cmd.match(/python3 -c/g)).toHaveLength(1);
    expect(rounds).toContain('[ ! -s /swt-out/whole-binaries.sh ] || { mkdir -p /swt-out/round2/junit; SWT_JUNIT_DIR=/swt-out/round2/junit sh /swt-out/whole-binaries.sh; }');
    expect(cmd).toMatch(/; rm -f \/swt-out\/ctest-tests\.json \/swt-out\/whole-binaries\.sh; exit \$rc \)$/);
    // Without rounds asked, none.
    expect(buildTestCommand(spec, [FILE], '/swt-out', { kept: true })).not.toContain('SWT_C_REGEX');
  });

  it('with Meson, run meson test again under GTEST_FILTER on the chosen GoogleTest tests, with no build, its introspection asked once', () => {
    const spec = runnerFromCommand('meson test');
    expect(roundsInProcess(spec, 1)).toBe(true);
    expect(roundsFresh(spec)).toBe(true);
    const cmd = buildTestCommand(spec, [FILE], '/swt-out', { kept: true, rounds: { rounds: 2, lines: { [FILE]: [9] } } });
    const [run, rounds] = cmd.split('if [ -n "$SWT_C_FILTER" ]');
    expect(run).toContain('meson compile -C .swt-meson');
    expect(rounds).not.toContain('meson compile');
    expect(rounds).toMatch(/^ && \[ "\$b" != configure-failed \]; then export GTEST_FILTER="\$SWT_C_FILTER";/);
    for (const r of [1, 2]) {
      expect(rounds).toContain(`: > /swt-out/c-tests.txt.round${r};`);
      expect(rounds).toContain(`export GTEST_OUTPUT=xml:/swt-out/round${r}/gtest/; swt_rc=0; meson test -C .swt-meson --no-rebuild --print-errorlogs -t 10 > /swt-out/round${r}/meson.out 2>&1 || swt_rc=$?;`);
    }
    expect(cmd.match(/meson introspect/g)).toHaveLength(1);
    expect(cmd).toMatch(/; rm -f \/swt-out\/meson-intro\.json; exit \$rc \)$/);
    // make check has no rounds: its tests rerun, and the result says so.
    expect(roundsInProcess(runnerFromCommand('make check'), 1)).toBe(false);
  });
});
