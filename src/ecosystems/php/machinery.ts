/** PHP's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import { inAncestors, jsonPart, namedIn, partChanged } from '../machinery.js';
import type { PathInfo, TestMachinery } from '../types.js';

export const phpDependencyManifest = (p: PathInfo): boolean => p.base === 'composer.json' || p.base === 'composer.lock';

const PHPUNIT_CONFIG = /^(phpunit\.xml|phpunit\.xml\.dist|phpunit\.dist\.xml)$/;
const CONFIGS = ['phpunit.xml', 'phpunit.xml.dist', 'phpunit.dist.xml', 'composer.json'];

/** What of composer.json runs with every test: the autoloader's files and classes, the scripts, the config (vendor-dir). */
const COMPOSER_PART = jsonPart((c) => ({ autoload: c?.autoload, dev: c?.['autoload-dev'], scripts: c?.scripts, config: c?.config }));

export const phpMachinery: TestMachinery = {
  reads: (changed) => CONFIGS.flatMap((c) => inAncestors(changed, c)),
  changes(p, texts) {
    // PHPUnit and the autoloader live in vendor/: a head that commits there runs its own PHPUnit.
    if (PHPUNIT_CONFIG.test(p.base) || p.dirs[0] === 'vendor' || (p.base === 'bootstrap.php' && p.dirs.some((d) => /^tests?$/i.test(d)))) return true;
    if (p.base === 'composer.json') return partChanged(p.path, texts, COMPOSER_PART);
    // A bootstrap phpunit.xml names, a file composer's autoload loads.
    return p.base.endsWith('.php') && namedIn(p, Object.keys({ ...texts.base, ...texts.head }), texts);
  },
};
