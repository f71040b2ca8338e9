import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectEcosystem, ecosystemOfPath, recogniseRunner } from '../../src/ecosystems/index.js';
import { cargoInvocations, cargoTest, integrationTarget, libtestName, rust, rustVersionOf } from '../../src/ecosystems/rust/index.js';
import { modulePath, packageDirOf, parseLibtest } from '../../src/ecosystems/rust/libtest.js';
import { isTestFile, isTestPath } from '../../src/harness/testFiles.js';

// Real `cargo test --no-fail-fast 2>&1` output of the crate built by the capture (a lib with a
// #[cfg(test)] module, two integration test files, doc tests), from Debian bookworm's Rust 1.63,
// trixie's 1.85 and rustup's 1.95 (with RUST_BACKTRACE=1): every outcome, a test binary that
// aborts, a test killed after libtest's 60 s warning, a test file that does not compile, and a
// filtered run of one module.
const FIX = fileURLToPath(new URL('./fixtures/rust/', import.meta.url));
const read = (name: string) => readFileSync(join(FIX, name), 'utf8');
const VERSIONS = ['1.63.0', '1.85.1', '1.95.0'];

describe.each(VERSIONS)('libtest output of Rust %s', (v) => {
  const files = ['src/lib.rs', 'tests/api.rs', 'tests/more.rs'];
  const parsed = parseLibtest(read(`libtest-${v}-outcomes.txt`), { files, output: '' });
  const byId = new Map(parsed.tests.map((t) => [t.id, t]));

  it('names each test by its target and module path; the same name in three targets stays three tests', () => {
    expect([...byId.keys()].filter((id) => !id.startsWith('doc-tests')).sort()).toEqual([
      'src/lib.rs::tests::adds',
      'src/lib.rs::tests::assertion_fails',
      'src/lib.rs::tests::expected_panic',
      'src/lib.rs::tests::ignored',
      'src/lib.rs::tests::nested::returns_err',
      'src/lib.rs::tests::nested::same',
      'src/lib.rs::tests::panics',
      'src/lib.rs::tests::same',
      'tests/api.rs::api_fails',
      'tests/api.rs::same',
      'tests/more.rs::prints_then_fails',
      'tests/more.rs::same',
    ]);
    expect(byId.get('tests/api.rs::same')).toMatchObject({ outcome: 'passed', file: 'tests/api.rs' });
    expect(byId.get('src/lib.rs::tests::same')).toMatchObject({ outcome: 'passed', file: 'src/lib.rs' });
    expect(parsed.complete).toBe(true);
  });

  it('reads passes, assertion failures, panics, Err returns, should_panic and ignored tests', () => {
    expect(byId.get('src/lib.rs::tests::adds')!.outcome).toBe('passed');
    expect(byId.get('src/lib.rs::tests::expected_panic')!.outcome).toBe('passed');
    expect(byId.get('src/lib.rs::tests::ignored')!.outcome).toBe('skipped');
    expect(byId.get('src/lib.rs::tests::assertion_fails')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('one and two') });
    expect(byId.get('src/lib.rs::tests::panics')).toMatchObject({ outcome: 'failed', message: expect.stringContaining('index out of bounds') });
    expect(byId.get('src/lib.rs::tests::nested::returns_err')!.outcome).toBe('failed');
    expect(byId.get('tests/more.rs::prints_then_fails')).toMatchObject({ outcome: 'failed', message: expect.stringContaining('multi') });
  });

  it('keeps doc tests apart from the unit tests', () => {
    const docs = parsed.tests.filter((t) => t.id.startsWith('doc-tests demo::'));
    expect(docs.map((t) => [t.id, t.outcome]).sort()).toEqual([
      ['doc-tests demo::src/lib.rs - add (line 5)', 'passed'],
      ['doc-tests demo::src/lib.rs - sub (line 14)', 'failed'],
    ]);
  });

  it('turns a test file that does not compile into a build failure of the package, with the compiler\'s message', () => {
    const r = parseLibtest(read(`libtest-${v}-build-failure.txt`), { files: ['tests/broken.rs'], output: '' });
    expect(r.tests).toEqual([]);
    expect(r.buildFailures).toEqual([{ unit: 'demo', dir: '', message: expect.stringMatching(/cannot find function `mul`[\s\S]*tests\/broken\.rs:2:39/) }]);
    expect(r.fileErrors).toEqual([{ file: 'tests/broken.rs', kind: 'collection', message: expect.stringContaining('cannot find function `mul`') }]);
    expect(r.complete).toBe(false);
  });

  it('says a test binary that aborts did not finish, naming the signal', () => {
    const r = parseLibtest(read(`libtest-${v}-crash.txt`), { files: ['tests/crash.rs'], output: '' });
    expect(r.complete).toBe(false);
    expect(r.errors).toEqual([expect.stringMatching(/tests\/crash\.rs did not finish \(signal: 6/)]);
    expect(r.fileErrors).toEqual([{ file: 'tests/crash.rs', kind: 'collection', message: expect.stringContaining('SIGABRT') }]);
    expect(r.tests.every((t) => t.outcome !== 'passed' || t.id === 'tests/crash.rs::before_abort')).toBe(true);
  });

  it('fails the test still running when the run was killed as a timeout, and keeps its finished neighbour', () => {
    const r = parseLibtest(read(`libtest-${v}-timeout.txt`), { files: ['tests/hang.rs'], output: '' });
    const ids = new Map(r.tests.map((t) => [t.id, t]));
    expect(ids.get('tests/hang.rs::quick')!.outcome).toBe('passed');
    expect(ids.get('tests/hang.rs::hangs')).toMatchObject({ outcome: 'failed', failureKind: 'timeout' });
    expect(r.complete).toBe(false);
  });

  it('reads a run filtered to one module', () => {
    const r = parseLibtest(read(`libtest-${v}-filtered.txt`), { files: ['src/lib.rs'], output: '' });
    expect(r.tests.map((t) => [t.id, t.outcome]).sort()).toEqual([
      ['src/lib.rs::tests::nested::returns_err', 'failed'],
      ['src/lib.rs::tests::nested::same', 'passed'],
    ]);
  });
});

