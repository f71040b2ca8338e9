/**
 * Time-consistent installs (issue 39): a commit from years ago installs the dependencies its date
 * allowed, not today's (werkzeug 3 under a 2023 Flask, numpy 2 under a 2022 library). The pure
 * parts: the cut-off date from the base commit's, the project's version from its tags, and the
 * install commands that take the date (uv --exclude-newer for Python, npm --before).
 */
import { execFileSync } from 'node:child_process';
import { asOfModeFromEnv, installAsOf, versionFromDescribe } from '../../src/pipeline/asOf.js';
import { olderPythonsFor, pythonInstall, pythonProject, pythonVersionFor } from '../../src/ecosystems/python/install.js';
import { python } from '../../src/ecosystems/python/index.js';
import { node } from '../../src/ecosystems/node/index.js';
import { commitDateAndTag } from '../../src/repo/git.js';
import { parseRepoConfig } from '../../src/config/repoConfig.js';
import { environmentKey } from '../../src/sandbox/images/envKey.js';
import { cleanupGitRepos, createGitRepo } from '../helpers/gitRepo.js';

const NOW = new Date('2026-11-28T12:00:00Z');

afterAll(cleanupGitRepos);

describe('installAsOf: the cut-off for the base commit', () => {
  it('auto: the start of the UTC day after a commit older than 30 days, in any offset', () => {
    expect(installAsOf('2023-06-01T15:04:05+02:00', 'auto', NOW)).toBe('2023-06-02T00:00:00Z');
    // 23:30 at -05:00 is the next UTC day.
    expect(installAsOf('2023-06-01T23:30:00-05:00', 'auto', NOW)).toBe('2023-06-03T00:00:00Z');
    expect(installAsOf('2026-10-28T11:59:59Z', 'auto', NOW)).toBe('2026-10-29T00:00:00Z');
  });
  it('auto: today for a recent commit; base: its date all the same; today: never; no date or a bad one: today', () => {
    expect(installAsOf('2026-11-20T10:00:00Z', 'auto', NOW)).toBeUndefined();
    expect(installAsOf('2026-11-20T10:00:00Z', 'base', NOW)).toBe('2026-11-21T00:00:00Z');
    expect(installAsOf('2019-01-01T00:00:00Z', 'today', NOW)).toBeUndefined();
    expect(installAsOf(undefined, 'base', NOW)).toBeUndefined();
    expect(installAsOf('not a date', 'base', NOW)).toBeUndefined();
  });
  it('the setting: SWT_DEPENDENCIES_AS_OF (its three values; another is refused by name) and .github/swt.yml dependencies_as_of', () => {
    expect(asOfModeFromEnv({ SWT_DEPENDENCIES_AS_OF: 'today' })).toBe('today');
    expect(asOfModeFromEnv({ SWT_DEPENDENCIES_AS_OF: ' base ' })).toBe('base');
    expect(() => asOfModeFromEnv({ SWT_DEPENDENCIES_AS_OF: 'yesterday' })).toThrow('SWT_DEPENDENCIES_AS_OF must be auto, base or today, got "yesterday"');
    expect(asOfModeFromEnv({})).toBeUndefined();
    expect(asOfModeFromEnv({ SWT_DEPENDENCIES_AS_OF: '' })).toBeUndefined();
    expect(parseRepoConfig('dependencies_as_of: today\n').dependencies_as_of).toBe('today');
    expect(() => parseRepoConfig('dependencies_as_of: 2023-01-01\n')).toThrow(/dependencies_as_of/);
  });
});

