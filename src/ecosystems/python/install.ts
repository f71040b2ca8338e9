/**
 * How a Python project gets installed for its tests, from its manifests. Pure.
 *
 * A project that declares itself installable (pyproject.toml with a `[project]` or `[build-system]`
 * table, setup.py, setup.cfg) gets `pip install -e .` with the test extras it declares (`test`,
 * `tests`, `testing`, `dev`), its PEP 735 dependency groups of those names, and its
 * `requirements-test*.txt` / `requirements-dev*.txt` (and `requirements.txt`). Through the egress
 * proxy that reaches PyPI. Air-gapped, the same command fails; the fallback installs from what the
 * image already holds (`--no-build-isolation --no-index`), or, when the build backend is not there
 * either, puts the source root on the path with a `.pth` file, and says so in the install's output.
 */
import { parse as parseToml } from 'smol-toml';
import { shellQuote } from '../../util/shell.js';
import { installNote } from '../command.js';
import type { RepoFacts } from '../types.js';

export const PYTHON_MANIFESTS = ['pyproject.toml', 'setup.cfg', 'setup.py'] as const;

const TEST_NAMES = ['test', 'tests', 'testing', 'dev'];
const DEFAULT_PYTHON = '3.11';

export interface PythonProject {
  installable: boolean;
  /** Extras of `.[…]` that name test dependencies. */
  extras: string[];
  /** Requirement strings of the test/dev dependency groups (pip < 25.1 has no --group). */
  groupRequirements: string[];
  /** Requirement files to install, repository-relative. */
  requirementFiles: string[];
  /** Where the importable packages live: `src` for a src layout, else the root. */
  sourceRoot: string;
  /** requires-python, when declared. */
  requiresPython?: string;
}

function tomlOf(text: string | undefined): Record<string, any> | undefined {
  if (!text) return undefined;
  try {
    return parseToml(text) as Record<string, any>;
  } catch {
    return undefined;
  }
}

/** Section keys of an INI-like setup.cfg section (`[options.extras_require]`). */
function cfgKeys(text: string | undefined, section: string): string[] {
  if (!text) return [];
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((l) => l.trim() === `[${section}]`);
  if (start < 0) return [];
  const keys: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (/^\s*\[/.test(l)) break;
    const m = /^([A-Za-z0-9_.-]+)\s*[=:]/.exec(l);
    if (m) keys.push(m[1]!);
  }
  return keys;
}

