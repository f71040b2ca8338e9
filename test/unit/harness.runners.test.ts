import { execFileSync } from 'node:child_process';
import { LOCAL_NPX } from '../../src/ecosystems/node/localNpx.js';
import { JEST_JSON_HOOK, jestJsonPrepare } from '../../src/ecosystems/node/jestJson.js';
import { oldPytestPrepare } from '../../src/ecosystems/python/oldPytest.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mochaReporterOneLine } from '../../src/results/formats/mochaReporter.js';
import {
  buildRerunCommand,
  buildTestCommand,
  reporterInstall,
  type RerunTarget,
  detectRunner,
  isTape,
  missingTestCommand,
  quoteTestFile,
  reportNames,
  runnerFromCommand,
} from '../../src/harness/runners.js';
import { shellQuote } from '../../src/util/shell.js';
import { isSwtError, SwtError } from '../../src/util/errors.js';
import { loadCapture } from './fixtures/reports/load.js';

function swtCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isSwtError(e) ? e.code : `not an SwtError: ${String(e)}`;
  }
  return undefined;
}

/** jest's step that writes its --json hook and preloads it (jestJson.ts). */
const JEST_JSON = jestJsonPrepare();
const OLD_PYTEST = oldPytestPrepare();

/** A command without the step that writes mocha's reporter (a long quoted line) or jest's --json hook. */
function withoutInstall(cmd: string): string {
  return cmd.split(JEST_JSON).join('').replace(/ printf '%s\\n' '(?:[^']|'\\'')*' > \S+;/, '');
}

describe('runnerFromCommand', () => {
  it.each([
    ['python3 -m pytest -p no:cacheprovider {files}', 'pytest'],
    ['pytest -x {files}', 'pytest'],
    ['cd pkg && py.test {files}', 'pytest'],
    ['npx vitest run {files}', 'vitest'],
    ['npx jest --preset ts-jest {files}', 'jest'],
    ['node node_modules/jest/bin/jest.js {files}', 'jest'],
    ['yarn jest {files}', 'jest'],
    ['npx mocha --exit --check-leaks {files}', 'mocha'],
    ['./node_modules/.bin/_mocha {files}', 'mocha'],
    ['node --test {files}', 'node-test'],
    ['node --import tsx --test {files}', 'node-test'],
    ['npx tap {files}', 'tap'],
    ['npx tape {files}', 'tap'],
  ])('%s → %s', (cmd, kind) => {
    expect(runnerFromCommand(cmd)).toEqual({ kind, template: cmd });
  });

  it('tells tape from node-tap', () => {
    expect(isTape(runnerFromCommand('npx tape {files}'))).toBe(true);
    expect(isTape(runnerFromCommand('npx tap {files}'))).toBe(false);
  });

  it('runs a command no runner recognises file by file (file-level), and still rejects empty or multi-line commands', () => {
    expect(runnerFromCommand('npm test')).toEqual({ kind: 'file-level', template: 'npm test' });
    // The repository's ecosystem comes along when its facts are given.
    expect(runnerFromCommand('node -r esm {files}', { files: ['package.json', 'test/index.js'], packageJson: { name: 'x' } })).toEqual({ kind: 'file-level', template: 'node -r esm {files}', ecosystem: 'node' });
    // "jest" inside another word is not jest
    expect(runnerFromCommand('npx jester {files}').kind).toBe('file-level');
    expect(swtCode(() => runnerFromCommand('   '))).toBe('BAD_INPUT');
    expect(swtCode(() => runnerFromCommand('npx jest\nrm -rf /'))).toBe('BAD_INPUT');
    const err = (() => {
      try {
        runnerFromCommand('');
      } catch (e) {
        return e as SwtError;
      }
      return undefined;
    })();
    expect(err?.oneLine()).toMatch(/pytest, Django \(manage\.py test, runtests\.py\), jest, vitest, ava, jasmine, bun test, deno test, mocha, uvu, node --test, tap \(node-tap\),? (and )?tape\b.*go test, cargo test, Maven \(Surefire\), Gradle, ctest, meson test and make check/);
    expect(err?.oneLine()).toMatch(/\brspec, minitest\b.*\bphpunit\b/);
  });
});

