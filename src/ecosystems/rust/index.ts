/** Rust: Cargo.toml (workspaces too), `cargo fetch`, `cargo test` read from libtest's per-test lines. Pure. */
import { shellQuote } from '../../util/shell.js';
import { fillTemplate, installNote, reportPath } from '../command.js';
import { REGISTRIES } from '../registries.js';
import { changedFunctions, isChangedFunction, type FunctionSyntax } from '../diffFunctions.js';
import type { Ecosystem, RepoFacts, RunnerDef } from '../types.js';
import { PACKAGE_MARKER, modulePath, packageDirOf, parseLibtest } from './libtest.js';
import { saveToCache, seedFromCache } from '../packageCacheShell.js';
import { rustDependencyManifest, rustMachinery } from './machinery.js';
import { cargoRounds, RUST_ROUNDS_FUNCTION, RUST_ROUNDS_ON, rustTemplateHasRounds } from './rounds.js';

/** Without a declared toolchain. */
export const DEFAULT_RUST = '1.85';
/** cargo reads crates.io's sparse index from 1.68 on; older cargo clones the index from GitHub, which no allowlist opens. */
export const MIN_RUST = '1.68';

function versionAtLeast(v: string, min: string): string {
  const [a, b] = v.split('.').map(Number);
  const [c, d] = min.split('.').map(Number);
  return a > c || (a === c && b >= d) ? v : min;
}

/**
 * The toolchain a project asks for, as major.minor: `rust-toolchain.toml`'s channel, the legacy
 * `rust-toolchain` file, else Cargo.toml's `rust-version` (package or workspace.package).
 * Undefined for `stable`, `nightly` or nothing declared.
 */