describe('the project version from its tags', () => {
  it('versionFromDescribe: a tag, a describe past it, prefixes; not a version: none', () => {
    expect(versionFromDescribe('7.3.1')).toBe('7.3.1');
    expect(versionFromDescribe('v2.3.0')).toBe('2.3.0');
    expect(versionFromDescribe('v7.3.1-12-gabc1234')).toBe('7.3.1.post12');
    expect(versionFromDescribe('1.0rc1')).toBe('1.0rc1');
    expect(versionFromDescribe('8.0.0.dev0-79-gf5a9aa0b8')).toBe('8.0.0.dev0');
    expect(versionFromDescribe('release-1.4')).toBe('1.4');
    expect(versionFromDescribe('nightly')).toBeUndefined();
  });
  it('commitDateAndTag reads the committer date and git describe on the host; a history without tags has none', async () => {
    const repo = createGitRepo({ 'a.txt': 'a\n' }, { date: '2023-05-01T10:00:00+00:00' });
    expect(await commitDateAndTag(repo.path, repo.sha)).toEqual({ date: '2023-05-01T10:00:00+00:00' });
    repo.git('tag', 'v2.3.0');
    repo.commit({ 'b.txt': 'b\n' });
    const got = await commitDateAndTag(repo.path, repo.sha);
    expect(got.date).toBe('2023-05-01T10:00:00+00:00');
    expect(versionFromDescribe(got.describe!)).toBe('2.3.0.post1');
    expect(execFileSync('git', ['tag'], { cwd: repo.path, encoding: 'utf8' }).trim()).toBe('v2.3.0');
  });
});

const FLASKISH = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "webapp"\nversion = "1.0"\ndependencies = ["werkzeug"]\n';
const SCM = '[build-system]\nrequires = ["setuptools>=45", "setuptools_scm[toml]>=6.2"]\nbuild-backend = "setuptools.build_meta"\n';
const SCM_CFG = '[metadata]\nname = my-pytest.plugin\n\n[options]\npackages = find:\n';

/** uv's dates, set by the install's own interpreter (`$d`, `$t`). */
const UV_DATES = '--exclude-newer "$d" --exclude-newer-package setuptools="$t" --exclude-newer-package wheel="$t"';

