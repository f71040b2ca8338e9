import { join } from 'node:path';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, type ValidateJson, validateJson } from '../helpers/ecosystemRun.js';

// A small Rust crate with a real crates.io dependency (itoa), with no configuration at all:
// detection from Cargo.toml, the rust image (built offline from Debian trixie here), `cargo fetch`
// through the egress proxy, `cargo test --test describe` read from libtest's lines, in real
// containers. Then a test patch to the `#[cfg(test)]` module inside src/lib.rs.

const CARGO_TOML = `[package]
name = "describe"
version = "0.1.0"
edition = "2021"

[dependencies]
itoa = "1"
`;
const LIB = (fixed: boolean) => `/// "3 items", "1 item".
pub fn describe(n: u64) -> String {
    let mut buf = itoa::Buffer::new();
    let count = buf.format(n);
    ${fixed ? 'if n == 1 {\n        return format!("{} item", count);\n    }\n    ' : ''}format!("{} items", count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero() {
        assert_eq!(describe(0), "0 items");
    }
}
`;
const OLD_TEST = 'use describe::describe;\n\n#[test]\nfn many() {\n    assert_eq!(describe(3), "3 items");\n}\n';
const INTEGRATION_PATCH = [
  'diff --git a/tests/describe.rs b/tests/describe.rs',
  '--- a/tests/describe.rs',
  '+++ b/tests/describe.rs',
  '@@ -4,3 +4,8 @@ use describe::describe;',
  ' fn many() {',
  '     assert_eq!(describe(3), "3 items");',
  ' }',
  '+',
  '+#[test]',
  '+fn one() {',
  '+    assert_eq!(describe(1), "1 item");',
  '+}',
  '',
].join('\n');
const UNIT_PATCH = [
  'diff --git a/src/lib.rs b/src/lib.rs',
  '--- a/src/lib.rs',
  '+++ b/src/lib.rs',
  '@@ -13,4 +13,9 @@ mod tests {',
  '     fn zero() {',
  '         assert_eq!(describe(0), "0 items");',
  '     }',
  '+',
  '+    #[test]',
  '+    fn one() {',
  '+        assert_eq!(describe(1), "1 item");',
  '+    }',
  ' }',
  '',
].join('\n');

afterAll(cleanUpEcosystemRuns);

async function validateCrate(testPatch: string): Promise<ValidateJson> {
  const repo = createGitRepo({ 'Cargo.toml': CARGO_TOML, 'src/lib.rs': LIB(false), 'tests/describe.rs': OLD_TEST, 'README.md': '# describe\n' });
  const base = repo.sha;
  const head = repo.commit({ 'src/lib.rs': LIB(true) }, 'one item is singular');
  return await validateJson(repo.path, base, head, testPatch);
}

describe('Rust crates, no configuration (real containers, a crates.io dependency)', () => {
  it('swt validate runs the integration test binary and reports exactly the new test as F→P and S', async () => {
    const out = await validateCrate(INTEGRATION_PATCH);
    expect(out.tests.map((t) => [t.id, t.transition])).toEqual([
      ['tests/describe.rs::many', 'P2P'],
      ['tests/describe.rs::one', 'F2P'],
    ]);
    expect(out.success).toBe(true);
  }, 1_200_000);

  it('a test patch to the #[cfg(test)] module in src/lib.rs runs the crate\'s unit tests', async () => {
    const out = await validateCrate(UNIT_PATCH);
    expect(out.tests.map((t) => [t.id, t.transition])).toEqual([
      ['src/lib.rs::tests::one', 'F2P'],
      ['src/lib.rs::tests::zero', 'P2P'],
    ]);
    expect(out.success).toBe(true);
  }, 1_200_000);
});
