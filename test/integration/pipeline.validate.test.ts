import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { swt } from '../helpers/cli.js';
import { createFixtureRepo, type FixtureRepo } from '../../src/demo/fixtureRepos.js';
import { validate } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';


describe('validate on fixture repositories (real containers)', () => {
  let py: FixtureRepo;
  let ts: FixtureRepo;
  let scratch: string;

  beforeAll(async () => {
    py = await createFixtureRepo('py-durations');
    ts = await createFixtureRepo('ts-chunk');
    scratch = await mkdtemp(join(tmpdir(), 'swt-validate-'));
  });
  afterAll(async () => {
    await Promise.all([py.cleanup(), ts.cleanup(), rm(scratch, { recursive: true, force: true })]);
    expect(containersOfOursOnceRetired()).toBe('');
  });

  it('python/pytest: the golden test goes F2P on base→head, the old ones P2P', async () => {
    const sandbox = await createDockerSandbox();
    const v = await validate(sandbox, {
      repo: py.dir,
      base: py.base,
      head: py.head,
      testPatch: py.instance.test_patch,
      image: py.instance.image,
      install: py.instance.install,
      testCmd: py.instance.test_cmd,
    });
    const byId = Object.fromEntries(v.tests.map((t) => [t.id, t]));
    expect(byId['tests/test_parse.py::test_combined_units']).toMatchObject({ transition: 'F2P', base: 'fail', head: 'pass' });
    expect(byId['tests/test_parse.py::test_combined_units'].baseFailure?.message).toMatch(/ValueError|invalid literal/);
    expect(byId['tests/test_parse.py::test_single_unit'].transition).toBe('P2P');
    expect(v.success).toBe(true);
    expect(v.likelyCorrect).toBe(true);
  });

  it('typescript/vitest: base + fix patch, detected image and install, F2P', async () => {
    const sandbox = await createDockerSandbox();
    const v = await validate(sandbox, {
      repo: ts.dir,
      base: ts.base,
      fixPatch: ts.instance.patch,
      testPatch: ts.instance.test_patch,
      image: ts.instance.image,
      install: ts.instance.install,
    });
    expect(v.runner).toBe('vitest');
    const f2p = v.tests.filter((t) => t.transition === 'F2P').map((t) => t.id);
    expect(f2p).toEqual(['src/chunk.spec.ts > chunk > keeps the remainder as a last group']);
    expect(v.tests.filter((t) => t.transition === 'P2P')).toHaveLength(3);
    expect(v.success).toBe(true);
  });

  it("on a PR head that adds its own test to the same file, an unrelated generated test is not credited with the PR's F2P", async () => {
    const unrelated = [
      'diff --git a/tests/test_parse.py b/tests/test_parse.py',
      '--- a/tests/test_parse.py',
      '+++ b/tests/test_parse.py',
      '@@ -6,5 +6,9 @@ from durations import parse_duration, format_duration',
      ' def test_plain_seconds():',
      '     assert parse_duration("90") == 90',
      ' ',
      '+def test_generated_but_unrelated():',
      '+    assert parse_duration("3s") == 3',
      '+',
      '+',
      ' ',
      ' def test_single_unit():',
      '',
    ].join('\n');
    const sandbox = await createDockerSandbox();
    const v = await validate(sandbox, { repo: py.dir, base: py.base, head: py.head, testPatch: unrelated, image: 'python:3.11', install: '', testCmd: py.instance.test_cmd });
    const byId = Object.fromEntries(v.tests.map((t) => [t.id, t]));
    expect(byId['tests/test_parse.py::test_combined_units']).toMatchObject({ transition: 'F2P', preexisting: true });
    expect(byId['tests/test_parse.py::test_generated_but_unrelated']).toMatchObject({ transition: 'P2P' });
    expect(byId['tests/test_parse.py::test_generated_but_unrelated'].preexisting).toBeUndefined();
    expect(v.baseline).not.toBeNull();
    expect(v.success).toBe(false);
    expect(v.likelyCorrect).toBe(false);
  });

  it('CLI --json prints one object with tests, success and likelyCorrect as the last line', async () => {
    const tests = join(scratch, 'tests.patch');
    await writeFile(tests, py.instance.test_patch);
    const r = await swt('validate', '--repo', py.dir, '--base', py.base, '--head', py.head, '--tests', tests, '--json');
    expect(r.code).toBe(0);
    const last = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(last.success).toBe(true);
    expect(last.likelyCorrect).toBe(true);
    expect(last.tests).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'tests/test_parse.py::test_combined_units', base: 'fail', head: 'pass', transition: 'F2P' })]),
    );
  });

  it('reads .github/swt.yml at base: its test command and limits apply, CLI flags win', async () => {
    const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: py.dir, encoding: 'utf8' }).trim();
    git('checkout', '-q', '-b', 'with-config', py.base);
    await mkdir(join(py.dir, '.github'), { recursive: true });
    await writeFile(join(py.dir, '.github', 'swt.yml'), 'image: python:3.11\ninstall: ""\ntest_command: python3 -m pytest -p no:cacheprovider -x {files}\nlimits:\n  timeout_seconds: 60\n');
    git('add', '.github/swt.yml');
    git('commit', '-q', '-m', 'config');
    const configured = git('rev-parse', 'HEAD');
    await writeFile(join(py.dir, '.github', 'swt.yml'), 'test_command: [oops\n');
    git('commit', '-q', '-am', 'broken config');
    const broken = git('rev-parse', 'HEAD');
    git('checkout', '-q', py.head);
    const sandbox = await createDockerSandbox();
    const v = await validate(sandbox, { repo: py.dir, base: configured, fixPatch: py.instance.patch, testPatch: py.instance.test_patch });
    expect(v.runner).toBe('pytest');
    expect(v.success).toBe(true);
    const tests = join(scratch, 'cfg-tests.patch');
    await writeFile(tests, py.instance.test_patch);
    const r = await swt('validate', '--repo', py.dir, '--base', broken, '--head', py.head, '--tests', tests);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^swt: error: \.github\/swt\.yml:\d+: not valid YAML/);
  });

  describe('bad input: a one-line error and a non-zero exit', () => {
    let tests: string;
    beforeAll(async () => {
      tests = join(scratch, 'bad-tests.patch');
      await writeFile(tests, py.instance.test_patch);
    });
    const expectOneLine = (r: { code: number; stderr: string }, pattern: RegExp) => {
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(pattern);
    };

    it('a path that is not a git repository', async () => {
      expectOneLine(await swt('validate', '--repo', scratch, '--base', 'HEAD', '--head', 'HEAD', '--tests', tests), /not a git repository/);
    });
    it('an unknown revision', async () => {
      expectOneLine(await swt('validate', '--repo', py.dir, '--base', 'no-such-rev', '--head', py.head, '--tests', tests), /unknown revision 'no-such-rev'/);
    });
    it('a patch that does not apply names the file and the hunk', async () => {
      const broken = join(scratch, 'broken.patch');
      await writeFile(broken, py.instance.test_patch.replace('def test_format_round_trip():', 'def test_something_else():'));
      expectOneLine(
        await swt('validate', '--repo', py.dir, '--base', py.base, '--head', py.head, '--tests', broken),
        /tests\/test_parse\.py.*hunk 1/,
      );
    });
    it('a test command that does not exist', async () => {
      expectOneLine(
        await swt('validate', '--repo', py.dir, '--base', py.base, '--head', py.head, '--tests', tests, '--image', 'python:3.11', '--test-cmd', 'mocha {files}'),
        /test command.*(not found|does not exist)/i,
      );
    });
    it('a Docker engine that cannot be reached says how to start one', async () => {
      const saved = process.env.DOCKER_HOST;
      process.env.DOCKER_HOST = 'tcp://127.0.0.1:1';
      try {
        expectOneLine(await swt('validate', '--repo', py.dir, '--base', py.base, '--head', py.head, '--tests', tests), /Docker.*(start|dockerd)/i);
      } finally {
        if (saved === undefined) delete process.env.DOCKER_HOST;
        else process.env.DOCKER_HOST = saved;
      }
    });
  });
});