describe('Python: uv --exclude-newer first, today\'s pip as its fallback', () => {
  it('with asOf: pip fetches uv, uv installs into the user site with the date, then says so; today\'s install, the scm retry and the air-gapped fallback follow', () => {
    const cmd = python.environment({ files: ['pyproject.toml', 'webapp/__init__.py'], manifests: { 'pyproject.toml': FLASKISH }, asOf: '2023-06-02T00:00:00Z' }).install;
    const uv = cmd.indexOf(`uv pip install --python python3 --prefix "$(python3 -m site --user-base)" ${UV_DATES} $x -e .`);
    const today = cmd.indexOf('swt: the install as of 2023-06-02 (uv --exclude-newer) failed: installing current releases instead');
    const plain = cmd.indexOf('python3 -m pip install --no-input --progress-bar off -e .', today);
    const offline = cmd.indexOf('--no-build-isolation --no-index');
    expect(cmd.startsWith('{ { command -v uv >/dev/null 2>&1 || python3 -m pip install --no-input --progress-bar off uv==0.13.9; } && ')).toBe(true);
    expect(uv).toBeGreaterThan(0);
    expect(today).toBeGreaterThan(uv);
    expect(plain).toBeGreaterThan(today);
    expect(offline).toBeGreaterThan(plain);
    expect(cmd).toContain('if [ "$d" = 2023-06-02T00:00:00Z ]; then echo \'swt: dependencies resolved as of 2023-06-02 (the base commit date; uv --exclude-newer 2023-06-02T00:00:00Z)\'');
    // pytest, when the project does not bring it, as of the same date.
    expect(cmd).toContain(`{ python3 -c 'import pytest' 2>/dev/null || uv pip install --python python3 --prefix "$(python3 -m site --user-base)" ${UV_DATES} pytest; }`);
  });
  it('without asOf the command is today\'s, unchanged in shape', () => {
    const cmd = python.environment({ files: ['pyproject.toml'], manifests: { 'pyproject.toml': FLASKISH } }).install;
    expect(cmd).not.toContain('uv');
    expect(cmd.startsWith('python3 -m pip install --no-input --progress-bar off -e .')).toBe(true);
  });
  it('requirement files alone (nothing installable) take the date too', () => {
    const cmd = pythonInstall(pythonProject({ files: ['requirements.txt', 'app.py'], manifests: {} }), { asOf: '2022-03-01T00:00:00Z' });
    expect(cmd).toContain(`${UV_DATES} $x -r requirements.txt`);
    // A package with no release left before the date (taken off PyPI since) is retried as today's, said.
    expect(cmd).toContain("--exclude-newer-package $p=$(date -u +%Y-%m-%dT%H:%M:%SZ)\"; echo \"swt: $p has no release before ${d%%T*} left on PyPI (taken off since): it is today's\"");
    // The dates, as the image's interpreter computes them (its minor stood in for by a literal):
    // never before that Python had been out for 60 days (3.9: 2020-10-05), and the build tools
    // never before September 2022 (uv builds a setup.py with setuptools>=40.8.0, an editable install needs 64).
    const dates = /(set -- \$\(python3 -c '[^']*'\) && d=\$1 t=\$2)/.exec(cmd)![1]!;
    const on = (minor: number, asOf: string) =>
      execFileSync('sh', ['-c', `${dates.replace('sys.version_info[1]', String(minor)).replace('a = "2022-03-01T00:00:00Z"', `a = "${asOf}"`)} && echo "$d $t"`], { encoding: 'utf8' }).trim();
    expect(on(9, '2022-03-01T00:00:00Z')).toBe('2022-03-01T00:00:00Z 2022-09-01T00:00:00Z');
    expect(on(9, '2015-12-16T00:00:00Z')).toBe('2020-12-04T00:00:00Z 2022-09-01T00:00:00Z');
    expect(on(11, '2022-03-01T00:00:00Z')).toBe('2022-12-23T00:00:00Z 2022-12-23T00:00:00Z');
    expect(on(5, '2015-12-16T00:00:00Z')).toBe('2015-12-16T00:00:00Z 2022-09-01T00:00:00Z');
    expect(cmd).toContain('python3 -m pip install --no-input --progress-bar off -r requirements.txt ||');
  });
  it('a version from git: the tag, exported for this distribution only, in both paths', () => {
    const p = pythonProject({ files: ['pyproject.toml', 'setup.cfg'], manifests: { 'pyproject.toml': SCM, 'setup.cfg': SCM_CFG } });
    expect(p).toMatchObject({ name: 'my-pytest.plugin', scmVersion: true });
    const cmd = pythonInstall(p, { asOf: '2023-06-02T00:00:00Z', tagVersion: '7.3.1.post4' });
    expect(cmd.match(/export SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PYTEST_PLUGIN=7\.3\.1\.post4; /g)).toHaveLength(2);
    expect(cmd).not.toContain('uv pip compile');
  });
  it('a version from git with no tag: its last release on PyPI before the date (uv resolves the name alone), else a stand-in, each said', () => {
    const p = pythonProject({ files: ['pyproject.toml', 'setup.cfg'], manifests: { 'pyproject.toml': SCM, 'setup.cfg': SCM_CFG } });
    const cmd = pythonInstall(p, { asOf: '2023-06-02T00:00:00Z' });
    expect(cmd).toContain(
      "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PYTEST_PLUGIN=$(printf '%s\\n' my-pytest.plugin | uv pip compile - --no-deps --no-header --no-annotate -q --exclude-newer 2023-06-02T00:00:00Z 2>/dev/null | sed -n 's/^[^=]*==//p')",
    );
    expect(cmd).toContain("its last release on PyPI before 2023-06-02: the repository has no tag to take it from'");
    expect(cmd).toContain('else SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PYTEST_PLUGIN=0.0.0+swt;');
    // Today's path keeps its retry with the stand-in for every distribution.
    expect(cmd).toContain('( export SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0+swt;');
  });
  it('the scm markers: hatch-vcs, setuptools_scm in setup.py; a name from setup.py', () => {
    expect(pythonProject({ files: ['setup.py'], manifests: { 'setup.py': "from setuptools import setup\nsetup(\n    name='flaskish',\n    use_scm_version=True,\n)\n" } })).toMatchObject({ name: 'flaskish', scmVersion: true });
    expect(pythonProject({ files: ['pyproject.toml'], manifests: { 'pyproject.toml': FLASKISH } })).toMatchObject({ name: 'webapp', scmVersion: false });
  });
});

describe('Node: npm install --before without a lockfile', () => {
  const facts = (extra: string[], asOf?: string) => ({ files: ['package.json', ...extra], manifests: { 'package.json': '{"name":"x","scripts":{"test":"mocha"},"devDependencies":{"mocha":"*"}}' }, ...(asOf ? { asOf } : {}) });
  it('no lockfile, with asOf: --before the date, said; today\'s install after a failure, said', () => {
    const cmd = node.environment(facts([], '2021-04-02T00:00:00Z')).install;
    expect(cmd).toContain("{ npm install --no-audit --no-fund --before=2021-04-02T00:00:00Z && echo 'swt: dependencies resolved as of 2021-04-02 (the base commit date; npm --before=2021-04-02T00:00:00Z)'");
    expect(cmd).toContain("|| { echo 'swt: the install as of 2021-04-02 (npm --before) failed: installing current releases instead'");
    expect(cmd.endsWith('rm -rf node_modules; npm install --no-audit --no-fund; }')).toBe(true);
  });
  it('a lockfile pins it already: npm ci as before; no asOf: as before', () => {
    expect(node.environment(facts(['package-lock.json'], '2021-04-02T00:00:00Z')).install).toBe('npm ci --no-audit --no-fund');
    expect(node.environment(facts([])).install).toBe('npm install --no-audit --no-fund');
  });
});

it('the environment key holds the date through the install command: two commits of one day share an image, another day gets its own', () => {
  const key = (commitDate: string) => {
    const install = python.environment({ files: ['pyproject.toml'], manifests: { 'pyproject.toml': FLASKISH }, asOf: installAsOf(commitDate, 'auto', NOW)! }).install;
    return environmentKey({ scope: '/r', trusted: true, baseImageId: 'sha256:1', install, files: [{ path: 'pyproject.toml', blob: 'b1' }] });
  };
  expect(key('2023-06-01T08:00:00Z')).toBe(key('2023-06-01T21:00:00Z'));
  expect(key('2023-06-01T08:00:00Z')).not.toBe(key('2023-06-02T08:00:00Z'));
});

it('the Python of its time: the newest minor out for 60 days at the date (up to 3.11), within requires-python', () => {
  expect(pythonVersionFor(undefined, '2023-01-04T00:00:00Z')).toBe('3.11');
  expect(pythonVersionFor(undefined, '2022-12-01T00:00:00Z')).toBe('3.10');
  expect(pythonVersionFor(undefined, '2022-03-01T00:00:00Z')).toBe('3.10');
  expect(pythonVersionFor(undefined, '2021-11-01T00:00:00Z')).toBe('3.9');
  expect(pythonVersionFor(undefined, '2015-01-01T00:00:00Z')).toBe('3.6');
  expect(pythonVersionFor(undefined, '2025-01-01T00:00:00Z')).toBe('3.11');
  expect(pythonVersionFor('>=3.11', '2022-03-01T00:00:00Z')).toBe('3.11');
  expect(pythonVersionFor('>=3.7,<3.9', '2022-03-01T00:00:00Z')).toBe('3.8');
  expect(python.environment({ files: ['setup.py'], manifests: { 'setup.py': 'from setuptools import setup\nsetup(name="old")\n' }, asOf: '2022-03-01T00:00:00Z' }).image).toBe('python:3.10');
});

it('what serves when that Python cannot be had: the two minors below it that requires-python allows, newest first', () => {
  expect(olderPythonsFor(undefined, '2022-03-01T00:00:00Z')).toEqual(['3.9', '3.8']);
  expect(olderPythonsFor('>=3.9', '2022-03-01T00:00:00Z')).toEqual(['3.9']);
  // Asked for by the project, not by the date: nothing older will do.
  expect(olderPythonsFor('>=3.10', '2021-11-01T00:00:00Z')).toEqual([]);
  expect(olderPythonsFor('>=3.7,<3.11', undefined)).toEqual(['3.9', '3.8']);
  const env = python.environment({ files: ['setup.py'], manifests: { 'setup.py': 'from setuptools import setup\nsetup(name="old", python_requires=">=3.8")\n' }, asOf: '2022-03-01T00:00:00Z' });
  expect(env).toMatchObject({ image: 'python:3.10', fallbackImages: ['python:3.9', 'python:3.8'] });
});