describe('detectRunner', () => {
  it('picks pytest for Python repositories', () => {
    expect(detectRunner({ files: ['setup.py', 'pkg/a.py', 'tests/test_a.py'] })).toEqual({ kind: 'pytest', template: 'python3 -m pytest -p no:cacheprovider {files}' });
    expect(detectRunner({ files: ['pyproject.toml'] }).kind).toBe('pytest');
  });
  it('reads devDependencies and scripts', () => {
    expect(detectRunner({ files: ['package.json'], packageJson: { devDependencies: { vitest: '^1' } } })).toEqual({ kind: 'vitest', template: 'npx vitest run {files}' });
    expect(detectRunner({ files: ['package.json'], packageJson: { devDependencies: { jest: '^29' } } })).toEqual({ kind: 'jest', template: 'npx jest {files}' });
    expect(detectRunner({ files: ['package.json'], packageJson: { devDependencies: { mocha: '^10' } } })).toEqual({ kind: 'mocha', template: 'npx mocha --exit {files}' });
    expect(detectRunner({ files: ['package.json'], packageJson: { devDependencies: { tap: '^18' } } })).toEqual({ kind: 'tap', template: 'npx tap {files}' });
    expect(detectRunner({ files: ['package.json'], packageJson: { devDependencies: { tape: '^5' } } })).toEqual({ kind: 'tap', template: 'npx tape {files}' });
    expect(detectRunner({ files: ['package.json'], packageJson: { scripts: { test: 'node --test test/' } } })).toEqual({ kind: 'node-test', template: 'node --test {files}' });
    expect(detectRunner({ files: ['package.json'], packageJson: { scripts: { test: 'mocha -r ts-node/register' } } }).kind).toBe('mocha');
  });
  it('adds --preset ts-jest only when ts-jest is there and jest has no config', () => {
    const pkg = { devDependencies: { jest: '^29', 'ts-jest': '^29' } };
    expect(detectRunner({ files: ['package.json'], packageJson: pkg }).template).toBe('npx jest --preset ts-jest {files}');
    expect(detectRunner({ files: ['package.json', 'jest.config.ts'], packageJson: pkg }).template).toBe('npx jest {files}');
    expect(detectRunner({ files: ['package.json'], packageJson: { ...pkg, jest: { preset: 'ts-jest' } } }).template).toBe('npx jest {files}');
  });
  it('falls back to node --test for a package without a runner, and fails without any clue', () => {
    expect(detectRunner({ files: ['package.json', 'index.js'], packageJson: { name: 'x' } }).kind).toBe('node-test');
    expect(swtCode(() => detectRunner({ files: ['README.md'] }))).toBe('BAD_INPUT');
  });
});

