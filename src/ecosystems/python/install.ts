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
import { INSTALL_NOTES, installNote } from '../command.js';
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
  /** The distribution's name, when a manifest states it literally. */
  name?: string;
  /** Its version comes from git (setuptools-scm, hatch-vcs): /testbed has no .git to take it from. */
  scmVersion: boolean;
}

/** What the install is told besides the manifests: RepoFacts' `asOf` and `tagVersion`. */
export interface InstallTime {
  asOf?: string;
  tagVersion?: string;
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
  const name = projectName(pyproject, text('setup.cfg'), text('setup.py'));
  const scmVersion = [text('pyproject.toml'), text('setup.cfg'), text('setup.py')].some((t) => !!t && SCM_MARKERS.test(t));
  const requiresPython = typeof pyproject?.project?.['requires-python'] === 'string' ? (pyproject.project['requires-python'] as string) : undefined;
  return { installable, extras, groupRequirements: groupReqs, requirementFiles, sourceRoot: srcLayout ? 'src' : '.', ...(requiresPython ? { requiresPython } : {}), ...(name ? { name } : {}), scmVersion };
}

const SCM_MARKERS = /setuptools[-_]scm|hatch-vcs|use_scm_version|versioningit|pdm-backend.*scm|dunamai/;

function projectName(pyproject: Record<string, any> | undefined, setupCfg: string | undefined, setupPy: string | undefined): string | undefined {
  const n =
    (typeof pyproject?.project?.name === 'string' ? (pyproject.project.name as string) : undefined) ??
    /^\[metadata\][^[]*?^name\s*=\s*([A-Za-z0-9._-]+)\s*$/m.exec(setupCfg ?? '')?.[1] ??
    /\bsetup\s*\([^]*?\bname\s*=\s*['"]([A-Za-z0-9._-]+)['"]/.exec(setupPy ?? '')?.[1];
  return n && /^[A-Za-z0-9._-]+$/.test(n) ? n : undefined;
}

/** When each Python minor came out: its wheels for the dependencies of the day follow within weeks. */
const PYTHON_RELEASES: ReadonlyArray<[minor: number, date: string]> = [
  [6, '2016-12-23'],
  [7, '2018-06-27'],
  [8, '2019-10-14'],
  [9, '2020-10-05'],
  [10, '2021-10-04'],
  [11, '2022-10-24'],
  [12, '2023-10-02'],
  [13, '2024-10-07'],
  [14, '2025-10-07'],
];
const WHEELS_AFTER_DAYS = 60;

/**
 * The newest Python minor (up to the default) out for 60 days at `asOf`: a 2022 commit resolved
 * as of its date gets numpy 1.22, which has no wheels for 3.11 (built from source, it fails).
 */
function minorOfItsTime(def: number, asOf: string | undefined): number {
  const t = asOf ? Date.parse(asOf) : NaN;
  if (Number.isNaN(t)) return def;
  const out = PYTHON_RELEASES.filter(([, d]) => Date.parse(d) + WHEELS_AFTER_DAYS * 864e5 <= t).map(([m]) => m);
  return Math.min(def, out.length ? out[out.length - 1]! : PYTHON_RELEASES[0]![0]);
}

/** The minors a requires-python specifier allows, as bounds (`low` 0 and `high` Infinity when open). */
function allowedMinors(spec: string | undefined): { low: number; high: number } {
  let low = 0;
  let high = Infinity;
  for (const m of (spec ?? '').matchAll(/(>=|>|<=|<|==|~=)\s*3\.(\d+)/g)) {
    const minor = Number(m[2]);
    if (m[1] === '>=' || m[1] === '~=') low = Math.max(low, minor);
    else if (m[1] === '>') low = Math.max(low, minor); // `>3.9` allows 3.9.1; treat as its minor
    else if (m[1] === '<') high = Math.min(high, minor - 1);
    else if (m[1] === '<=') high = Math.min(high, minor);
    else if (m[1] === '==') (low = Math.max(low, minor)), (high = Math.min(high, minor));
  }
  return { low, high };
}

function chosenMinor(spec: string | undefined, asOf?: string): number {
  const def = minorOfItsTime(Number(DEFAULT_PYTHON.split('.')[1]), asOf);
  const { low, high } = allowedMinors(spec);
  return def < low ? low : def > high ? high : def;
}

/**
 * The Python minor for a requires-python specifier: 3.11 (or, with `asOf`, the minor of that
 * date) when it allows it, else the nearest it allows.
 */
export function pythonVersionFor(spec: string | undefined, asOf?: string): string {
  return `3.${chosenMinor(spec, asOf)}`;
}

/**
 * The two minors below that choice, where the specifier allows them, newest first: what serves
 * best when the chosen one cannot be had (offline), since a newer Python than the code's time
 * lacks the wheels of its pins.
 */
export function olderPythonsFor(spec: string | undefined, asOf?: string): string[] {
  const minor = chosenMinor(spec, asOf);
  const low = Math.max(allowedMinors(spec).low, minor - 2);
  return Array.from({ length: Math.max(0, minor - low) }, (_, i) => `3.${minor - 1 - i}`);
}

/** setuptools-scm's variable for one distribution only (dependencies built from source keep theirs). */
function pretendVariable(name: string): string {
  return `SETUPTOOLS_SCM_PRETEND_VERSION_FOR_${name.replace(/[-_.]+/g, '_').toUpperCase()}`;
}

/**
 * Shell that writes a PKG-INFO holding the version in `$variable` where the project has none
 * (SWT_PKG_INFO=1 then): setuptools-scm before 6 knows no per-distribution variable, and reads an
 * unpacked sdist's PKG-INFO when there is no git. Metadata 1.0, which uv does not take as static.
 */
function pkgInfo(name: string, variable: string): string {
  return `[ -e PKG-INFO ] || { printf 'Metadata-Version: 1.0\\nName: %s\\nVersion: %s\\n' ${shellQuote(name)} "$${variable}" > PKG-INFO && SWT_PKG_INFO=1; }; `;
}

/**
 * The project's own version for a build that takes it from git: its tag (`tagVersion`), else, as
 * of `asOf`, its last release on PyPI before then (uv resolves the name alone). A shell prefix
 * exporting it for this distribution only and writing it to PKG-INFO (pkgInfo), or '' when
 * neither can tell.
 */
function ownVersion(project: PythonProject, time: InstallTime): string {
  if (!project.scmVersion || !project.name) return '';
  const v = pretendVariable(project.name);
  if (time.tagVersion) return `export ${v}=${shellQuote(time.tagVersion)}; ${pkgInfo(project.name, v)}`;
  if (!time.asOf) return '';
  const ask = `printf '%s\\n' ${shellQuote(project.name)} | uv pip compile - --no-deps --no-header --no-annotate -q --exclude-newer ${shellQuote(time.asOf)} 2>/dev/null | sed -n 's/^[^=]*==//p'`;
  const day = time.asOf.slice(0, 10);
  return (
    `${v}=$(${ask}); if [ -n "$${v}" ]; then printf '%s%s%s\\n' ${shellQuote('swt: the project version is ')} "$${v}" ${shellQuote(`, its last release on PyPI before ${day}: the repository has no tag to take it from`)} | tee -a ${INSTALL_NOTES}; ` +
    `else ${v}=0.0.0+swt; ${installNote(`the project version is a stand-in, 0.0.0+swt: no tag in the repository, no release on PyPI before ${day}`)}; fi; export ${v}; ${pkgInfo(project.name, v)}`
  );
}

/**
 * The build tools are never older than this: uv builds a setup.py with no [build-system] with
 * `setuptools>=40.8.0` (2019), and an editable install needs setuptools 64 (August 2022). Before
 * it, a 2015 commit's install found no setuptools at all.
 */
const BUILD_TOOLS_FLOOR = '2022-09-01T00:00:00Z';

/** The uv the install fetches: its retries read uv's own hints, whose wording a release may change. */
const UV_VERSION = '0.13.9';

/** Python's `{minor: date}`: when each minor had been out for WHEELS_AFTER_DAYS. */
const INTERPRETER_DATES = `{${PYTHON_RELEASES.map(([m, d]) => `${m}: "${new Date(Date.parse(d) + WHEELS_AFTER_DAYS * 864e5).toISOString().slice(0, 10)}T00:00:00Z"`).join(', ')}}`;

/**
 * Shell setting `$d`, the date unpinned dependencies resolve as of, and `$t`, the build tools'.
 * `$d` is `asOf`, or later when the interpreter that runs the commit is newer than its date (an
 * offline build serves a 2015 commit with Python 3.9): what was out before that interpreter
 * cannot run on it (coverage 4.0 of 2015 reads opcodes 3.8 removed), so it resolves as of when
 * that Python had been out for 60 days. `$t` is never before BUILD_TOOLS_FLOOR.
 */
function resolutionDates(asOf: string): string {
  const py = `import sys; a = "${asOf}"; d = max(a, ${INTERPRETER_DATES}.get(sys.version_info[1], a)); print(d, max(d, "${BUILD_TOOLS_FLOOR}"))`;
  return `set -- $(python3 -c ${shellQuote(py)}) && d=$1 t=$2`;
}

/**
 * Time-consistent: uv (from PyPI) installs with `--exclude-newer` (resolutionDates), into the user
 * site as pip would (the images' site-packages belong to root); pytest too when the project does
 * not bring it.
 */
function timedInstall(project: PythonProject, time: InstallTime & { asOf: string }, args: string): string {
  const pip = 'python3 -m pip install --no-input --progress-bar off';
  const uv = `uv pip install --python python3 --prefix "$(python3 -m site --user-base)" --exclude-newer "$d" --exclude-newer-package setuptools="$t" --exclude-newer-package wheel="$t"`;
  const getUv = `{ command -v uv >/dev/null 2>&1 || ${pip} uv==${UV_VERSION}; }`;
  const pytest = `{ python3 -c 'import pytest' 2>/dev/null || ${uv} pytest; }`;
  const day = time.asOf.slice(0, 10);
  const said =
    `if [ "$d" = ${shellQuote(time.asOf)} ]; then ${installNote(`dependencies resolved as of ${day} (the base commit date; uv --exclude-newer ${time.asOf})`)}; ` +
    `else echo "swt: dependencies resolved as of \${d%%T*} (uv --exclude-newer $d), not the base commit date ${day}: $(python3 -V) came out after it, and what was out before cannot run on it" | tee -a ${INSTALL_NOTES}; fi`;
  // A package whose releases before the date were taken off PyPI since (atomicwrites, deleted in
  // 2022 but for 1.4.1) leaves nothing to resolve: uv names it in a hint, and it is taken as of
  // today, said, up to five times. A project that pins a setuptools before 64 (no editable builds)
  // is built once more without its own isolation, on the setuptools of the tools' date. The
  // PKG-INFO ownVersion wrote goes once the project is built.
  const log = '/tmp/swt-uv.log';
  const hint = "s/^hint: `\\([A-Za-z0-9._-]*\\)` was filtered by `exclude-newer`.*/\\1/p";
  const noEditable = project.name
    ? `if [ -z "\${e:-}" ] && grep -q "has no attribute 'build_editable'" ${log}; then e=1; ${uv} 'setuptools>=64' wheel && x="$x --no-build-isolation-package ${shellQuote(project.name)}" && ` +
      `echo 'swt: the build backend the project pins cannot build an editable install: it is built with setuptools 64 or later' | tee -a ${INSTALL_NOTES}; continue; fi; `
    : '';
  const retry =
    `x=''; n=0; while :; do ${uv} $x ${args} > ${log} 2>&1; rc=$?; cat ${log}; [ $rc -eq 0 ] && break; ${noEditable}` +
    `p=$(sed -n ${shellQuote(hint)} ${log} | head -n 1); [ -n "$p" ] && [ $n -lt 5 ] || break; n=$((n + 1)); ` +
    `x="$x --exclude-newer-package $p=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "swt: $p has no release before \${d%%T*} left on PyPI (taken off since): it is today's" | tee -a ${INSTALL_NOTES}; done`;
  const install = `( ${ownVersion(project, time)}${retry}; [ -z "\${SWT_PKG_INFO:-}" ] || rm -f PKG-INFO; exit $rc )`;
  return `{ ${getUv} && ${resolutionDates(time.asOf)} && ${install} && ${pytest} && { ${said}; }; }`;
}

/**
 * The install command. Online: pip installs the project with its test extras, groups and
 * requirement files. With `time.asOf`, uv installs the same first, taking no release published
 * after that date; pip with today's releases is its fallback. When that fails too (no index
 * answers), the air-gapped fallback and a line saying so.
 */
export function pythonInstall(project: PythonProject, time: InstallTime = {}): string {
  const pip = 'python3 -m pip install --no-input --progress-bar off';
  const reqs = project.requirementFiles.flatMap((f) => ['-r', shellQuote(f)]);
  const groups = project.groupRequirements.map(shellQuote);
  const target = project.extras.length ? shellQuote(`.[${project.extras.join(',')}]`) : '.';
  const args = (project.installable ? ['-e', target, ...reqs, ...groups] : [...reqs, ...groups]).join(' ');
  const timed = (ok: string) => (time.asOf && args ? `${timedInstall(project, { ...time, asOf: time.asOf }, args)} || { ${installNote(`the install as of ${time.asOf.slice(0, 10)} (uv --exclude-newer) failed: installing current releases instead`)}; ${ok}; }` : ok);
  if (!project.installable) {
    if (!args) return '';
    return timed(`${pip} ${args} || ${installNote('the install through the package index failed (no index answered?): tests run with the packages the image holds')}`);
  }
  // The official python images have no pytest: add it when the project's test dependencies did not.
  const own = project.scmVersion && project.name && time.tagVersion ? `export ${pretendVariable(project.name)}=${shellQuote(time.tagVersion)}; ` : '';
  const online = `${pip} ${args} && { python3 -c 'import pytest' 2>/dev/null || ${pip} pytest; }`;
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
  return timed(`${own ? `( ${own}${online} )` : online} || ${scm} || ${offline}`);
}