describe('cargo test in a workspace', () => {
  it('prefixes ids with the package directory the command marked, and maps unit tests to the touched module file', () => {
    const content = [
      'swt-cargo-package: crates/core',
      '     Running unittests src/lib.rs (target/debug/deps/core-0123456789abcdef)',
      '',
      'running 2 tests',
      'test parse::tests::reads ... ok',
      'test tests::root ... FAILED',
      '',
      'test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s',
      'swt-cargo-package: .',
      '     Running tests/top.rs (target/debug/deps/top-0123456789abcdef)',
      '',
      'running 1 test',
      'test works ... ok',
      '',
      'test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s',
    ].join('\n');
    const r = parseLibtest(content, { files: ['crates/core/src/parse.rs', 'tests/top.rs'], output: '' });
    expect(r.tests).toEqual([
      { id: 'crates/core/src/lib.rs::parse::tests::reads', file: 'crates/core/src/parse.rs', outcome: 'passed' },
      { id: 'crates/core/src/lib.rs::tests::root', file: 'crates/core/src/lib.rs', outcome: 'failed', failureKind: 'assertion' },
      { id: 'tests/top.rs::works', file: 'tests/top.rs', outcome: 'passed' },
    ]);
  });

  it('reads old cargo\'s Running lines (no source path) by the binary name', () => {
    const r = parseLibtest('     Running target/debug/deps/glob_std-0123456789abcdef\n\nrunning 1 test\ntest main ... ok\n\ntest result: ok. 1 passed; 0 failed\n', { files: [], output: '' });
    expect(r.tests).toEqual([{ id: 'glob_std::main', outcome: 'passed' }]);
  });
});

