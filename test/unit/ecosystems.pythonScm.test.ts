/**
 * A project whose version comes from git (hatch-vcs, setuptools-scm: python-humanize/humanize in
 * fixtures/instances) cannot be built from /testbed, which has no .git: the install retries with a
 * stand-in version, after the plain attempt (so dependencies built from source keep theirs).
 */
import { pythonInstall, pythonProject } from '../../src/ecosystems/python/install.js';

it('retries the install with SETUPTOOLS_SCM_PRETEND_VERSION after the plain one, says so, then falls back offline', () => {
  const pyproject = '[build-system]\nrequires = ["hatchling", "hatch-vcs"]\nbuild-backend = "hatchling.build"\n[project]\nname = "humanize"\ndynamic = ["version"]\noptional-dependencies.tests = ["freezegun", "pytest"]\n[tool.hatch.version]\nsource = "vcs"\n';
  const cmd = pythonInstall(pythonProject({ files: ['pyproject.toml', 'src/humanize/__init__.py'], manifests: { 'pyproject.toml': pyproject } }));
  const plain = cmd.indexOf("pip install --no-input --progress-bar off -e '.[tests]'");
  const retry = cmd.indexOf("( export SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0+swt; python3 -m pip install --no-input --progress-bar off -e '.[tests]'");
  const offline = cmd.indexOf('--no-build-isolation --no-index');
  expect(plain).toBeGreaterThanOrEqual(0);
  expect(retry).toBeGreaterThan(plain);
  expect(offline).toBeGreaterThan(retry);
  expect(cmd).toContain('swt: installed with SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0+swt: the sandbox has no .git to take the version from');
});
