/**
 * TEST HELPER. A small real Rust crate (describe) needing itoa from crates.io: its files at base,
 * the fixed source, and test patches (one to its integration tests, one to the #[cfg(test)]
 * module in src/lib.rs). One definition for the Rust integration test and bench:harness.
 */

export const CARGO_TOML = `[package]
name = "describe"
version = "0.1.0"
edition = "2021"

[dependencies]
itoa = "1"
`;
export const LIB = (fixed: boolean) => `/// "3 items", "1 item".
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
export const OLD_TEST = 'use describe::describe;\n\n#[test]\nfn many() {\n    assert_eq!(describe(3), "3 items");\n}\n';
export const INTEGRATION_PATCH = [
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
export const UNIT_PATCH = [
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

/** The crate at base. */
export const BASE_FILES: Record<string, string> = { 'Cargo.toml': CARGO_TOML, 'src/lib.rs': LIB(false), 'tests/describe.rs': OLD_TEST, 'README.md': '# describe\n' };
