/** Ruby's dependency manifests and test machinery (see Ecosystem.dependencyManifest, testMachinery). Pure. */
import { inAncestors } from '../machinery.js';
import type { MachineryTexts, PathInfo, TestMachinery } from '../types.js';

export const rubyDependencyManifest = (p: PathInfo): boolean => p.base === 'Gemfile' || p.base === 'Gemfile.lock' || p.base.endsWith('.gemspec');

/** Loaded before every spec or test: the helpers, what `.rspec` requires, the Rakefile (`rake test`). */
const HELPERS = new Set(['spec_helper.rb', 'rails_helper.rb', 'test_helper.rb', 'minitest_helper.rb', '.rspec', '.rspec-local', 'Rakefile']);

/** The files a `.rspec` beside or above `p` names with `--require`/`-r` (resolved as rspec does: from spec/ and lib/). */
function requiredByRspec(p: PathInfo, texts: MachineryTexts): boolean {
  const stem = p.base.replace(/\.rb$/, '');
  const dir = p.dirs.join('/');
  for (const t of [...Object.entries(texts.base), ...Object.entries(texts.head)]) {
    if (!/(^|\/)\.rspec(-local)?$/.test(t[0])) continue;
    const root = t[0].replace(/\/?\.rspec(-local)?$/, '');
    for (const m of t[1].matchAll(/(?:--require|-r)[ =]+(\S+)/g)) {
      const name = m[1]!.replace(/\.rb$/, '');
      const at = (sub: string) => [root, sub].filter(Boolean).join('/');
      if ([at(''), at('spec'), at('lib')].some((d) => `${d ? `${d}/` : ''}${name}` === `${dir ? `${dir}/` : ''}${stem}`)) return true;
    }
  }
  return false;
}

export const rubyMachinery: TestMachinery = {
  reads: (changed) => [...inAncestors(changed, '.rspec'), ...inAncestors(changed, '.rspec-local')],
  changes(p, texts) {
    if (HELPERS.has(p.base)) return true;
    if ((p.dirs.includes('spec') || p.dirs.includes('test')) && p.dirs.includes('support') && p.base.endsWith('.rb')) return true;
    return p.base.endsWith('.rb') && requiredByRspec(p, texts);
  },
};
