/** PHP's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import { inAncestors, jsonPart, partChanged } from '../machinery.js';
import type { MachineryTexts, PathInfo, TestMachinery } from '../types.js';

export const phpDependencyManifest = (p: PathInfo): boolean => p.base === 'composer.json' || p.base === 'composer.lock';

const PHPUNIT_CONFIG = /^(phpunit\.xml|phpunit\.xml\.dist|phpunit\.dist\.xml)$/;
const CONFIGS = ['phpunit.xml', 'phpunit.xml.dist', 'phpunit.dist.xml', 'composer.json'];

/** What of composer.json runs with every test: the autoloader's files and classes, the scripts, the config (vendor-dir). */
const COMPOSER_PART = jsonPart((c) => ({ autoload: c?.autoload, dev: c?.['autoload-dev'], scripts: c?.scripts, config: c?.config }));

/** The bootstrap files PHPUnit configs name (`bootstrap="tests/boot.php"`), relative to the config's directory; only that attribute, so source a config lists for coverage is not counted. */
function bootstrapOf(p: PathInfo, texts: MachineryTexts): boolean {
  for (const side of [texts.base, texts.head]) {
    for (const [config, text] of Object.entries(side)) {
      if (!PHPUNIT_CONFIG.test(config.split('/').pop()!)) continue;
      const dir = config.includes('/') ? config.slice(0, config.lastIndexOf('/') + 1) : '';
      for (const m of text.matchAll(/\bbootstrap\s*=\s*["']([^"']+)["']/g)) if (`${dir}${m[1]!.replace(/^\.\//, '')}` === p.path) return true;
    }
  }
  return false;
}

export const phpMachinery: TestMachinery = {
  reads: (changed) => CONFIGS.flatMap((c) => inAncestors(changed, c)),
  changes(p, texts) {
    // PHPUnit and the autoloader live in vendor/: a head that commits there runs its own PHPUnit.
    if (PHPUNIT_CONFIG.test(p.base) || p.dirs[0] === 'vendor' || (p.base === 'bootstrap.php' && p.dirs.some((d) => /^tests?$/i.test(d)))) return true;
    if (p.base === 'composer.json') return partChanged(p.path, texts, COMPOSER_PART);
    return p.base.endsWith('.php') && bootstrapOf(p, texts);
  },
};
