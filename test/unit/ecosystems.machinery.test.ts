/**
 * Dependency manifests and test machinery as the ecosystems declare them (src/ecosystems/<id>/machinery.ts),
 * asked through the registry the way pipeline/headChanges.ts asks: which of the changed paths, given
 * the texts their rules read at base and at head.
 */
import { changedMachinery, changedManifests, ECOSYSTEMS, isDependencyManifest, machineryReads } from '../../src/ecosystems/index.js';

/** The machinery among `changed`, the read files' texts given per side (only what the rules asked for is passed on). */
function machinery(changed: string[], base: Record<string, string> = {}, head: Record<string, string> = {}): string[] {
  const reads = new Set(machineryReads(changed));
  const pick = (t: Record<string, string>) => Object.fromEntries(Object.entries(t).filter(([k]) => reads.has(k)));
  return changedMachinery(changed, { base: pick(base), head: pick(head) });
}

describe('dependency manifests (each ecosystem declares its own)', () => {
  it('every ecosystem declares both', () => {
    for (const e of ECOSYSTEMS) {
      expect(typeof e.dependencyManifest).toBe('function');
      expect(typeof e.testMachinery.changes).toBe('function');
    }
  });
  it('are what each ecosystem installs from, anywhere but in an installed copy', () => {
    expect(changedManifests(['src/a.js', 'pkgs/b/package.json', 'Cargo.lock', 'api/go.sum', 'x.gemspec', 'composer.lock', 'gradle.properties', 'requirements-test.txt', 'node_modules/y/package.json'])).toEqual([
      'Cargo.lock',
      'api/go.sum',
      'composer.lock',
      'gradle.properties',
      'pkgs/b/package.json',
      'requirements-test.txt',
      'x.gemspec',
    ]);
    expect(isDependencyManifest('conftest.py')).toBe(false);
  });
});

