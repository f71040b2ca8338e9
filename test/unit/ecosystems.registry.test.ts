import { detectEcosystems, ECOSYSTEMS, ecosystemOfPath, ecosystemOfRunner, recogniseRunner, runnerDef, supportedRunners } from '../../src/ecosystems/index.js';
import { REGISTRIES } from '../../src/ecosystems/registries.js';
import { DEFAULT_EGRESS_HOSTS } from '../../src/sandbox/egress/egressConfig.js';
import { environmentDefaults } from '../../src/pipeline/environmentDefaults.js';
import { detectRunner } from '../../src/harness/runners.js';

describe('ecosystem registry', () => {
  it('gives every ecosystem the same shape, with unique ids and runner kinds', () => {
    const kinds = ECOSYSTEMS.flatMap((e) => e.runners.map((r) => r.kind));
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(new Set(ECOSYSTEMS.map((e) => e.id)).size).toBe(ECOSYSTEMS.length);
    for (const e of ECOSYSTEMS) {
      expect(e.runners.length).toBeGreaterThan(0);
      expect(e.runnerNames.length).toBeGreaterThan(0);
      // Each default runner is one of its own kinds, and its command is recognised as that kind.
      const spec = e.defaultRunner({ files: [] });
      expect(ecosystemOfRunner(spec)?.id).toBe(e.id);
      expect(runnerDef(spec.kind).ecosystem?.id).toBe(e.id);
    }
  });

  it('puts every ecosystem\'s registries in the default egress allowlist', () => {
    for (const e of ECOSYSTEMS) {
      // C/C++ installs fetch nothing: the toolchain and the test frameworks come with its image.
      if (e.id !== 'c') expect(e.registries.length).toBeGreaterThan(0);
      for (const host of e.registries) expect(DEFAULT_EGRESS_HOSTS).toContain(host);
    }
    expect(Object.keys(REGISTRIES).sort()).toEqual(ECOSYSTEMS.map((e) => e.id).sort());
  });

  it('recognises runners in commands through their ecosystems', () => {
    expect(recogniseRunner('python3 -m pytest {files}')).toBe('pytest');
    expect(recogniseRunner('npx tape {files}')).toBe('tap');
    expect(recogniseRunner('python manage.py test {files}')).toBe('django');
    expect(recogniseRunner('make check')).toBe('make-check');
    expect(recogniseRunner('make test')).toBeUndefined();
    expect(supportedRunners()).toMatch(/^pytest, Django \(manage\.py test, runtests\.py\), jest, .* and /);
  });

  it('routes a path to the ecosystem of its language', () => {
    expect(ecosystemOfPath('pkg/a.py')?.id).toBe('python');
    expect(ecosystemOfPath('src/a.test.ts')?.id).toBe('node');
    expect(ecosystemOfPath('README.md')).toBeUndefined();
  });

  it('picks, among several ecosystems, the one whose files the test patch touches', () => {
    // A Python service with a JS front end that has its own runner.
    const facts = { files: ['pyproject.toml', 'app/core.py', 'web/package.json', 'package.json', 'web/a.test.js'], packageJson: { devDependencies: { jest: '^29' } } };
    expect(detectEcosystems(facts).map((d) => d.ecosystem.id)).toEqual(['node', 'python']);
    expect(detectRunner(facts).kind).toBe('jest');
    expect(detectRunner(facts, ['tests/test_core.py']).kind).toBe('pytest');
    expect(environmentDefaults(facts, undefined, ['tests/test_core.py']).image).toMatch(/^python:/);
    expect(environmentDefaults(facts, undefined, ['web/a.test.js']).image).toMatch(/^node:/);
  });

  it('takes the environment of the runner a command names', () => {
    expect(environmentDefaults({ files: ['README.md'] }, { kind: 'mocha', template: 'npx mocha {files}' }).image).toMatch(/^node:/);
  });
});
