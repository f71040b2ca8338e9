/** PHP: composer.json / phpunit.xml(.dist); PHPUnit. Pure. */
import { INSTALL_NOTES, installNote } from '../command.js';
import { REGISTRIES } from '../registries.js';
import type { Ecosystem, PathInfo, RepoFacts } from '../types.js';
import { newestAllowedPhp } from './phpVersion.js';
import { phpunit } from './runners.js';
import { phpDependencyManifest, phpMachinery } from './machinery.js';

export const DEFAULT_PHP = '8.3';

/** `tests/**\/*Test.php` (and `test/`), PHPUnit's default suffix. */
export function isPhpTestFile(p: PathInfo): boolean {
  return p.base.endsWith('Test.php') && p.base !== 'Test.php' && p.dirs.some((d) => d === 'tests' || d === 'test' || d === 'Tests');
}

function composerJson(facts: RepoFacts): any {
  try {
    return JSON.parse(facts.manifests?.['composer.json'] ?? '');
  } catch {
    return undefined;
  }
}

/** The newest PHP the composer `php` constraint allows (`^7.2 || ^8.0` → 8.4). */
export function declaredPhpVersion(facts: RepoFacts): string | undefined {
  const c = composerJson(facts)?.require?.php;
  return typeof c === 'string' ? newestAllowedPhp(c) : undefined;
}

/**
 * `composer install` through the egress proxy. Air-gapped (Packagist does not answer):
 * `composer dump-autoload` still maps the project's own classes (PSR-4/classmap, no download),
 * its tests' too (`--dev`: with no install to infer it from, Composer leaves `autoload-dev` out),
 * and the image's PHPUnit stands in for vendor/bin/phpunit; the install records it (INSTALL_NOTES)
 * and succeeds.
 */
export const PHP_INSTALL =
  'if [ -f composer.json ]; then composer install --no-interaction --no-progress || ' +
  `{ ${installNote("composer install failed (Packagist unreachable: air-gapped?); composer dump-autoload for the project's own classes, with the PHP packages the image holds")}; composer dump-autoload --dev --no-interaction || composer dump-autoload --no-interaction || exit $?; }; fi; ` +
  '[ -e vendor/bin/phpunit ] || { [ -e vendor/bin/simple-phpunit ] && ln -s simple-phpunit vendor/bin/phpunit; } || ' +
  `{ p=$(command -v phpunit) && mkdir -p vendor/bin && ln -s "$p" vendor/bin/phpunit && ${installNote("vendor/bin/phpunit is the image's PHPUnit")} && phpunit --version | head -n 1 | sed 's/^/swt: /' | tee -a ${INSTALL_NOTES}; } || true`;

export const php: Ecosystem = {
  id: 'php',
  language: 'PHP',
  manifests: ['composer.json'],
  projectFile: 'composer.json',
  dependencyManifest: phpDependencyManifest,
  testMachinery: phpMachinery,
  runnerNames: ['phpunit'],
  ownsPath: (p) => p.base.endsWith('.php') || p.base.endsWith('.phpt'),
  detect(facts) {
    if (facts.files.some((f) => /^(composer\.json|phpunit\.xml(\.dist)?)$/.test(f))) return 20;
    return facts.files.some((f) => f.endsWith('.php')) ? 3 : 0;
  },
  isTestFile: isPhpTestFile,
  isTestSupport: (p) => p.base.endsWith('.php') && p.dirs.some((d) => d === 'tests' || d === 'test' || d === 'Tests') && !isPhpTestFile(p),
  languageOf: () => 'php',
  environment: (facts) => ({ image: `php:${declaredPhpVersion(facts) ?? DEFAULT_PHP}-cli`, install: PHP_INSTALL }),
  defaultRunner: () => ({ kind: 'phpunit', template: 'vendor/bin/phpunit {files}' }),
  runners: [phpunit],
  // a function, method or class that does not exist
  ownErrorText: /Call to undefined (function|method)|Class ["'][^"']+["'] not found/,
  registries: REGISTRIES.php,
  coverage: { counter: null, reason: 'no line counter for PHP yet (needs Xdebug or PCOV in the image)' },
};
