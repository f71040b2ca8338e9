/** Ruby: Gemfile / .rspec / *.gemspec; RSpec and minitest. Pure. */
import { installNote } from '../command.js';
import { REGISTRIES } from '../registries.js';
import type { Ecosystem, PathInfo, RepoFacts } from '../types.js';
import { minitest, rspec } from './runners.js';
import { rubyDependencyManifest, rubyMachinery } from './machinery.js';

const SUPPORT_FILES = new Set(['spec_helper.rb', 'rails_helper.rb', 'test_helper.rb', 'minitest_helper.rb', 'helper.rb']);
const SUPPORT_DIRS = new Set(['support', 'fixtures', 'factories', 'shared_examples', 'shared_contexts']);

const underDir = (p: PathInfo, dir: string) => p.dirs.includes(dir);

/** `spec/**\/*_spec.rb` (RSpec), `test/**\/*_test.rb` and `test/**\/test_*.rb` (minitest). */
export function isRubyTestFile(p: PathInfo): boolean {
  if (!p.base.endsWith('.rb') || p.dirs.some((d) => SUPPORT_DIRS.has(d))) return false;
  if (p.base.endsWith('_spec.rb')) return underDir(p, 'spec');
  return underDir(p, 'test') && (p.base.endsWith('_test.rb') || p.base.startsWith('test_'));
}

function rootHas(facts: RepoFacts, re: RegExp): boolean {
  return facts.files.some((f) => !f.includes('/') && re.test(f));
}

/** RSpec when the repository has `.rspec` or spec files; minitest when it has test files only. */
export function usesRspec(facts: RepoFacts): boolean {
  if (rootHas(facts, /^\.rspec$/)) return true;
  const specs = facts.files.some((f) => /(^|\/)spec\/(.+\/)?[^/]+_spec\.rb$/.test(f));
  const tests = facts.files.some((f) => /(^|\/)test\/(.+\/)?([^/]+_test|test_[^/]+)\.rb$/.test(f));
  return specs || !tests;
}

/** `3.2.2`, `ruby-3.2.2`, `3.2` → `3.2`; from .ruby-version, else the Gemfile's `ruby "…"`. */
export function declaredRubyVersion(facts: RepoFacts): string | undefined {
  const file = facts.manifests?.['.ruby-version']?.trim().replace(/^ruby-/, '');
  const gemfile = /^\s*ruby\s+['"][~>=\s]*(\d+\.\d+)/m.exec(facts.manifests?.Gemfile ?? '')?.[1];
  const m = /^(\d+\.\d+)/.exec(file ?? '') ?? (gemfile ? [gemfile, gemfile] : null);
  return m?.[1];
}

export const DEFAULT_RUBY = '3.3';

/**
 * `bundle install` through the egress proxy. Air-gapped (rubygems.org does not answer): the
 * Gemfile resolved from the gems the image holds (`--local`), else the tests run with those gems
 * as they are; either way the install records it (INSTALL_NOTES) and succeeds.
 */
export const RUBY_INSTALL =
  'if [ -f Gemfile ]; then bundle install --jobs 4 --retry 1 || ' +
  `{ bundle install --local && ${installNote('bundle install failed (rubygems.org unreachable: air-gapped?); the Gemfile resolved from the gems the image holds')}; } || ` +
  `${installNote("bundle install failed (rubygems.org unreachable: air-gapped?) and the image lacks some of the Gemfile's gems; the tests run with the gems the image holds")}; fi`;

export const ruby: Ecosystem = {
  id: 'ruby',
  language: 'Ruby',
  manifests: ['.ruby-version', 'Gemfile'],
  dependencyManifest: rubyDependencyManifest,
  testMachinery: rubyMachinery,
  runnerNames: ['rspec', 'minitest'],
  ownsPath: (p) => p.base.endsWith('.rb'),
  detect(facts) {
    if (rootHas(facts, /^(Gemfile|\.rspec|[^/]+\.gemspec|\.ruby-version)$/)) return 20;
    return facts.files.some((f) => f.endsWith('.rb')) ? 3 : 0;
  },
  isTestFile: isRubyTestFile,
  isTestSupport: (p) => p.base.endsWith('.rb') && (SUPPORT_FILES.has(p.base) || ((underDir(p, 'spec') || underDir(p, 'test')) && p.dirs.some((d) => SUPPORT_DIRS.has(d)))),
  languageOf: () => 'ruby',
  environment: (facts) => ({ image: `ruby:${declaredRubyVersion(facts) ?? DEFAULT_RUBY}`, install: RUBY_INSTALL }),
  defaultRunner: (facts) => (usesRspec(facts) ? { kind: 'rspec', template: 'rspec {files}' } : { kind: 'minitest', template: 'ruby -Ilib -Itest {files}' }),
  runners: [rspec, minitest],
  // a constant, or a method of a real object, that does not exist (a method of nil is a bug, not this)
  ownErrorText: /uninitialized constant|undefined method [`'][^']+' for (?!nil\b)/,
  registries: REGISTRIES.ruby,
  coverage: { counter: null, reason: 'no line counter for Ruby yet (Coverage from the standard library is not wired in)' },
};
