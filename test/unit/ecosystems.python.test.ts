import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { oldPytestPrepare } from '../../src/ecosystems/python/oldPytest.js';
import { pythonInstall, pythonProject, pythonVersionFor } from '../../src/ecosystems/python/install.js';
import { environmentDefaults } from '../../src/pipeline/environmentDefaults.js';

const PYPROJECT = `
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "mathx"
requires-python = ">=3.8"
dependencies = ["attrs"]

[project.optional-dependencies]
test = ["pytest"]
docs = ["sphinx"]
dev = ["ruff"]

[dependency-groups]
lint = ["ruff"]
tests = ["hypothesis>=6", { include-group = "lint" }]
`;

describe('Python projects that must be installed', () => {
  it('reads a src-layout pyproject: test extras, dependency groups, requirement files, source root', () => {
    const files = ['pyproject.toml', 'src/mathx/__init__.py', 'tests/test_a.py', 'requirements-dev.txt', 'requirements-test-extra.txt', 'docs/requirements.txt'];
    const p = pythonProject({ files, manifests: { 'pyproject.toml': PYPROJECT } });
    expect(p).toEqual({
      installable: true,
      extras: ['test', 'dev'],
      groupRequirements: ['hypothesis>=6', 'ruff'],
      requirementFiles: ['requirements-dev.txt', 'requirements-test-extra.txt'],
      sourceRoot: 'src',
      requiresPython: '>=3.8',
      name: 'mathx',
      scmVersion: false,
    });
    const install = pythonInstall(p);
    expect(install).toMatch(/^python3 -m pip install --no-input --progress-bar off -e '\.\[test,dev\]' -r requirements-dev\.txt -r requirements-test-extra\.txt 'hypothesis>=6' ruff && /);
    // Air-gapped: installs without the index, else a .pth to src/, and says which.
    expect(install).toContain("|| { echo 'swt: the install through the package index failed (no index answered?)");
    expect(install).toContain('| tee -a "$HOME/.swt-install-notes"');
    expect(install).toContain('--no-build-isolation --no-index --no-deps -e .');
    expect(install).toContain("swt-source.pth");
    expect(install).toContain('os.path.abspath("src")');
  });

  it('reads extras from setup.cfg and setup.py', () => {
    const cfg = '[metadata]\nname = x\n\n[options.extras_require]\ntesting =\n    pytest\nfoo = bar\n\n[options]\npackages = find:\n';
    expect(pythonProject({ files: ['setup.cfg'], manifests: { 'setup.cfg': cfg } }).extras).toEqual(['testing']);
    const py = "from setuptools import setup\nsetup(name='x', extras_require={'tests': ['pytest'], \"docs\": []})\n";
    expect(pythonProject({ files: ['setup.py'], manifests: { 'setup.py': py } }).extras).toEqual(['tests']);
    expect(pythonProject({ files: ['setup.py'], manifests: { 'setup.py': 'setup(extras_require=dict(dev=["x"]))' } }).extras).toEqual(['dev']);
  });

  it('installs only requirement files for a project that is not installable, and nothing when there are none', () => {
    expect(pythonInstall(pythonProject({ files: ['requirements.txt', 'a.py'] }))).toMatch(/^python3 -m pip install .* -r requirements\.txt \|\| echo 'swt: /);
    expect(environmentDefaults({ files: ['pytest.ini', 'tests/test_a.py'] })).toEqual({ image: 'python:3.11', install: '', fallbackImages: ['python:3.10', 'python:3.9'] });
    // A pyproject.toml that only configures tools is not a project to install.
    expect(pythonProject({ files: ['pyproject.toml'], manifests: { 'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-q"\n' } }).installable).toBe(false);
  });

  it('picks the image from requires-python', () => {
    expect(pythonVersionFor(undefined)).toBe('3.11');
    expect(pythonVersionFor('>=3.8')).toBe('3.11');
    expect(pythonVersionFor('>=3.12')).toBe('3.12');
    expect(pythonVersionFor('>=3.7,<3.10')).toBe('3.9');
    expect(pythonVersionFor('~=3.13')).toBe('3.13');
    expect(environmentDefaults({ files: ['pyproject.toml'], manifests: { 'pyproject.toml': PYPROJECT } }).image).toBe('python:3.11');
  });
});

describe('the old-pytest plugin', () => {
  // The prepare shell, run by sh in a scratch HOME and checkout: what it exports.
  function exported(installed: string | undefined, env: Record<string, string> = {}): string {
    const home = mkdtempSync(join(tmpdir(), 'swt-oldpytest-'));
    try {
      if (installed) mkdirSync(join(home, '.local/lib/python3.9/site-packages', installed), { recursive: true });
      const script = `cd ${home} &&${oldPytestPrepare().replaceAll('/tmp/swt-pytest', join(home, 'plugin'))} echo "[$PYTEST_ADDOPTS]"`;
      return execFileSync('sh', ['-c', script], { encoding: 'utf8', env: { PATH: process.env.PATH!, HOME: home, ...env } }).trim();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
  it('is enabled only where a pytest before 3.0.7 is installed, once, after what the command had', () => {
    expect(exported('pytest-2.8.1.dist-info')).toBe('[-p swt_old_pytest]');
    expect(exported('pytest-3.0.6-py3.9.egg-info')).toBe('[-p swt_old_pytest]');
    expect(exported('pytest-3.0.7.dist-info')).toBe('[]');
    expect(exported('pytest-8.3.5.dist-info')).toBe('[]');
    expect(exported(undefined)).toBe('[]');
    expect(exported('pytest-2.9.2.dist-info', { PYTEST_ADDOPTS: '-x' })).toBe('[-x -p swt_old_pytest]');
    expect(exported('pytest-2.9.2.dist-info', { PYTEST_ADDOPTS: '-p swt_old_pytest' })).toBe('[-p swt_old_pytest]');
  });
});