/** Keys of `extras_require={…}` / `extras_require=dict(…)` in setup.py (quoted keys or keyword arguments). */
function setupPyExtras(text: string | undefined): string[] {
  if (!text) return [];
  const at = text.search(/extras_require\s*=/);
  if (at < 0) return [];
  const body = text.slice(at, at + 4000);
  return [...body.matchAll(/['"]([A-Za-z0-9_.-]+)['"]\s*:|\b([A-Za-z_][A-Za-z0-9_]*)\s*=\s*\[/g)].map((m) => m[1] ?? m[2]!).filter((k) => k !== 'extras_require');
}

function groupRequirements(groups: Record<string, unknown> | undefined, name: string, seen = new Set<string>()): string[] {
  if (!groups || seen.has(name)) return [];
  seen.add(name);
  const list = groups[name];
  if (!Array.isArray(list)) return [];
  return list.flatMap((item) => {
    if (typeof item === 'string') return [item];
    if (item && typeof item === 'object' && typeof (item as { 'include-group'?: unknown })['include-group'] === 'string') {
      return groupRequirements(groups, (item as { 'include-group': string })['include-group'], seen);
    }
    return [];
  });
}

export function pythonProject(facts: RepoFacts): PythonProject {
  const files = facts.files;
  const text = (p: string) => facts.manifests?.[p];
  const pyproject = tomlOf(text('pyproject.toml'));
  const installable = files.includes('setup.py') || files.includes('setup.cfg') || !!(pyproject && (pyproject.project || pyproject['build-system']));
  const declared = new Set<string>([
    ...Object.keys(pyproject?.project?.['optional-dependencies'] ?? {}),
    ...cfgKeys(text('setup.cfg'), 'options.extras_require'),
    ...setupPyExtras(text('setup.py')),
  ]);
  const extras = TEST_NAMES.filter((n) => declared.has(n));
  const groups = pyproject?.['dependency-groups'] as Record<string, unknown> | undefined;
  const groupReqs = [...new Set(TEST_NAMES.flatMap((n) => groupRequirements(groups, n)))];
  const requirementFiles = files
    .filter((f) => /^requirements[-_](test|tests|testing|dev)[^/]*\.txt$/i.test(f) || f === 'requirements.txt')
    .sort((a, b) => (a === 'requirements.txt' ? -1 : b === 'requirements.txt' ? 1 : a.localeCompare(b)));
  const srcLayout = files.some((f) => /^src\/[^/]+\/__init__\.py$/.test(f) || /^src\/[^/]+\.py$/.test(f));
  const requiresPython = typeof pyproject?.project?.['requires-python'] === 'string' ? (pyproject.project['requires-python'] as string) : undefined;
  return { installable, extras, groupRequirements: groupReqs, requirementFiles, sourceRoot: srcLayout ? 'src' : '.', ...(requiresPython ? { requiresPython } : {}) };
}

/** The Python minor for a requires-python specifier: 3.11 when it allows it, else the nearest it allows. */
export function pythonVersionFor(spec: string | undefined): string {
  if (!spec) return DEFAULT_PYTHON;
  const [, def] = DEFAULT_PYTHON.split('.').map(Number) as [number, number];
  let low = 0;
  let high = Infinity;
  for (const m of spec.matchAll(/(>=|>|<=|<|==|~=)\s*3\.(\d+)/g)) {
    const minor = Number(m[2]);
    if (m[1] === '>=' || m[1] === '~=') low = Math.max(low, minor);
    else if (m[1] === '>') low = Math.max(low, minor); // `>3.9` allows 3.9.1; treat as its minor
    else if (m[1] === '<') high = Math.min(high, minor - 1);
    else if (m[1] === '<=') high = Math.min(high, minor);
    else if (m[1] === '==') (low = Math.max(low, minor)), (high = Math.min(high, minor));
  }
  const minor = def < low ? low : def > high ? high : def;
  return `3.${minor}`;
}

/**
 * The install command. Online: pip installs the project with its test extras, groups and
 * requirement files. When that fails (no index answers), the fallback and a line saying so.
 */
export function pythonInstall(project: PythonProject): string {
  const pip = 'python3 -m pip install --no-input --progress-bar off';
  const reqs = project.requirementFiles.flatMap((f) => ['-r', shellQuote(f)]);
  const groups = project.groupRequirements.map(shellQuote);
  if (!project.installable) {
    if (!reqs.length && !groups.length) return '';
    return `${pip} ${[...reqs, ...groups].join(' ')} || ${installNote('the install through the package index failed (no index answered?): tests run with the packages the image holds')}`;
  }
  const target = project.extras.length ? shellQuote(`.[${project.extras.join(',')}]`) : '.';
  // The official python images have no pytest: add it when the project's test dependencies did not.
  const online = `${pip} -e ${target} ${[...reqs, ...groups].join(' ')}`.trim() + ` && { python3 -c 'import pytest' 2>/dev/null || ${pip} pytest; }`;
  const pth =
    `python3 -c ${shellQuote(`import os, site; d = site.getusersitepackages(); os.makedirs(d, exist_ok=True); open(os.path.join(d, 'swt-source.pth'), 'w').write(os.path.abspath(${JSON.stringify(project.sourceRoot)}) + '\\n')`)}`;
  const where = project.sourceRoot === 'src' ? 'src/' : 'the repository root';
  const offline =
    `{ ${installNote('the install through the package index failed (no index answered?): installing the project from what the image holds (pip --no-build-isolation --no-index --no-deps)')}; ` +
    `${pip} --no-build-isolation --no-index --no-deps -e . || { ${installNote(`the build backend is not in the image either: ${where} is on the path through a .pth file instead`)}; ${pth}; }; }`;
  // /testbed has the files without .git: a version from git (setuptools-scm, hatch-vcs) cannot be
  // found and the build fails. Retried with a stand-in version (not first: it would apply to every
  // dependency built from source too).
  const scm = `{ ( export SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0+swt; ${online} ) && ${installNote('installed with SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0+swt: the sandbox has no .git to take the version from')}; }`;
  return `${online} || ${scm} || ${offline}`;
}