describe('the Rust ecosystem', () => {
  it('is detected from Cargo.toml, a workspace member\'s too', () => {
    expect(rust.detect({ files: ['Cargo.toml', 'src/lib.rs'] })).toBeGreaterThan(0);
    expect(rust.detect({ files: ['crates/a/Cargo.toml'] })).toBeGreaterThan(0);
    expect(rust.detect({ files: ['package.json'] })).toBe(0);
    expect(detectEcosystem({ files: ['Cargo.toml', 'package.json', 'web/a.test.js'] }, ['tests/it.rs'])!.id).toBe('rust');
  });

  it('takes tests/*.rs and sources (their #[cfg(test)] modules) as test files, tests/common/mod.rs as support', () => {
    expect(ecosystemOfPath('src/lib.rs')!.id).toBe('rust');
    for (const f of ['tests/api.rs', 'tests/suite/main.rs', 'src/lib.rs', 'src/parse/mod.rs', 'crates/a/src/lib.rs', 'crates/a/tests/it.rs']) expect([f, isTestFile(f)]).toEqual([f, true]);
    for (const f of ['tests/common/mod.rs', 'build.rs', 'examples/demo.rs', 'benches/b.rs']) expect([f, isTestFile(f)]).toEqual([f, false]);
    expect(isTestPath('tests/common/mod.rs')).toBe(true);
  });

  it('runs the integration test binary, or the unit tests filtered to the touched modules, per package', () => {
    expect(integrationTarget('tests/glob-std.rs')).toBe('glob-std');
    expect(integrationTarget('tests/suite/main.rs')).toBe('suite');
    expect(integrationTarget('tests/common/mod.rs')).toBeUndefined();
    expect(modulePath('src/a/b/mod.rs')).toBe('a::b');
    expect(packageDirOf('crates/a/tests/x.rs')).toBe('crates/a');
    expect(cargoInvocations('cargo test {files}', ['tests/glob-std.rs'])).toEqual([{ dir: '', command: "cargo test --no-fail-fast --offline --test glob-std" }]);
    expect(cargoInvocations('cargo test {files}', ['src/lib.rs'])[0].command).toBe("cargo test --no-fail-fast --offline $([ -f src/lib.rs ] && echo --lib) --bins");
    expect(cargoInvocations('cargo test {files}', ['crates/a/src/parse.rs'])[0]).toEqual({
      dir: 'crates/a',
      command: "cargo test --no-fail-fast --offline --manifest-path crates/a/Cargo.toml $([ -f crates/a/src/lib.rs ] && echo --lib) --bins -- parse",
    });
    const cmd = cargoTest.command({ kind: 'cargo-test', template: 'cargo test {files}' }, ['tests/a.rs', 'crates/b/tests/c.rs'], '/swt-out', 'cargo-test.txt');
    expect(cmd).toContain("echo 'swt-cargo-package: .' >> /swt-out/cargo-test.txt");
    expect(cmd).toContain("echo 'swt-cargo-package: crates/b' >> /swt-out/cargo-test.txt");
    expect(cmd).toMatch(/exit \$rc$/);
    expect(recogniseRunner('cargo test --release {files}')).toBe('cargo-test');
    expect(recogniseRunner('cargo +nightly test')).toBe('cargo-test');
  });

  it('reruns chosen tests by their libtest names, exactly, in their own target', () => {
    const spec = { kind: 'cargo-test', template: 'cargo test {files}' };
    const cmd = cargoTest.commandForTests!(spec, 'tests/api.rs', ['tests/api.rs::parses', 'tests/api.rs::nested::rejects'], '/swt-out/c0-0', 'cargo-test.txt');
    expect(cmd).toContain("cargo test --no-fail-fast --offline --test api -- parses nested::rejects --exact >> /swt-out/c0-0/cargo-test.txt 2>&1");
    expect(libtestName('src/lib.rs::parse::tests::empty')).toBe('parse::tests::empty');
    expect(cargoTest.commandForTests!(spec, 'src/parse.rs', ['src/lib.rs::parse::tests::empty'], '/o', 'r.txt')).toContain('--bins -- parse::tests::empty --exact');
  });

  it('takes the image from rust-toolchain.toml, rust-toolchain or rust-version, never below the sparse index\'s 1.68', () => {
    expect(rustVersionOf({ 'rust-toolchain.toml': '[toolchain]\nchannel = "1.76.0"\n' })).toBe('1.76');
    expect(rustVersionOf({ 'rust-toolchain': '1.70.0\n' })).toBe('1.70');
    expect(rustVersionOf({ 'Cargo.toml': '[package]\nname = "x"\nrust-version = "1.74"\n' })).toBe('1.74');
    expect(rustVersionOf({ 'rust-toolchain.toml': '[toolchain]\nchannel = "stable"\n' })).toBeUndefined();
    expect(rust.environment({ files: ['Cargo.toml'], manifests: { 'Cargo.toml': 'rust-version = "1.74"' } }).image).toBe('rust:1.74');
    expect(rust.environment({ files: ['Cargo.toml'], manifests: { 'Cargo.toml': 'rust-version = "1.56"' } }).image).toBe('rust:1.68');
    // Offline first, from the crates the package cache seeded; crates.io for what is missing.
    expect(rust.environment({ files: ['Cargo.toml'] })).toEqual({ image: 'rust:1.85', install: expect.stringMatching(/^cargo fetch --offline >\/dev\/null 2>&1 \|\| cargo fetch \|\| .*swt: cargo fetch failed/) });
  });

  it('keeps cargo\'s registry in the package cache and warms the target directory without trusting a path crate\'s mtimes', () => {
    expect(rust.beforeInstall).toBe('[ -z "$SWT_PKG_CACHE" ] || [ ! -d "$SWT_PKG_CACHE/cargo" ] || { mkdir -p "${CARGO_HOME:-$HOME/.cargo}" && cp -a "$SWT_PKG_CACHE/cargo/." "${CARGO_HOME:-$HOME/.cargo}"/; }');
    expect(rust.warm).toContain('for d in registry/index registry/cache git/db;');
    expect(rust.warm).toContain('cargo test --no-run --offline;');
    // Cargo would take a run's overlaid file, older than this build, for unchanged: its path crates' dep-info is dated 1970.
    // Only the workspace's packages (from cargo metadata): a registry crate's dep-info lists its build script's generated files.
    expect(rust.warm).toContain(`for c in $n; do find . -path "*/.fingerprint/$c-${'[0-9a-f]'.repeat(16)}/dep-*" -type f -exec touch -c -d @0 {} +; done;`);
    expect(rust.warm).toContain(`cargo metadata --offline --no-deps --format-version 1 2>/dev/null | grep -o '"name":"[^"]*","version"'`);
    // No names: every package's, as before.
    expect(rust.warm).toMatch(/else find \. -path '\*\/\.fingerprint\/\*\/dep-\*' -type f -exec touch -c -d @0 \{\} \+; fi$/);
  });
});

