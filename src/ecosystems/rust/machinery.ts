/** Rust's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import { partChanged, tomlPart } from '../machinery.js';
import type { PathInfo, TestMachinery } from '../types.js';

const MANIFESTS = new Set(['Cargo.toml', 'Cargo.lock', 'rust-toolchain', 'rust-toolchain.toml']);

export const rustDependencyManifest = (p: PathInfo): boolean => MANIFESTS.has(p.base);

/** What of a Cargo.toml decides how tests build and run: the build script, the targets' harness, the test profile. */
const CARGO_PART = tomlPart(['package.build', 'lib', 'test', 'bench', 'profile', 'workspace.package.build']);

export const rustMachinery: TestMachinery = {
  reads: (changed) => changed.filter((f) => f.split('/').pop() === 'Cargo.toml'),
  changes(p, texts) {
    // A build script runs before the tests compile (it can write the code they include); cargo's config sets rustflags, runners, env.
    if (p.base === 'build.rs' || p.dirs.at(-1) === '.cargo') return true;
    return p.base === 'Cargo.toml' && partChanged(p.path, texts, CARGO_PART);
  },
};