describe('buildTestCommand', () => {
  const out = '/swt-out';
  it('appends the reporter options the parsers need', () => {
    expect(buildTestCommand(runnerFromCommand('python3 -m pytest -p no:cacheprovider {files}'), ['tests/test_a.py'], out)).toBe(
      `mkdir -p /swt-out 2>/dev/null;${OLD_PYTEST} python3 -m pytest -p no:cacheprovider -rA --continue-on-collection-errors --junitxml=/swt-out/junit.xml -o junit_family=xunit1 tests/test_a.py`,
    );
    expect(buildTestCommand(runnerFromCommand('npx jest --preset ts-jest {files}'), ['a.test.ts'], out)).toBe(
      `mkdir -p /swt-out 2>/dev/null;${LOCAL_NPX}${JEST_JSON} npx jest --preset ts-jest --ci --runTestsByPath --json --outputFile=/swt-out/jest.json a.test.ts`,
    );
    expect(buildTestCommand(runnerFromCommand('npx vitest run {files}'), ['a.test.ts'], out)).toBe(
      `mkdir -p /swt-out 2>/dev/null;${LOCAL_NPX} npx vitest run --reporter=default --reporter=junit --outputFile.junit=/swt-out/junit.xml a.test.ts`,
    );
    expect(buildTestCommand(runnerFromCommand('npx vitest {files}'), ['a.test.ts'], out)).toContain('npx vitest --run --reporter=default');
    expect(buildTestCommand(runnerFromCommand('npx mocha --exit {files}'), ['t/a.js'], out)).toBe(
      `mkdir -p /swt-out 2>/dev/null;${reporterInstall(runnerFromCommand('npx mocha --exit {files}'), out)} ` +
        'npx mocha --exit --require /swt-out/swt-mocha-reporter.cjs --reporter /swt-out/swt-mocha-reporter.cjs t/a.js',
    );
    expect(buildTestCommand(runnerFromCommand('npx tap {files}'), ['t/a.js'], out)).toBe(
      `mkdir -p /swt-out 2>/dev/null;${LOCAL_NPX} ( { { npx tap --reporter=tap t/a.js; echo $? > /swt-out/tap.txt.rc; } | tee /swt-out/tap.txt; }; exit "$(cat /swt-out/tap.txt.rc 2>/dev/null || echo 1)" )`,
    );
  });

  it("replaces mocha's own reporter, which would otherwise win or clash", () => {
    for (const tpl of ['npx mocha -R spec --reporter-option foo=bar --exit {files}', 'npx mocha --reporter=dot --reporter-options output=x.xml --exit {files}']) {
      expect(withoutInstall(buildTestCommand(runnerFromCommand(tpl), ['t/a.js'], out))).toBe(
        `mkdir -p /swt-out 2>/dev/null;${LOCAL_NPX} npx mocha --exit --require /swt-out/swt-mocha-reporter.cjs --reporter /swt-out/swt-mocha-reporter.cjs t/a.js`,
      );
    }
  });

  it("writes mocha's reporter into the out dir within the command, one line that sh writes back byte for byte", () => {
    const install = reporterInstall(runnerFromCommand('./node_modules/.bin/_mocha {files}'), '/tmp/o/');
    expect(install).not.toMatch(/[\r\n]/);
    expect(install).toMatch(/^ printf '%s\\n' '.*' > \/tmp\/o\/swt-mocha-reporter\.cjs;$/);
    // A command calling npx gets the shim that calls an installed bin directly (localNpx.ts).
    expect(reporterInstall(runnerFromCommand('npx vitest run {files}'))).toBe(LOCAL_NPX);
    expect(reporterInstall(runnerFromCommand('vitest run {files}'))).toBe('');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swt-reporter-'));
    try {
      execFileSync('sh', ['-c', reporterInstall(runnerFromCommand('mocha'), dir)]);
      expect(fs.readFileSync(path.join(dir, 'swt-mocha-reporter.cjs'), 'utf8')).toBe(`${mochaReporterOneLine()}\n`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("preloads jest's --json hook once per shell, after a NODE_OPTIONS of the project's own", () => {
    expect(reporterInstall(runnerFromCommand('npx jest {files}'))).toBe(`${LOCAL_NPX}${JEST_JSON}`);
    expect(reporterInstall(runnerFromCommand('jest {files}'))).toBe(JEST_JSON);
    expect(JEST_JSON).not.toMatch(/[\r\n]/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swt-jest-json-'));
    const hook = path.join(dir, 'hook.cjs');
    const prepare = JEST_JSON.split(JEST_JSON_HOOK).join(hook);
    try {
      // Twice in one shell, as reruns do: written, and named once.
      const options = execFileSync('sh', ['-c', `${prepare}${prepare} printf '%s' "$NODE_OPTIONS"`], { env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=512' } }).toString();
      expect(options).toBe(`--max-old-space-size=512 --require ${hook}`);
      expect(fs.readFileSync(hook, 'utf8')).toContain("request !== '@jest/test-result'");
      // A /tmp that refuses the hook leaves NODE_OPTIONS as it was (node would refuse to start).
      const refused = JEST_JSON.split(JEST_JSON_HOOK).join(path.join(dir, 'missing', 'hook.cjs'));
      const env = { ...process.env };
      delete env.NODE_OPTIONS;
      expect(execFileSync('sh', ['-c', `${refused} printf '%s' "\${NODE_OPTIONS:-unset}"`], { env, stdio: ['ignore', 'pipe', 'ignore'] }).toString()).toBe('unset');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs node --test and tape one file at a time, one report each', () => {
    const cmd = buildTestCommand(runnerFromCommand('node --test {files}'), ['a.test.js', 'b.test.js'], out);
    expect(cmd).toBe(
      'mkdir -p /swt-out 2>/dev/null; rc=0; ' +
        '( node --test --test-reporter=junit --test-reporter-destination=/swt-out/junit-0.xml --test-reporter=spec --test-reporter-destination=stdout a.test.js ) || rc=$?; ' +
        '( node --test --test-reporter=junit --test-reporter-destination=/swt-out/junit-1.xml --test-reporter=spec --test-reporter-destination=stdout b.test.js ) || rc=$?; exit $rc',
    );
    expect(reportNames(runnerFromCommand('node --test {files}'), 2)).toEqual(['junit-0.xml', 'junit-1.xml']);
    expect(reportNames(runnerFromCommand('npx tape {files}'), 1)).toEqual(['tap-0.txt']);
    expect(reportNames(runnerFromCommand('npx tap {files}'), 3)).toEqual(['tap.txt']);
  });

  it('replaces every {files} and appends when there is none', () => {
    expect(buildTestCommand({ kind: 'pytest', template: 'pytest' }, ['t.py'], out)).toBe(
      `mkdir -p /swt-out 2>/dev/null;${OLD_PYTEST} pytest -rA --continue-on-collection-errors --junitxml=/swt-out/junit.xml -o junit_family=xunit1 t.py`,
    );
    expect(buildTestCommand({ kind: 'jest', template: 'cd web && npx jest {files} && echo done' }, ['x.test.js'], out)).toBe(
      `mkdir -p /swt-out 2>/dev/null;${LOCAL_NPX}${JEST_JSON} cd web && npx jest --ci --runTestsByPath --json --outputFile=/swt-out/jest.json x.test.js && echo done`,
    );
  });

  it('quotes file names safely and rejects control characters', () => {
    expect(shellQuote('a/b_c-1.test.ts')).toBe('a/b_c-1.test.ts');
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(quoteTestFile('-rf.test.js')).toBe('./-rf.test.js');
    expect(quoteTestFile('a b$(x).js')).toBe(`'a b$(x).js'`);
    expect(swtCode(() => quoteTestFile('a\nb.py'))).toBe('UNSAFE_PATH');
    expect(swtCode(() => quoteTestFile(''))).toBe('UNSAFE_PATH');
    expect(swtCode(() => buildTestCommand({ kind: 'jest', template: 'npx jest {files}' }, ['ok.js', 'bad\r.js']))).toBe('UNSAFE_PATH');
  });

  it('reruns chosen tests with each runner\'s own selection, each target in its own invocation and out dir, every round', () => {
    const cmd = (template: string, targets: RerunTarget[], rounds = 1) => withoutInstall(buildRerunCommand(runnerFromCommand(template), targets, rounds, out));
    expect(cmd('python3 -m pytest {files}', [{ file: 't/test_a.py', ids: ['t/test_a.py::TestX::test_one[1-2]'] }, { file: 't/test_b.py' }], 2)).toBe(
      'rc=0; ' +
        [0, 1]
          .map(
            (r) =>
              `mkdir -p /swt-out/c${r}-0 2>/dev/null;${r === 0 ? OLD_PYTEST : ''} ( python3 -m pytest -rA --continue-on-collection-errors --junitxml=/swt-out/c${r}-0/junit.xml -o junit_family=xunit1 't/test_a.py::TestX::test_one[1-2]' ) || rc=$?; ` +
              `mkdir -p /swt-out/c${r}-1 2>/dev/null; ( python3 -m pytest -rA --continue-on-collection-errors --junitxml=/swt-out/c${r}-1/junit.xml -o junit_family=xunit1 t/test_b.py ) || rc=$?;`,
          )
          .join(' ') +
        ' exit $rc',
    );
    expect(cmd('npx jest {files}', [{ file: 'a.test.js', ids: ['a.test.js > suite > adds (1+1)', 'a.test.js > other'] }])).toContain(
      "( npx jest --ci --runTestsByPath --json --outputFile=/swt-out/c0-0/jest.json -t 'adds \\(1\\+1\\)|other' a.test.js ) || rc=$?;",
    );
    expect(cmd('npx vitest run {files}', [{ file: 'a.test.ts', ids: ['a.test.ts > s > x.y'] }])).toContain("--outputFile.junit=/swt-out/c0-0/junit.xml -t 'x\\.y' a.test.ts");
    // jest's --json hook and the npx shim go into the one shell once, whatever the targets and rounds.
    const jestTwice = buildRerunCommand(runnerFromCommand('npx jest {files}'), [{ file: 'a.test.js', ids: ['a.test.js > x'] }, { file: 'b.test.js' }], 2, out);
    expect(jestTwice.split(JEST_JSON)).toHaveLength(2);
    expect(jestTwice.split(LOCAL_NPX)).toHaveLength(2);
    expect(jestTwice.indexOf(JEST_JSON)).toBeLessThan(jestTwice.indexOf('( npx jest'));
    expect(jestTwice.match(/\( npx jest /g)).toHaveLength(4);
    const mocha = buildRerunCommand(runnerFromCommand('npx mocha --exit {files}'), [{ file: 't/a.js', ids: ["t/a.js > it's"] }], 1, out);
    // Each invocation has its own reporter, which writes its report beside itself.
    expect(mocha).toContain(`mkdir -p /swt-out/c0-0 2>/dev/null;${reporterInstall(runnerFromCommand('npx mocha --exit {files}'), '/swt-out/c0-0')} ( npx mocha --exit --require /swt-out/c0-0/swt-mocha-reporter.cjs`);
    expect(mocha).toContain("--grep 'it'\\''s' t/a.js");
    expect(cmd('node --test {files}', [{ file: 't/a.test.js', ids: ['t/a.test.js > b', 't/a.test.js > s > c'] }])).toContain(
      "--test-reporter-destination=/swt-out/c0-0/junit-0.xml --test-reporter=spec --test-reporter-destination=stdout --test-name-pattern='b|c' t/a.test.js",
    );
    // A runner that cannot select tests (tap) reruns the file.
    expect(cmd('npx tap {files}', [{ file: 't/a.js', ids: ['t/a.js > x'] }])).toContain('npx tap --reporter=tap t/a.js;');
  });

  it('survives a real shell: odd names arrive intact and the exit code is kept through tee', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swt-cmd-'));
    try {
      const names = [`it's "q".test.js`, '$(touch pwned).test.js', 'a b.test.js', '`x`;y.test.js'];
      // A stand-in "tape" that prints its argument as TAP and fails: kind tap, one file per run.
      const spec = { kind: 'tap' as const, template: `sh -c 'printf "ok 1 %s\\n" "$1"; exit 3' tape {files}` };
      const cmd = buildTestCommand(spec, names, path.join(dir, 'out'));
      let status = 0;
      try {
        execFileSync('sh', ['-c', cmd], { cwd: dir, stdio: 'pipe' });
      } catch (e) {
        status = (e as { status: number }).status;
      }
      expect(status).toBe(3);
      names.forEach((n, i) => expect(fs.readFileSync(path.join(dir, 'out', `tap-${i}.txt`), 'utf8')).toBe(`ok 1 ${n}\n`));
      expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('produced exactly the commands the captured reports came from', () => {
    const scenarios = ['pytest-base', 'jest-base', 'vitest-base', 'mocha-base', 'mocha-broken', 'node-base', 'tap-base', 'tape-base', 'pytest-timeout'];
    for (const s of scenarios) {
      const c = loadCapture(s);
      const outDir = (c.meta as unknown as { outDir: string }).outDir;
      // The reporter mocha's command writes may have been reworded since: the command around it may
      // not. The captures predate the npx shim (localNpx.ts) and the old-pytest plugin, which only come before the command.
      expect(withoutInstall(buildTestCommand(c.spec, c.meta.files, outDir).split(LOCAL_NPX).join('').split(OLD_PYTEST).join(''))).toBe(withoutInstall(c.meta.command));
    }
  });
});

describe('missingTestCommand', () => {
  it('recognises a missing runner in real outputs', () => {
    for (const s of ['sh-missing', 'jest-missing', 'pytest-missing']) {
      const c = loadCapture(s);
      expect(missingTestCommand({ exitCode: c.meta.exitCode, output: c.input.output })).toBeTruthy();
    }
    expect(missingTestCommand({ exitCode: 127, output: 'sh: 1: jest: not found\n' })).toBe('sh: 1: jest: not found');
    expect(missingTestCommand({ exitCode: 1, output: 'npm error npx canceled due to missing packages and no YES option: ["jest@30.5.2"]' })).toMatch(/npx canceled/);
  });
  it('recognises other shells and npm phrasings', () => {
    expect(missingTestCommand({ exitCode: 127, output: 'bash: line 1: vitest: command not found' })).toBe('bash: line 1: vitest: command not found');
    expect(missingTestCommand({ exitCode: 1, output: 'npm ERR! could not determine executable to run' })).toMatch(/could not determine/);
    expect(missingTestCommand({ exitCode: 1, output: "Error: Cannot find module '/testbed/node_modules/jest/bin/jest.js'\n  code: 'MODULE_NOT_FOUND',\n  requireStack: []" })).toBe(
      "Cannot find module '/testbed/node_modules/jest/bin/jest.js'",
    );
    expect(missingTestCommand({ exitCode: 127, output: 'weird' })).toBe('exit code 127 (command not found): weird');
  });
  it('says nothing for runs where the runner did run', () => {
    for (const s of ['pytest-base', 'jest-base', 'vitest-base', 'mocha-broken', 'mocha-badimport', 'node-base', 'tap-base', 'tape-base']) {
      const c = loadCapture(s);
      expect([s, missingTestCommand({ exitCode: c.meta.exitCode, output: c.input.output })]).toEqual([s, null]);
    }
    expect(missingTestCommand({ exitCode: 0, output: 'sh: 1: jest: not found' })).toBeNull();
  });
});