describe('which Rust tests a test patch adds or changes', () => {
  it('names the functions whose lines the patch touches, in src/lib.rs\'s test module too', () => {
    const patch = readFileSync(join(FIX, '..', '..', '..', '..', 'fixtures', 'instances', 'instances.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { instance_id: string; test_patch: string })
      .find((i) => i.instance_id === 'rapidfuzz__strsim-rs-605c81c')!.test_patch;
    const changed = rust.changedTests!(patch);
    expect(changed({ id: 'src/lib.rs::tests::jaro_same_one_character', file: 'src/lib.rs' })).toBe(true);
    expect(changed({ id: 'src/lib.rs::tests::jaro_winkler_same_one_character', file: 'src/lib.rs' })).toBe(true);
    expect(changed({ id: 'src/lib.rs::tests::jaro_diff_short', file: 'src/lib.rs' })).toBe(false);
    expect(changed({ id: 'tests/lib.rs::jaro_same_one_character', file: 'tests/lib.rs' })).toBe(false);
  });

  it('counts every test of a file whose changed line no function shows', () => {
    const patch = ['--- a/tests/a.rs', '+++ b/tests/a.rs', '@@ -1,3 +1,3 @@', '-use demo::old;', '+use demo::new;', ' #[test]', ' fn other() {}'].join('\n');
    expect(rust.changedTests!(patch)({ id: 'tests/a.rs::other', file: 'tests/a.rs' })).toBe(true);
  });
});
