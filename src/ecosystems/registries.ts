/**
 * The package registries each ecosystem's installs reach through the egress proxy, by ecosystem
 * id: the default allowlist is their union (src/sandbox/egress/egressConfig.ts). A leaf module (no
 * imports) so the sandbox can read it without depending on the ecosystems.
 */
export const REGISTRIES = {
  node: ['registry.npmjs.org', 'registry.yarnpkg.com'],
  python: ['pypi.org', 'files.pythonhosted.org'],
  ruby: ['rubygems.org', 'index.rubygems.org'],
  php: ['repo.packagist.org', 'packagist.org'],
  // The Go module proxy and checksum database (modules and, for GOTOOLCHAIN=auto, toolchains).
  go: ['proxy.golang.org', 'sum.golang.org'],
  rust: ['crates.io', 'index.crates.io', 'static.crates.io'],
  java: ['repo.maven.apache.org', 'repo1.maven.org', 'plugins.gradle.org'],
  // C and C++: the toolchain and test frameworks come with the image (Debian's packages); installs fetch nothing.
  c: [],
} as const satisfies Record<string, readonly string[]>;
