/**
 * The package registries each ecosystem's installs reach through the egress proxy, by ecosystem
 * id: the default allowlist is their union (src/sandbox/egressConfig.ts). A leaf module (no
 * imports) so the sandbox can read it without depending on the ecosystems.
 */
export const REGISTRIES = {
  node: ['registry.npmjs.org', 'registry.yarnpkg.com'],
  python: ['pypi.org', 'files.pythonhosted.org'],
  ruby: ['rubygems.org', 'index.rubygems.org'],
  php: ['repo.packagist.org', 'packagist.org'],
  // The Go module proxy and checksum database (modules and, for GOTOOLCHAIN=auto, toolchains).
  go: ['proxy.golang.org', 'sum.golang.org'],
} as const satisfies Record<string, readonly string[]>;
