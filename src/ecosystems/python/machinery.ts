/** Python's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import { iniSections, partChanged, tomlPart } from '../machinery.js';
import type { PathInfo, TestMachinery } from '../types.js';

const MANIFESTS = new Set(['setup.py', 'setup.cfg', 'pyproject.toml', 'Pipfile.lock', 'poetry.lock']);

export const pythonDependencyManifest = (p: PathInfo): boolean => MANIFESTS.has(p.base) || /^requirements.*\.txt$/.test(p.base);

/** Read by pytest wherever they are, whatever they say. */
const ALWAYS = new Set(['conftest.py', 'pytest.ini', '.pytest.ini', 'pytest.toml', '.pytest.toml', 'sitecustomize.py', 'usercustomize.py']);
/** At the root, these shadow pytest itself (`python -m pytest` puts the working directory first on sys.path). */
const SHADOWS = /^(_pytest|pytest|pluggy|py)(\.py)?$/;

/** The parts of a file pytest reads (its config sections, a plugin's `pytest11` entry point). */
const PARTS: Record<string, (text: string) => unknown> = {
  'pyproject.toml': tomlPart(['tool.pytest', 'project.entry-points.pytest11', 'tool.poetry.plugins.pytest11']),
  'setup.cfg': iniSections(['tool:pytest', 'options.entry_points']),
  'tox.ini': iniSections(['pytest']),
  // setup.py is code: any change of one that names a pytest plugin entry point, at base or at head.
  'setup.py': (text) => (/pytest11/.test(text) ? text : null),
};

export const pythonMachinery: TestMachinery = {
  reads: (changed) => changed.filter((f) => PARTS[f.split('/').pop()!] !== undefined),
  changes(p, texts) {
    if (ALWAYS.has(p.base) || p.base.endsWith('.pth')) return true;
    if (SHADOWS.test(p.dirs[0] ?? p.base)) return true;
    const part = PARTS[p.base];
    return part !== undefined && partChanged(p.path, texts, part);
  },
};