export function rustVersionOf(manifests: Readonly<Record<string, string>> | undefined): string | undefined {
  const m = manifests ?? {};
  const toolchain = m['rust-toolchain.toml'] ? /^\s*channel\s*=\s*["'](\d+)\.(\d+)/m.exec(m['rust-toolchain.toml']) : null;
  const legacy = m['rust-toolchain'] ? /^\s*(\d+)\.(\d+)/.exec(m['rust-toolchain']) : null;
  const declared = m['Cargo.toml'] ? /^\s*rust-version\s*=\s*["'](\d+)\.(\d+)/m.exec(m['Cargo.toml']) : null;
  const hit = toolchain ?? legacy ?? declared;
  return hit ? `${hit[1]}.${hit[2]}` : undefined;
}

function checkedWord(w: string): string {
  if (/[\u0000-\u001f\u007f]/.test(w) || w.startsWith('-')) throw new Error(`refusing cargo argument ${JSON.stringify(w)}`);
  return shellQuote(w);
}

/** The test target a file under tests/ belongs to: `tests/a.rs` and `tests/a/main.rs` → `a`; support files → undefined. */
export function integrationTarget(rel: string): string | undefined {
  const m = /^tests\/([^/]+)\.rs$/.exec(rel) ?? /^tests\/([^/]+)\/main\.rs$/.exec(rel);
  return m?.[1];
}

/**
 * One `cargo test` per package the files are in (`--manifest-path` for a workspace member):
 * `--test <name>` for integration test files, the unit tests (`--lib`, `--bins`) for sources,
 * filtered to the touched modules when no crate root is touched.
 */
export function cargoInvocations(template: string, files: readonly string[], names?: readonly string[]): { dir: string; command: string }[] {
  const byPkg = new Map<string, string[]>();
  for (const f of files) {
    const dir = packageDirOf(f);
    byPkg.set(dir, [...(byPkg.get(dir) ?? []), dir ? f.slice(dir.length + 1) : f]);
  }
  return [...byPkg].map(([dir, rels]) => {
    const words = ['--no-fail-fast', '--offline'];
    if (dir) words.push('--manifest-path', checkedWord(`${dir}/Cargo.toml`));
    const tests = [...new Set(rels.map(integrationTarget).filter((t): t is string => !!t))];
    for (const t of tests) words.push('--test', checkedWord(t));
    const sources = rels.filter((r) => r.startsWith('src/'));
    const filters: string[] = [];
    if (sources.length) {
      // --lib errors in a crate without one; --bins with none is a no-op.
      words.push(`$([ -f ${shellQuote(dir ? `${dir}/src/lib.rs` : 'src/lib.rs')} ] && echo --lib)`, '--bins');
      const mods = sources.map(modulePath);
      if (mods.every((m) => !!m)) filters.push(...new Set(mods as string[]));
    }
    // Chosen tests by their full libtest names, exactly (`--exact`): no other test shares the run.
    if (names?.length) words.push('--', ...names.map(checkedWord), '--exact');
    else if (filters.length) words.push('--', ...filters.map(checkedWord));
    return { dir, command: fillTemplate(template, words) };
  });
}

/** The libtest name of a cargo test id (`tests/api.rs::module::name`): what follows its target. */
export function libtestName(id: string): string {
  const i = id.indexOf('::');
  return i < 0 ? id : id.slice(i + 2);
}

function cargoCommand(template: string, files: readonly string[], out: string, report: string, names?: readonly string[], rounds = false): string {
  const r = reportPath(out, report);
  // Rounds (rounds.ts): cargo runs the binaries through their runner; their reports are written once cargo is done.
  const on = rounds && !names && rustTemplateHasRounds(template);
  const runs = cargoInvocations(template, files, names).map(
    // libtest's lines go to stdout, cargo's `Running` headers and compiler errors to stderr: one stream keeps their order.
    ({ dir, command }) => `echo ${shellQuote(`${PACKAGE_MARKER} ${dir || '.'}`)} >> ${r}; ${command} >> ${r} 2>&1 || rc=$?`,
  );
  return `${on ? `${RUST_ROUNDS_ON}; ` : ''}rc=0; : > ${r}; ${runs.join('; ')};${on ? ` ${RUST_ROUNDS_FUNCTION};` : ''} exit $rc`;
}

export const cargoTest: RunnerDef = {
  kind: 'cargo-test',
  recognise: /(^|[\s/;&|(])cargo\s+(\+\S+\s+)?test(\s|$|;|&|\|)/,
  reportFile: 'cargo-test.txt',
  exits: true,
  command: (spec, files, out, report, opts) => cargoCommand(spec.template, files, out, report, undefined, !!opts?.rounds),
  // `cargo test --test api -- name … --exact` (the unit tests' target for a source file).
  commandForTests: (spec, file, ids, out, report) => cargoCommand(spec.template, [file], out, report, [...new Set(ids.map(libtestName))]),
  parse: (content, ctx) => parseLibtest(content, ctx),
  roundsInProcess: cargoRounds,
};

/** Rust test functions in a diff: `fn name(`; blank lines, comments and attributes (`#[test]`) belong to none. */
export const RUST_FUNCTIONS: FunctionSyntax = {
  file: (p) => p.endsWith('.rs'),
  declaration: /^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe)\s+)*fn\s+([A-Za-z_]\w*)/,
  neutral: /^\s*(\/\/.*|#!?\[.*\]|)$/,
};

/** Cargo's home: the image's CARGO_HOME (the official images'), else the sandbox user's. */
const CARGO_HOME = '"${CARGO_HOME:-$HOME/.cargo}"';
/** What of cargo's home the package cache keeps: the index, the downloaded crates, git dependencies' clones (sources unpack from these). */
const CARGO_KEPT = 'registry/index registry/cache git/db';

/** A fingerprint directory's hash: `<package>-<16 hex digits>`. */
const HASH16 = '[0-9a-f]'.repeat(16);

/**
 * The workspace's own packages' dep-info dated 1970 (their names from `cargo metadata`: a package
 * object opens with its name, then its version); without names, every package's. Not the registry
 * crates': their dep-info lists files their build scripts generate (serde's), which a 1970 date
 * would have every run recompile.
 */
const STALE_PATH_CRATES =
  `n=$(cargo metadata --offline --no-deps --format-version 1 2>/dev/null | grep -o '"name":"[^"]*","version"' | cut -d'"' -f4); ` +
  `if [ -n "$n" ]; then for c in $n; do find . -path "*/.fingerprint/$c-${HASH16}/dep-*" -type f -exec touch -c -d @0 {} +; done; ` +
  "else find . -path '*/.fingerprint/*/dep-*' -type f -exec touch -c -d @0 {} +; fi";

/**
 * After the install: what it fetched goes to the package cache (files already there are not
 * copied again); then the dependencies and test binaries compile into the image's target
 * directory, so a run compiles only the crate's own code. Cargo tells a path crate's changes by
 * mtime, and a run's overlaid files may look older than this build: the path crates' dep-info
 * files are dated 1970, so every run rebuilds the crate's own code and never reuses a stale
 * build of it.
 */
const RUST_WARM =
  `[ -z "$SWT_PKG_CACHE" ] || (cd ${CARGO_HOME} && for d in ${CARGO_KEPT}; do ${saveToCache('"$d"', 'cargo/$d')}; done); ` +
  `cargo test --no-run --offline; ${STALE_PATH_CRATES}`;

export const rust: Ecosystem = {
  id: 'rust',
  language: 'Rust',
  manifests: ['Cargo.toml', 'rust-toolchain.toml', 'rust-toolchain'],
  projectFile: 'Cargo.toml',
  dependencyManifest: rustDependencyManifest,
  testMachinery: rustMachinery,
  runnerNames: ['cargo test'],
  ownsPath: (p) => p.base.endsWith('.rs'),
  detect: (facts: RepoFacts) => (facts.files.includes('Cargo.toml') ? 20 : facts.files.some((f) => f.endsWith('/Cargo.toml')) ? 8 : 0),
  // Integration tests (`tests/*.rs`, `tests/*/main.rs`), and sources: their `#[cfg(test)]` modules are unit tests, so a patch to src/lib.rs can be a test patch.
  isTestFile(p) {
    const i = p.dirs.lastIndexOf('tests');
    if (i >= 0 && (i === p.dirs.length - 1 || (i === p.dirs.length - 2 && p.base === 'main.rs'))) return true;
    return p.dirs.includes('src') && !p.dirs.includes('tests') && p.base !== 'build.rs';
  },
  isTestSupport: (p) => p.dirs.includes('tests') && p.base.endsWith('.rs'),
  languageOf: () => 'rust',
  environment(facts) {
    const version = versionAtLeast(rustVersionOf(facts.manifests) ?? DEFAULT_RUST, MIN_RUST);
    return {
      image: `rust:${version}`,
      // Offline first, from the crates the package cache seeded (beforeInstall); what is missing comes from crates.io.
      // Air-gapped (no registry answers), the tests still build from the crates already in the image's cargo home; say so instead of failing.
      install: `cargo fetch --offline >/dev/null 2>&1 || cargo fetch || { ${installNote('cargo fetch failed (no registry answered?): the tests build offline, with only the crates already in the image')}; cargo generate-lockfile --offline >/dev/null 2>&1; true; }`,
    };
  },
  // The package cache's crates into cargo's home, where the install (named or not) and the runs find them.
  beforeInstall: seedFromCache('cargo', CARGO_HOME),
  warm: RUST_WARM,
  // What a build keeps under /testbed (Cargo.lock, the warm-up's target/ with the compiled dependencies) is saved and extracted in place of the fetch;
  // the crates themselves come back from the package cache (beforeInstall).
  savesInstall: true,
  defaultRunner: () => ({ kind: 'cargo-test', template: 'cargo test {files}' }),
  runners: [cargoTest],
  changedTests(testPatch) {
    const changed = changedFunctions(testPatch, RUST_FUNCTIONS);
    return (t) => isChangedFunction(t, changed, (id) => id.split('::').pop() ?? id);
  },
  // rustc: a function, value, import or method that does not exist
  ownErrorText: /error\[E0(425|432|433|599)\]: (cannot find|unresolved import|failed to resolve|no (method|function|associated item) named)/,
  registries: REGISTRIES.rust,
  coverage: { counter: null, reason: 'Rust line counts need an instrumented build (-C instrument-coverage), which is not run' },
};
