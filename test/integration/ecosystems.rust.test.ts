import { join } from 'node:path';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, expectSameJudgementFromCacheOnly, transitions, type ValidateJson, validateJson } from '../helpers/ecosystemRun.js';
import { BASE_FILES, INTEGRATION_PATCH, LIB, UNIT_PATCH } from '../helpers/rustDescribe.js';

// A small Rust crate with a real crates.io dependency (itoa), with no configuration at all:
// detection from Cargo.toml, the rust image (built offline from Debian trixie here), `cargo fetch`
// through the egress proxy, `cargo test --test describe` read from libtest's lines, in real
// containers. Then a test patch to the `#[cfg(test)]` module inside src/lib.rs.

afterAll(cleanUpEcosystemRuns);

async function validateCrate(testPatch: string): Promise<ValidateJson> {
  const repo = createGitRepo(BASE_FILES);
  const base = repo.sha;
  const head = repo.commit({ 'src/lib.rs': LIB(true) }, 'one item is singular');
  return await validateJson(repo.path, base, head, testPatch);
}

describe('Rust crates, no configuration (real containers, a crates.io dependency)', () => {
  it('swt validate runs the integration test binary and reports exactly the new test as F→P and S', async () => {
    const out = await validateCrate(INTEGRATION_PATCH);
    expect(transitions(out)).toEqual([
      ['tests/describe.rs::many', 'P2P'],
      ['tests/describe.rs::one', 'F2P'],
    ]);
    expect(out.success).toBe(true);
    // The new test confirmed in rounds inside the first runs: the built binary run again with its exact name, no second cargo.
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: ['tests/describe.rs::one'], inProcess: ['tests/describe.rs::one'] });
  }, 1_200_000);

  it('a test patch to the #[cfg(test)] module in src/lib.rs runs the crate\'s unit tests', async () => {
    const out = await validateCrate(UNIT_PATCH);
    expect(transitions(out)).toEqual([
      ['src/lib.rs::tests::one', 'F2P'],
      ['src/lib.rs::tests::zero', 'P2P'],
    ]);
    expect(out.success).toBe(true);
    // A unit test's full name (module path) from the binary's own list; the fix moved the test's
    // lines at head (3 lines added above it): head's rounds choose by where the patch landed there.
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: ['src/lib.rs::tests::one'], inProcess: ['src/lib.rs::tests::one'] });
  }, 1_200_000);

  it('keeps the crates in the repository\'s package cache: a cold build with no registry reachable installs from it offline', async () => {
    const repo = createGitRepo(BASE_FILES);
    const base = repo.sha;
    const head = repo.commit({ 'src/lib.rs': LIB(true) }, 'one item is singular');
    // No "cargo fetch failed": itoa came from crates.io, then from the package cache.
    await expectSameJudgementFromCacheOnly(repo.path, base, head, INTEGRATION_PATCH, [
      ['tests/describe.rs::many', 'P2P'],
      ['tests/describe.rs::one', 'F2P'],
    ]);
  }, 1_200_000);
});
