/**
 * The Ruby module: RSpec's JSON formatter (3.12 from Debian bookworm, 3.13 from trixie) and swt's
 * minitest reporter (minitest 5.17 and 5.25), read from real reports captured in containers
 * (test/unit/fixtures/ecosystems/ruby); detection, test files and commands.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathInfo } from '../../src/ecosystems/command.js';
import { minitestReporterOneLine, parseMinitestJsonl } from '../../src/ecosystems/ruby/minitest.js';
import { declaredRubyVersion, RUBY_INSTALL, ruby, usesRspec } from '../../src/ecosystems/ruby/index.js';
import { parseRspecJson } from '../../src/ecosystems/ruby/rspec.js';
import { minitest, rspec } from '../../src/ecosystems/ruby/runners.js';
import { parseBaseRef, TOOLCHAIN_RECIPES } from '../../src/sandbox/images/imageRecipes.js';

const FIX = join(process.cwd(), 'test', 'unit', 'fixtures', 'ecosystems', 'ruby');
const read = (name: string) => readFileSync(join(FIX, name), 'utf8');
const byId = <T extends { id: string }>(tests: T[]): Record<string, T> => Object.fromEntries(tests.map((t) => [t.id, t]));

describe.each(['3.12.0', '3.13.0'])('RSpec %s JSON formatter', (v) => {
  const ctx = (file: string) => ({ files: [file], file, root: '/proj', output: '' });

  it('per-test outcomes with ids `file > full description`: failures, errors, pending and skipped, duplicate names merged', () => {
    const r = parseRspecJson(read(`rspec-${v}-calc.json`), ctx('spec/calc_spec.rb'));
    const t = byId(r.tests);
    expect(Object.keys(t).sort()).toEqual(
      [
        'Calc.add adds two numbers',
        'Calc.add fails an expectation',
        'Calc.add raises an exception',
        'Calc.add is pending',
        'Calc.add is skipped',
        'Calc.add is disabled with xit',
        'Calc.add has a duplicate name',
        'Calc.add with "quotes" :: and > separators still has an id',
      ].map((d) => `spec/calc_spec.rb > ${d}`).sort(),
    );
    expect(t['spec/calc_spec.rb > Calc.add adds two numbers']).toMatchObject({ outcome: 'passed', file: 'spec/calc_spec.rb' });
    expect(t['spec/calc_spec.rb > Calc.add fails an expectation']).toMatchObject({ outcome: 'failed', failureKind: 'assertion' });
    expect(t['spec/calc_spec.rb > Calc.add fails an expectation'].message).toContain('expected: 5');
    expect(t['spec/calc_spec.rb > Calc.add raises an exception']).toMatchObject({ outcome: 'failed', failureKind: 'error', message: 'boom' });
    expect(t['spec/calc_spec.rb > Calc.add is pending']).toMatchObject({ outcome: 'skipped', message: 'not done yet' });
    expect(t['spec/calc_spec.rb > Calc.add is skipped']).toMatchObject({ outcome: 'skipped', message: 'skipped on purpose' });
    expect(t['spec/calc_spec.rb > Calc.add is disabled with xit'].outcome).toBe('skipped');
    // Two examples with one description: the failing one wins.
    expect(t['spec/calc_spec.rb > Calc.add has a duplicate name'].outcome).toBe('failed');
    expect(r).toMatchObject({ fileErrors: [], errors: [], complete: true });
  });

  it.each([
    ['syntax_error', /SyntaxError/],
    ['load_error', /cannot load such file -- a_gem_that_is_not_installed/],
    ['raises_at_load', /exploded at load time/],
  ])('a spec file that does not load (%s) is a file error of that file', (name, why) => {
    const file = `spec/${name}_spec.rb`;
    const r = parseRspecJson(read(`rspec-${v}-${name}.json`), ctx(file));
    expect(r.tests).toEqual([]);
    expect(r.fileErrors).toEqual([{ file, kind: 'collection', message: expect.stringMatching(why) }]);
    expect(r.errors).toEqual([]);
  });

  it('one broken file among several: RSpec 3.12 runs nothing at all (3.13 runs the rest), hence one file per run', () => {
    const r = parseRspecJson(read(`rspec-${v}-two-files-one-broken.json`), { files: ['spec/calc_spec.rb', 'spec/syntax_error_spec.rb'], root: '/proj', output: '' });
    expect(r.tests.length).toBe(v === '3.12.0' ? 0 : 8);
    expect(r.fileErrors.map((e) => e.file)).toEqual(['spec/syntax_error_spec.rb']);
    expect(rspec.runsPerFile?.({ kind: 'rspec', template: 'rspec {files}' })).toBe(true);
  });
});

it('RSpec: a real project report (janlelis/paint at base with the test patch) gives the two known failures', () => {
  const files = ['spec/paint_spec.rb', 'spec/paint_methods_spec.rb', 'spec/paint_mode_spec.rb', 'spec/paint_shortcuts_spec.rb'];
  const r = parseRspecJson(read('rspec-3.12.0-paint-ff020d7-base.json'), { files, root: '/repo', output: '' });
  expect(r.tests).toHaveLength(55);
  expect(r.tests.filter((t) => t.outcome === 'failed').map((t) => t.id).sort()).toEqual([
    'spec/paint_spec.rb > Paint.[] Frozen string support works with example string from #31',
    'spec/paint_spec.rb > Paint.[] Nesting & Substitution will work with arbitrary nesting and produce optimized escape sequences',
  ]);
  expect(r.tests.find((t) => t.id.includes('#31'))).toMatchObject({ failureKind: 'error', message: expect.stringContaining("can't modify frozen String") });
});

it('RSpec: not a report is an error, not an empty run', () => {
  expect(() => parseRspecJson('Run options: ...', { files: [], output: '' })).toThrow(/not an RSpec JSON report/);
  expect(() => parseRspecJson('{"messages":[]}', { files: [], output: '' })).toThrow(/no "examples"/);
});

describe.each(['5.17.0', '5.25.4'])('minitest %s through swt’s reporter', (v) => {
  const ctx = { files: ['test/calc_test.rb'], file: 'test/calc_test.rb', root: '/proj', output: '' };

  it('ids `file > Class#test_name`; failures, errors and skips; spec-style and duplicate groups', () => {
    const r = parseMinitestJsonl(read(`minitest-${v}-calc_test.jsonl`), ctx);
    const t = byId(r.tests);
    expect(Object.keys(t).sort()).toEqual(
      [
        'Calc#test_0001_adds in a spec',
        'Calc#test_0002_has a duplicate name',
        'Calc#test_0003_has a duplicate name',
        'CalcTest#test_adds',
        'CalcTest#test_fails_an_assertion',
        'CalcTest#test_is_skipped',
        'CalcTest#test_raises_an_exception',
        'Same group#test_0001_repeats',
      ].map((n) => `test/calc_test.rb > ${n}`).sort(),
    );
    expect(t['test/calc_test.rb > CalcTest#test_adds']).toMatchObject({ outcome: 'passed', file: 'test/calc_test.rb' });
    expect(t['test/calc_test.rb > CalcTest#test_fails_an_assertion']).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: 'Expected: 5\n  Actual: 4' });
    expect(t['test/calc_test.rb > CalcTest#test_raises_an_exception']).toMatchObject({ outcome: 'failed', failureKind: 'error' });
    expect(t['test/calc_test.rb > CalcTest#test_raises_an_exception'].message).toMatch(/^ArgumentError: boom/);
    expect(t['test/calc_test.rb > CalcTest#test_is_skipped']).toMatchObject({ outcome: 'skipped', message: 'skipped on purpose' });
    // Two `describe 'Same group'` blocks make two classes of one name: one id, the failure wins.
    expect(t['test/calc_test.rb > Same group#test_0001_repeats'].outcome).toBe('failed');
    expect(r.complete).toBe(true);
  });
});

it('minitest: with minitest-reporters (which replaces minitest’s reporters) swt’s reporter still reports; where that gem crashes, the report is incomplete', () => {
  const ctx = { files: ['test/test_with_reporters.rb'], file: 'test/test_with_reporters.rb', output: '' };
  const ok = parseMinitestJsonl(read('minitest-5.17.0-test_with_reporters.jsonl'), ctx);
  expect(ok.tests.map((t) => [t.id, t.outcome]).sort()).toEqual([
    ['test/test_with_reporters.rb > ReportersTest#test_fails', 'failed'],
    ['test/test_with_reporters.rb > ReportersTest#test_passes', 'passed'],
  ]);
  expect(ok.complete).toBe(true);
  // Debian trixie's minitest-reporters 1.0.19 raises NameError (MiniTest) on minitest 5.25: nothing after it is recorded.
  expect(read('minitest-5.25.4-test_with_reporters.out.txt')).toMatch(/uninitialized constant .*MiniTest \(NameError\)/);
  expect(parseMinitestJsonl(read('minitest-5.25.4-test_with_reporters.jsonl'), ctx)).toEqual({ tests: [], fileErrors: [], complete: false, errors: [] });
});

it('minitest: a file with a syntax or load error writes no report (the harness turns that into a file error from the output)', () => {
  for (const v of ['5.17.0', '5.25.4']) {
    expect(read(`minitest-${v}-syntax_error_test.out.txt`)).toMatch(/test\/syntax_error_test\.rb:\d+: syntax error/);
    expect(read(`minitest-${v}-load_error_test.out.txt`)).toMatch(/cannot load such file -- a_gem_that_is_not_installed \(LoadError\)/);
  }
  // A line cut short by a killed run is skipped; without the closing line the report is incomplete.
  const cut = parseMinitestJsonl('{"class":"A","name":"test_a","status":"passed","file":"test/a_test.rb"}\n{"class":"A","na', { files: ['test/a_test.rb'], file: 'test/a_test.rb', output: '' });
  expect(cut).toMatchObject({ tests: [{ id: 'test/a_test.rb > A#test_a', outcome: 'passed' }], complete: false });
});

describe('Ruby detection, conventions and commands', () => {
  const facts = (files: string[], manifests: Record<string, string> = {}) => ({ files, manifests });

  it('detects Gemfile, .rspec and *.gemspec at the root; bare .rb files weakly', () => {
    expect(ruby.detect(facts(['Gemfile', 'lib/a.rb']))).toBe(20);
    expect(ruby.detect(facts(['.rspec', 'spec/a_spec.rb']))).toBe(20);
    expect(ruby.detect(facts(['paint.gemspec']))).toBe(20);
    expect(ruby.detect(facts(['vendor/x/Gemfile']))).toBe(0);
    expect(ruby.detect(facts(['script.rb']))).toBe(3);
    expect(ruby.detect(facts(['package.json', 'index.js']))).toBe(0);
  });

  it('test files: spec/**/*_spec.rb, test/**/*_test.rb, test/**/test_*.rb; helpers and support are support', () => {
    const is = (p: string) => ruby.isTestFile(pathInfo(p));
    expect(['spec/paint_spec.rb', 'spec/models/user_spec.rb', 'test/calc_test.rb', 'test/test_tomlrb.rb', 'test/unit/test_x.rb'].filter(is)).toHaveLength(5);
    expect(['spec/spec_helper.rb', 'spec/support/matchers_spec.rb', 'lib/foo_spec.rb', 'test/minitest_helper.rb', 'lib/test_x.rb', 'test/fixtures/test_data.rb'].filter(is)).toEqual([]);
    const support = (p: string) => ruby.isTestSupport!(pathInfo(p));
    expect(['spec/spec_helper.rb', 'test/test_helper.rb', 'test/minitest_helper.rb', 'spec/support/shared.rb'].every(support)).toBe(true);
    expect(support('lib/paint.rb')).toBe(false);
  });

  it('the default runner: RSpec with .rspec or spec files, minitest with test files only', () => {
    expect(usesRspec(facts(['.rspec', 'lib/a.rb']))).toBe(true);
    expect(usesRspec(facts(['Gemfile', 'spec/a_spec.rb']))).toBe(true);
    expect(usesRspec(facts(['Gemfile', 'test/test_a.rb']))).toBe(false);
    expect(ruby.defaultRunner(facts(['Gemfile', 'test/a_test.rb']))).toEqual({ kind: 'minitest', template: 'ruby -Ilib -Itest {files}' });
    expect(ruby.defaultRunner(facts(['Gemfile', 'spec/a_spec.rb']))).toEqual({ kind: 'rspec', template: 'rspec {files}' });
  });

  it('the image by .ruby-version or the Gemfile’s ruby line; the install is bundle install with an air-gapped way out', () => {
    expect(declaredRubyVersion(facts([], { '.ruby-version': 'ruby-3.2.2\n' }))).toBe('3.2');
    expect(declaredRubyVersion(facts([], { Gemfile: "source 'https://rubygems.org'\nruby '~> 3.1.0'\n" }))).toBe('3.1');
    expect(ruby.environment(facts(['Gemfile']))).toEqual({ image: 'ruby:3.3', install: RUBY_INSTALL });
    expect(RUBY_INSTALL).toMatch(/bundle install --jobs 4 --retry 1.*bundle install --local.*air-gapped/);
    expect(ruby.registries).toEqual(expect.arrayContaining(['rubygems.org', 'index.rubygems.org']));
  });

  it('commands: rspec with the JSON formatter per file; minitest with swt’s reporter loaded through RUBYOPT', () => {
    expect(rspec.command({ kind: 'rspec', template: 'bundle exec rspec {files}' }, ['spec/a_spec.rb'], '/swt-out', 'rspec-0.json')).toBe(
      "bundle exec rspec --no-color --format progress --format json --out /swt-out/rspec-0.json spec/a_spec.rb",
    );
    expect(minitest.command({ kind: 'minitest', template: 'ruby -Ilib -Itest {files}' }, ['test/a_test.rb'], '/swt-out', 'minitest-0.jsonl')).toBe(
      `SWT_MINITEST_REPORT=/swt-out/minitest-0.jsonl RUBYOPT="-r/swt-out/swt_minitest_reporter.rb $RUBYOPT" ruby -Ilib -Itest test/a_test.rb`,
    );
    expect(minitest.prepare!({ kind: 'minitest', template: 'ruby {files}' }, '/swt-out')).toContain('/swt-out/swt_minitest_reporter.rb');
    expect(minitestReporterOneLine()).not.toMatch(/\n/);
    expect(minitest.recognise.test('ruby -Ilib -Itest {files}')).toBe(true);
    expect(minitest.recognise.test('bundle exec rake test TEST={files}')).toBe(true);
    expect(rspec.recognise.test('bundle exec rspec {files}')).toBe(true);
    expect(minitest.accepts!('bundle exec rspec -Itest {files}')).toBe(false);
  });

  it('reruns chosen tests: rspec -e with each full description, minitest -n with an anchored pattern (a rake task: the file)', () => {
    expect(rspec.commandForTests!({ kind: 'rspec', template: 'bundle exec rspec {files}' }, 'spec/a_spec.rb', ['spec/a_spec.rb > Cart totals (with tax)'], '/swt-out/c0-0', 'rspec-0.json')).toBe(
      "bundle exec rspec --no-color --format progress --format json --out /swt-out/c0-0/rspec-0.json -e 'Cart totals (with tax)' spec/a_spec.rb",
    );
    const spec = { kind: 'minitest', template: 'ruby -Ilib -Itest {files}' };
    expect(minitest.commandForTests!(spec, 'test/a_test.rb', ['test/a_test.rb > CartTest#test_0001_adds tax', 'test/a_test.rb > CartTest#test_empty?'], '/o', 'm.jsonl')).toBe(
      `SWT_MINITEST_REPORT=/o/m.jsonl RUBYOPT="-r/o/swt_minitest_reporter.rb $RUBYOPT" ruby -Ilib -Itest test/a_test.rb -n '/^(CartTest#test_0001_adds tax|CartTest#test_empty\\?)$/'`,
    );
    expect(minitest.commandForTests!({ kind: 'minitest', template: 'bundle exec rake test TEST={files}' }, 'test/a_test.rb', ['test/a_test.rb > A#test_x'], '/o', 'm.jsonl')).toBe(
      minitest.command({ kind: 'minitest', template: 'bundle exec rake test TEST={files}' }, ['test/a_test.rb'], '/o', 'm.jsonl'),
    );
  });
});

it('offline base images: ruby:<v> and php:<v>-cli have Debian recipes', () => {
  expect(parseBaseRef('ruby:3.1').recipe).toEqual({ kind: 'toolchain', image: 'ruby', version: '3.1' });
  expect(parseBaseRef('ruby:3.3.6-slim-bookworm').recipe).toEqual({ kind: 'toolchain', image: 'ruby', version: '3.3.6' });
  expect(parseBaseRef('php:8.2-cli').recipe).toEqual({ kind: 'toolchain', image: 'php', version: '8.2' });
  expect(TOOLCHAIN_RECIPES.ruby!.steps.join('\n')).toMatch(/ruby-rspec ruby-minitest ruby-minitest-reporters/);
  expect(TOOLCHAIN_RECIPES.php!.steps.join('\n')).toMatch(/phpunit composer/);
});