describe('test machinery', () => {
  it('python: conftest.py anywhere, pytest.ini, sitecustomize, .pth, a vendored pytest; pyproject/setup.cfg/tox.ini only for their pytest parts', () => {
    expect(machinery(['tests/deep/conftest.py', 'pytest.ini', 'src/sitecustomize.py', 'evil.pth', '_pytest/runner.py', 'pkg/core.py'])).toEqual([
      '_pytest/runner.py',
      'evil.pth',
      'pytest.ini',
      'src/sitecustomize.py',
      'tests/deep/conftest.py',
    ]);
    const pyBase = '[project]\nname = "a"\ndependencies = ["x"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    // A dependency bump is not machinery; addopts is.
    expect(machinery(['pyproject.toml'], { 'pyproject.toml': pyBase }, { 'pyproject.toml': pyBase.replace('["x"]', '["x", "y"]') })).toEqual([]);
    expect(machinery(['pyproject.toml'], { 'pyproject.toml': pyBase }, { 'pyproject.toml': pyBase.replace('"-q"', '"-q -p evil"') })).toEqual(['pyproject.toml']);
    // A pytest plugin entry point, and a file that does not parse, count.
    expect(machinery(['pyproject.toml'], { 'pyproject.toml': pyBase }, { 'pyproject.toml': `${pyBase}\n[project.entry-points.pytest11]\nevil = "evil"\n` })).toEqual(['pyproject.toml']);
    expect(machinery(['pyproject.toml'], { 'pyproject.toml': pyBase }, { 'pyproject.toml': `${pyBase}\n[[[` })).toEqual(['pyproject.toml']);
    const cfg = '[metadata]\nname = a\n\n[tool:pytest]\naddopts = -q\n';
    expect(machinery(['setup.cfg'], { 'setup.cfg': cfg }, { 'setup.cfg': cfg.replace('name = a', 'name = b') })).toEqual([]);
    expect(machinery(['setup.cfg'], { 'setup.cfg': cfg }, { 'setup.cfg': cfg.replace('-q', '-q -p evil') })).toEqual(['setup.cfg']);
    expect(machinery(['tox.ini'], {}, { 'tox.ini': '[pytest]\naddopts = -p evil\n' })).toEqual(['tox.ini']);
    expect(machinery(['tox.ini'], { 'tox.ini': '[tox]\nenvlist = py3\n' }, { 'tox.ini': '[tox]\nenvlist = py3,py4\n' })).toEqual([]);
  });

  it('node: runner configs and set-up files, the ones a config names, package.json test keys, committed node_modules', () => {
    expect(machinery(['jest.config.js', '.mocharc.yml', 'vitest.setup.ts', 'pkg/jest.setup.js', 'node_modules/mocha/lib/runner.js', '__mocks__/fs.js', 'src/index.js'])).toEqual([
      '.mocharc.yml',
      '__mocks__/fs.js',
      'jest.config.js',
      'node_modules/mocha/lib/runner.js',
      'pkg/jest.setup.js',
      'vitest.setup.ts',
    ]);
    // A file a config names as set-up (at base or at head): jest's setupFiles, mocha's require.
    const jest = "module.exports = { setupFiles: ['<rootDir>/test/env.js'], collectCoverageFrom: ['src/**'] };\n";
    expect(machinery(['test/env.js', 'src/index.js'], { 'jest.config.js': jest }, { 'jest.config.js': jest })).toEqual(['test/env.js']);
    expect(machinery(['test/forge.js'], {}, { '.mocharc.yml': 'require:\n  - ./test/forge.js\n' })).toEqual(['test/forge.js']);
    expect(machinery(['test/forge.js'], {}, { '.mocharc.json': '{ "require": "test/forge" }' })).toEqual(['test/forge.js']);
    // package.json: "main" names code, not set-up; the test script and the jest key are machinery.
    const pkg = (extra: object) => JSON.stringify({ name: 'a', main: 'src/index.js', scripts: { test: 'jest' }, ...extra });
    expect(machinery(['src/index.js', 'package.json'], { 'package.json': pkg({}) }, { 'package.json': pkg({ version: '2.0.0' }) })).toEqual([]);
    expect(machinery(['package.json'], { 'package.json': pkg({}) }, { 'package.json': pkg({ jest: { setupFiles: ['x.js'] } }) })).toEqual(['package.json']);
    expect(machinery(['package.json'], { 'package.json': pkg({}) }, { 'package.json': pkg({ scripts: { test: 'jest --setupFiles x.js' } }) })).toEqual(['package.json']);
  });

  it('go: a TestMain or init of a test file (new or changed), vendored modules; other test changes are not', () => {
    const plain = 'package a\n\nimport "testing"\n\nfunc TestA(t *testing.T) {}\n';
    const main = `${plain}\nfunc TestMain(m *testing.M) {\n\tm.Run()\n\tos.Exit(0)\n}\n`;
    expect(machinery(['a/main_test.go'], {}, { 'a/main_test.go': main })).toEqual(['a/main_test.go']);
    expect(machinery(['a/a_test.go'], { 'a/a_test.go': plain }, { 'a/a_test.go': plain.replace('TestA', 'TestB') })).toEqual([]);
    expect(machinery(['a/a_test.go'], { 'a/a_test.go': main }, { 'a/a_test.go': main.replace('TestA', 'TestB') })).toEqual([]);
    expect(machinery(['a/a_test.go'], { 'a/a_test.go': main }, { 'a/a_test.go': main.replace('os.Exit(0)', 'os.Exit(1)') })).toEqual(['a/a_test.go']);
    expect(machinery(['vendor/github.com/x/assert/assert.go', 'a/a.go'])).toEqual(['vendor/github.com/x/assert/assert.go']);
  });

  it('rust: build.rs, .cargo/config, Cargo.toml only for its build, targets and profiles', () => {
    expect(machinery(['build.rs', 'crates/a/build.rs', '.cargo/config.toml', 'src/lib.rs'])).toEqual(['.cargo/config.toml', 'build.rs', 'crates/a/build.rs']);
    const cargo = '[package]\nname = "a"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n';
    expect(machinery(['Cargo.toml'], { 'Cargo.toml': cargo }, { 'Cargo.toml': cargo.replace('serde = "1"', 'serde = "1.0.200"') })).toEqual([]);
    expect(machinery(['Cargo.toml'], { 'Cargo.toml': cargo }, { 'Cargo.toml': `${cargo}\n[[test]]\nname = "t"\nharness = false\n` })).toEqual(['Cargo.toml']);
  });

  it('c/c++: build files anywhere, the automake test driver and vendored test frameworks; never plain sources', () => {
    expect(machinery(['CMakeLists.txt', 'tests/CMakeLists.txt', 'cmake/Warnings.cmake', 'tests/meson.build', 'Makefile', 'test-driver', 'third_party/catch.hpp', 'extern/googletest/src/gtest.cc', 'src/parse.c', 'include/parse.h', 'tests/test_parse.c'])).toEqual([
      'CMakeLists.txt',
      'Makefile',
      'cmake/Warnings.cmake',
      'extern/googletest/src/gtest.cc',
      'test-driver',
      'tests/CMakeLists.txt',
      'tests/meson.build',
      'third_party/catch.hpp',
    ]);
    expect(changedManifests(['CMakeLists.txt', 'meson.build', 'subprojects/zlib.wrap', 'vcpkg.json', 'conanfile.txt', 'Makefile', 'src/a.c'])).toEqual(['CMakeLists.txt', 'conanfile.txt', 'meson.build', 'subprojects/zlib.wrap', 'vcpkg.json']);
  });

  it('java: build files, Maven and Gradle settings, JUnit Platform properties and service registrations in test resources', () => {
    expect(
      machinery(['pom.xml', 'm/build.gradle.kts', '.mvn/extensions.xml', 'src/test/resources/junit-platform.properties', 'm/src/test/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener', 'src/test/resources/data.json', 'src/main/java/A.java']),
    ).toEqual(['.mvn/extensions.xml', 'm/build.gradle.kts', 'm/src/test/resources/META-INF/services/org.junit.platform.launcher.TestExecutionListener', 'pom.xml', 'src/test/resources/junit-platform.properties']);
  });

  it('ruby: .rspec and what it requires, the helpers, support files, the Rakefile', () => {
    expect(machinery(['.rspec', 'spec/spec_helper.rb', 'spec/support/forge.rb', 'test/test_helper.rb', 'Rakefile', 'lib/stack.rb'])).toEqual([
      '.rspec',
      'Rakefile',
      'spec/spec_helper.rb',
      'spec/support/forge.rb',
      'test/test_helper.rb',
    ]);
    expect(machinery(['spec/forge.rb', 'lib/stack.rb'], {}, { '.rspec': '--require forge\n' })).toEqual(['spec/forge.rb']);
  });

  it('php: phpunit.xml, its bootstrap, composer autoload and scripts, committed vendor/', () => {
    expect(machinery(['phpunit.xml.dist', 'vendor/phpunit/phpunit/src/Framework/Assert.php', 'tests/bootstrap.php', 'src/Stack.php'])).toEqual([
      'phpunit.xml.dist',
      'tests/bootstrap.php',
      'vendor/phpunit/phpunit/src/Framework/Assert.php',
    ]);
    // Only the bootstrap attribute names set-up: a source file the config lists for coverage is code, not machinery.
    const xml = '<phpunit bootstrap="./boot/forge.php"><source><include><file>src/Stack.php</file></include></source></phpunit>';
    expect(machinery(['boot/forge.php', 'src/Stack.php'], {}, { 'phpunit.xml': xml })).toEqual(['boot/forge.php']);
    const composer = (extra: object) => JSON.stringify({ require: { php: '^8.1' }, autoload: { 'psr-4': { 'App\\': 'src/' } }, ...extra });
    expect(machinery(['composer.json'], { 'composer.json': composer({}) }, { 'composer.json': composer({ require: { php: '^8.2' } }) })).toEqual([]);
    expect(machinery(['composer.json'], { 'composer.json': composer({}) }, { 'composer.json': composer({ autoload: { files: ['forge.php'] } }) })).toEqual(['composer.json']);
  });
});
