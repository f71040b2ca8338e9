/**
 * Confirmation of the tests that move, on small real projects whose tests share module state (a
 * real class of flaky test: order dependent). The new test of the gold fix passes at head and, in
 * doing so, poisons the test after it in the same file; run alone, that test passes. Repeatable:
 * the runner keeps file order, so the same test is poisoned in every run with its file.
 * A wrong fix breaks another new test for real, in every run: still caught. (The existing test it
 * also breaks is pre-existing: it breaks without the test patch too, so it judges the fix, not the tests.)
 */
import { validate, type ValidationResult } from '../../src/pipeline/validate.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { renderText } from '../../src/harness/render.js';
import { containersOfOursOnceRetired } from '../helpers/docker.js';
import { pomFor } from '../helpers/mavenGreeter.js';
import { cleanupGitRepos, createGitRepo, type TempRepo } from '../helpers/gitRepo.js';

/**
 * Validations in a row per runner: 1 in the default suite (each is a gold and a wrong fix with
 * confirmation; on a cold machine this file took 47 minutes of CI's 90 with 3, 18 warm with 2);
 * SWT_FLAKY_ROUNDS=10 for the ten. With one, half the runners see the poisoned test
 * labelled known flaky and half not, so both paths run, and the wrong fix runs on the other half
 * (its P2F is caught by the pipeline's reruns, which every runner's gold check already drives).
 */
const ROUNDS = Number(process.env.SWT_FLAKY_ROUNDS ?? 1);

interface Project {
  repo: TempRepo;
  base: string;
  gold: string;
  wrong: string;
  testPatch: string;
  /** Detected (with the ecosystem's own install and runner) when absent. */
  image?: string;
  install?: string;
  testCmd?: string;
}

/** base, a gold fix and a wrong fix on branches from it, and the test patch as a diff against base. */
function project(files: Record<string, string>, gold: Record<string, string>, wrong: Record<string, string>, tests: Record<string, string>, run: Pick<Project, 'image' | 'install' | 'testCmd'>): Project {
  const repo = createGitRepo(files);
  const base = repo.sha;
  const goldSha = repo.commit(gold, 'fix');
  repo.git('checkout', '-q', base);
  const wrongSha = repo.commit(wrong, 'wrong fix');
  repo.git('checkout', '-q', base);
  const withTests = repo.commit(tests, 'tests');
  const testPatch = repo.git('diff', base, withTests);
  return { repo, base, gold: goldSha, wrong: wrongSha, testPatch, ...run };
}

// Python: page slugs, numbered when taken. The registry of taken slugs is module state.
const SLUGS = (pattern: string) => `"""URL slugs for page titles, unique within a site."""
import re

_taken = {}


def slugify(title):
    """Lower-case words joined by single hyphens."""
    return re.sub(r"${pattern}", "-", title.lower()).strip("-")


def unique_slug(title):
    """The title's slug, numbered from the second page that has it (notes, notes-2, ...)."""
    slug = slugify(title)
    _taken[slug] = _taken.get(slug, 0) + 1
    n = _taken[slug]
    return slug if n == 1 else f"{slug}-{n}"
`;
const SLUG_TESTS = (added: string) => `from slugs import slugify, unique_slug


def test_slugify_lowercases_words():
    assert slugify("Release Notes") == "release-notes"


def test_slugify_keeps_digits():
    assert slugify("Python 3 notes") == "python-3-notes"


def test_unique_slug_numbers_repeats():
    assert unique_slug("FAQ") == "faq"
    assert unique_slug("FAQ") == "faq-2"

${added}
def test_unique_slug_first_page_is_plain():
    assert unique_slug("Getting Started") == "getting-started"
`;
const NEW_PY = `
def test_slugify_keeps_numbers_in_titles():
    assert slugify("Top 10 Tips") == "top-10-tips"


def test_unique_slug_collapses_spaces():
    assert unique_slug("Getting   Started") == "getting-started"

`;

// JavaScript (mocha, jest): byte sizes, with a memo whose entries are module state.
const BYTES = (cond: string) => `'use strict';
const UNITS = ['B', 'KiB', 'MiB', 'GiB'];
const memo = new Map();

/** A byte count in binary units, one decimal when not whole. */
function formatBytes(n) {
  let i = 0;
  while (${cond} && i < UNITS.length - 1) {
    n /= 1024;
    i++;
  }
  return \`\${Number.isInteger(n) ? n : n.toFixed(1)} \${UNITS[i]}\`;
}

function formatBytesCached(n) {
  if (!memo.has(n)) memo.set(n, formatBytes(n));
  return memo.get(n);
}

const cachedCount = () => memo.size;

module.exports = { formatBytes, formatBytesCached, cachedCount };
`;
const BYTES_TESTS = (added: string) => `const assert = require('node:assert/strict');
const { formatBytes, formatBytesCached, cachedCount } = require('../src/bytes');

it('formats small sizes in bytes', () => {
  assert.equal(formatBytes(512), '512 B');
});

it('keeps 1000 bytes in bytes', () => {
  assert.equal(formatBytes(1000), '1000 B');
});

it('formats fractions of a mebibyte', () => {
  assert.equal(formatBytes(1536 * 1024), '1.5 MiB');
});
${added}
it('the cache starts empty and holds each size once', () => {
  formatBytesCached(10);
  formatBytesCached(10);
  assert.equal(cachedCount(), 1);
});
`;
const NEW_JS = `
it('keeps sizes under a kibibyte in bytes', () => {
  assert.equal(formatBytes(1023), '1023 B');
});

it('1024 bytes is 1 KiB, also from the cache', () => {
  assert.equal(formatBytes(1024), '1 KiB');
  assert.equal(formatBytesCached(1024), '1 KiB');
});
`;
// Go: the same slugs, the registry a package-level map (go test runs a file's tests in source order).
const GO_SLUGS = (pattern: string) => `// Package slugs makes URL slugs for page titles, unique within a site.
package slugs

import (
\t"regexp"
\t"strconv"
\t"strings"
)

var taken = map[string]int{}

var sep = regexp.MustCompile(\`${pattern}\`)

// Slugify joins a title's lower-case words with single hyphens.
func Slugify(title string) string {
\treturn strings.Trim(sep.ReplaceAllString(strings.ToLower(title), "-"), "-")
}

// UniqueSlug numbers a slug from the second page that has it (notes, notes-2, ...).
func UniqueSlug(title string) string {
\ts := Slugify(title)
\ttaken[s]++
\tif n := taken[s]; n > 1 {
\t\treturn s + "-" + strconv.Itoa(n)
\t}
\treturn s
}
`;
const GO_SLUG_TESTS = (added: string) => `package slugs

import "testing"

func expect(t *testing.T, got, want string) {
\tt.Helper()
\tif got != want {
\t\tt.Fatalf("got %q, want %q", got, want)
\t}
}

func TestSlugifyLowercasesWords(t *testing.T) {
\texpect(t, Slugify("Release Notes"), "release-notes")
}

func TestSlugifyKeepsDigits(t *testing.T) {
\texpect(t, Slugify("Python 3 notes"), "python-3-notes")
}

func TestUniqueSlugNumbersRepeats(t *testing.T) {
\texpect(t, UniqueSlug("FAQ"), "faq")
\texpect(t, UniqueSlug("FAQ"), "faq-2")
}
${added}
func TestUniqueSlugFirstPageIsPlain(t *testing.T) {
\texpect(t, UniqueSlug("Getting Started"), "getting-started")
}
`;
const NEW_GO = `
func TestSlugifyKeepsNumbersInTitles(t *testing.T) {
\texpect(t, Slugify("Top 10 Tips"), "top-10-tips")
}

func TestUniqueSlugCollapsesSpaces(t *testing.T) {
\texpect(t, UniqueSlug("Getting   Started"), "getting-started")
}
`;

// Rust: the same slugs, the registry a static Mutex; the tests run one at a time (the project's
// own --test-threads=1), in name order as libtest sorts them.
const RUST_SLUGS = (collapse: boolean, digits: boolean) => `//! URL slugs for page titles, unique within a site.
use std::collections::BTreeMap;
use std::sync::Mutex;

static TAKEN: Mutex<BTreeMap<String, u32>> = Mutex::new(BTreeMap::new());

/// Lower-case words joined by hyphens.
pub fn slugify(title: &str) -> String {
    let mut out = String::new();
    for c in title.to_lowercase().chars() {
        if c.is_ascii_lowercase() || (${digits} && c.is_ascii_digit()) {
            out.push(c);
        } else if !(${collapse} && out.ends_with('-')) {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The title's slug, numbered from the second page that has it (notes, notes-2, ...).
pub fn unique_slug(title: &str) -> String {
    let s = slugify(title);
    let mut taken = TAKEN.lock().unwrap();
    let n = taken.entry(s.clone()).or_insert(0);
    *n += 1;
    if *n > 1 { format!("{}-{}", s, n) } else { s }
}
`;
const RUST_SLUG_TESTS = (added: string) => `use slugs::{slugify, unique_slug};

#[test]
fn slugify_keeps_digits() {
    assert_eq!(slugify("Python 3 notes"), "python-3-notes");
}

#[test]
fn slugify_lowercases_words() {
    assert_eq!(slugify("Release Notes"), "release-notes");
}
${added}
#[test]
fn unique_slug_first_page_is_plain() {
    assert_eq!(unique_slug("Getting Started"), "getting-started");
}
`;
const NEW_RUST = `
#[test]
fn slugify_keeps_numbers_in_titles() {
    assert_eq!(slugify("Top 10 Tips"), "top-10-tips");
}

#[test]
fn unique_slug_collapses_spaces() {
    assert_eq!(unique_slug("Getting   Started"), "getting-started");
}
`;

// Java (Maven, JUnit 4): the same slugs, the registry a static map; the tests run in name order.
const JAVA_SLUGS = (pattern: string) => `package com.example;

import java.util.HashMap;
import java.util.Map;

public final class Slugs {
    private static final Map<String, Integer> TAKEN = new HashMap<>();

    public static String slugify(String title) {
        return title.toLowerCase().replaceAll("${pattern}", "-").replaceAll("^-+|-+$", "");
    }

    public static String uniqueSlug(String title) {
        String s = slugify(title);
        int n = TAKEN.merge(s, 1, Integer::sum);
        return n == 1 ? s : s + "-" + n;
    }
}
`;
const JAVA_SLUG_TESTS = (added: string) => `package com.example;

import static org.junit.Assert.assertEquals;

import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runners.MethodSorters;

@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class SlugsTest {
    @Test
    public void slugifyLowercasesWords() {
        assertEquals("release-notes", Slugs.slugify("Release Notes"));
    }

    @Test
    public void slugifyKeepsDigits() {
        assertEquals("python-3-notes", Slugs.slugify("Python 3 notes"));
    }

    @Test
    public void uniqueSlugNumbersRepeats() {
        assertEquals("faq", Slugs.uniqueSlug("FAQ"));
        assertEquals("faq-2", Slugs.uniqueSlug("FAQ"));
    }
${added}
    @Test
    public void uniqueSlugFirstPageIsPlain() {
        assertEquals("getting-started", Slugs.uniqueSlug("Getting Started"));
    }
}
`;
const NEW_JAVA = `
    @Test
    public void slugifyKeepsNumbersInTitles() {
        assertEquals("top-10-tips", Slugs.slugify("Top 10 Tips"));
    }

    @Test
    public void uniqueSlugCollapsesSpaces() {
        assertEquals("getting-started", Slugs.uniqueSlug("Getting   Started"));
    }
`;
const JAVA_POM = pomFor('slugs');

// PHP (PHPUnit 9, Debian's): the same slugs, the registry a static property; PHPUnit runs the
// methods in the order they are declared. Composer's autoloader written offline.
const PHP_SLUGS = (pattern: string) => `<?php
namespace Slugs;

final class Slugs
{
    private static array $taken = [];

    public static function slugify(string $title): string
    {
        return trim(preg_replace('/${pattern}/', '-', strtolower($title)), '-');
    }

    public static function uniqueSlug(string $title): string
    {
        $s = self::slugify($title);
        self::$taken[$s] = (self::$taken[$s] ?? 0) + 1;
        return self::$taken[$s] === 1 ? $s : $s . '-' . self::$taken[$s];
    }
}
`;
const PHP_SLUG_TESTS = (added: string) => `<?php
namespace Slugs\\Tests;

use PHPUnit\\Framework\\TestCase;
use Slugs\\Slugs;

final class SlugsTest extends TestCase
{
    public function testSlugifyLowercasesWords(): void
    {
        $this->assertSame('release-notes', Slugs::slugify('Release Notes'));
    }

    public function testSlugifyKeepsDigits(): void
    {
        $this->assertSame('python-3-notes', Slugs::slugify('Python 3 notes'));
    }

    public function testUniqueSlugNumbersRepeats(): void
    {
        $this->assertSame('faq', Slugs::uniqueSlug('FAQ'));
        $this->assertSame('faq-2', Slugs::uniqueSlug('FAQ'));
    }
${added}
    public function testUniqueSlugFirstPageIsPlain(): void
    {
        $this->assertSame('getting-started', Slugs::uniqueSlug('Getting Started'));
    }
}
`;
const NEW_PHP = `
    public function testSlugifyKeepsNumbersInTitles(): void
    {
        $this->assertSame('top-10-tips', Slugs::slugify('Top 10 Tips'));
    }

    public function testUniqueSlugCollapsesSpaces(): void
    {
        $this->assertSame('getting-started', Slugs::uniqueSlug('Getting   Started'));
    }
`;
const PHP_FILES = {
  'composer.json': JSON.stringify({ name: 'swt/slugs', autoload: { 'psr-4': { 'Slugs\\': 'src/' } } }, null, 2) + '\n',
  'phpunit.xml.dist': '<?xml version="1.0"?>\n<phpunit bootstrap="vendor/autoload.php"/>\n',
};

// Ruby (minitest, Ruby 3.1's own): the same slugs, the registry an instance variable of the module;
// the tests run in name order (minitest's `i_suck_and_my_tests_are_order_dependent!`).
const RUBY_SLUGS = (pattern: string) => `module Slugs
  @taken = Hash.new(0)

  def self.slugify(title)
    title.downcase.gsub(/${pattern}/, '-').gsub(/\\A-+|-+\\z/, '')
  end

  def self.unique_slug(title)
    s = slugify(title)
    @taken[s] += 1
    @taken[s] == 1 ? s : "#{s}-#{@taken[s]}"
  end
end
`;
const RUBY_SLUG_TESTS = (added: string) => `require 'minitest/autorun'
require 'slugs'

class SlugsTest < Minitest::Test
  i_suck_and_my_tests_are_order_dependent!

  def test_slugify_lowercases_words
    assert_equal 'release-notes', Slugs.slugify('Release Notes')
  end

  def test_slugify_keeps_digits
    assert_equal 'python-3-notes', Slugs.slugify('Python 3 notes')
  end

  def test_unique_slug_numbers_repeats
    assert_equal 'faq', Slugs.unique_slug('FAQ')
    assert_equal 'faq-2', Slugs.unique_slug('FAQ')
  end
${added}
  def test_unique_slug_first_page_is_plain
    assert_equal 'getting-started', Slugs.unique_slug('Getting Started')
  end
end
`;
const NEW_RUBY = `
  def test_slugify_keeps_numbers_in_titles
    assert_equal 'top-10-tips', Slugs.slugify('Top 10 Tips')
  end

  def test_unique_slug_collapses_spaces
    assert_equal 'getting-started', Slugs.unique_slug('Getting   Started')
  end
`;

// Ruby (RSpec 3, Debian's): the same module, its examples in the order they are defined (RSpec's default).
const RSPEC_SLUG_SPECS = (added: string) => `require 'slugs'

RSpec.describe Slugs do
  it 'lowercases words' do
    expect(Slugs.slugify('Release Notes')).to eq('release-notes')
  end

  it 'keeps digits' do
    expect(Slugs.slugify('Python 3 notes')).to eq('python-3-notes')
  end

  it 'numbers repeats' do
    expect(Slugs.unique_slug('FAQ')).to eq('faq')
    expect(Slugs.unique_slug('FAQ')).to eq('faq-2')
  end
${added}
  it 'gives the first page a plain slug' do
    expect(Slugs.unique_slug('Getting Started')).to eq('getting-started')
  end
end
`;
const NEW_RSPEC = `
  it 'keeps numbers in titles' do
    expect(Slugs.slugify('Top 10 Tips')).to eq('top-10-tips')
  end

  it 'collapses spaces' do
    expect(Slugs.unique_slug('Getting   Started')).to eq('getting-started')
  end
`;

// C++ (CMake, GoogleTest): the same slugs, the registry a static map; CTest runs the test binary
// whole (one process, the tests in declaration order), as a plain `add_test` does.
const CPP_SLUGS = (pattern: string) => `#include "slugs.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>

namespace {
std::map<std::string, int> taken;
}

std::string slugify(const std::string& title) {
  std::string lower(title);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string s = std::regex_replace(lower, std::regex("${pattern}"), "-");
  const auto first = s.find_first_not_of('-');
  return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of('-') - first + 1);
}

std::string unique_slug(const std::string& title) {
  const std::string s = slugify(title);
  const int n = ++taken[s];
  return n > 1 ? s + "-" + std::to_string(n) : s;
}
`;
const CPP_SLUGS_H = '#pragma once\n#include <string>\n\nstd::string slugify(const std::string& title);\nstd::string unique_slug(const std::string& title);\n';
const CPP_SLUG_TESTS = (added: string) => `#include <gtest/gtest.h>

#include "slugs.h"

TEST(Slugs, SlugifyLowercasesWords) {
  EXPECT_EQ(slugify("Release Notes"), "release-notes");
}

TEST(Slugs, SlugifyKeepsDigits) {
  EXPECT_EQ(slugify("Python 3 notes"), "python-3-notes");
}

TEST(Slugs, UniqueSlugNumbersRepeats) {
  EXPECT_EQ(unique_slug("FAQ"), "faq");
  EXPECT_EQ(unique_slug("FAQ"), "faq-2");
}
${added}
TEST(Slugs, UniqueSlugFirstPageIsPlain) {
  EXPECT_EQ(unique_slug("Getting Started"), "getting-started");
}
`;
const NEW_CPP = `
TEST(Slugs, SlugifyKeepsNumbersInTitles) {
  EXPECT_EQ(slugify("Top 10 Tips"), "top-10-tips");
}

TEST(Slugs, UniqueSlugCollapsesSpaces) {
  EXPECT_EQ(unique_slug("Getting   Started"), "getting-started");
}
`;
const CPP_CMAKE = [
  'cmake_minimum_required(VERSION 3.14)',
  'project(slugs CXX)',
  'set(CMAKE_CXX_STANDARD 17)',
  'find_package(GTest REQUIRED)',
  'add_library(slugs src/slugs.cpp)',
  'target_include_directories(slugs PUBLIC src)',
  'enable_testing()',
  'add_executable(slugs_test tests/slugs_test.cpp)',
  'target_link_libraries(slugs_test slugs GTest::gtest_main)',
  'add_test(NAME slugs COMMAND slugs_test)',
  '',
].join('\n');

const DEV = { jest: { jest: '^29.7.0' }, mocha: { mocha: '^10.7.0' }, vitest: { vitest: '^3.2.4' } };
/** `vitest`: another major of vitest (its rounds use its own API), on the image it needs. */
const bytesProject = (runner: 'mocha' | 'jest' | 'vitest', vitest?: { version: string; image: string }): Project => {
  const dev = vitest ? { vitest: vitest.version } : DEV[runner];
  const pkg = JSON.stringify({ name: 'bytes', version: '1.0.0', private: true, scripts: { test: runner }, devDependencies: dev }, null, 2);
  return project(
    { 'package.json': pkg, 'src/bytes.js': BYTES('n > 1024'), 'test/bytes.test.js': BYTES_TESTS('') },
    { 'src/bytes.js': BYTES('n >= 1024') },
    // 1024 becomes 1 KiB, and so do 1000 and 1023.
    { 'src/bytes.js': BYTES('n >= 1000') },
    { 'test/bytes.test.js': BYTES_TESTS(NEW_JS) },
    // vitest's \`it\` is a global only with --globals.
    { image: vitest?.image ?? 'node:18', install: 'npm install --no-audit --no-fund', testCmd: runner === 'vitest' ? 'npx vitest run --globals {files}' : `npx ${runner} {files}` },
  );
};

describe('confirmation keeps order-dependent tests out of the verdict (real containers)', () => {
  let sandbox: Sandbox;
  let py: Project;
  let mocha: Project;
  let jest: Project;
  let vitest: Project;
  let vitest5: Project;
  let goSlugs: Project;
  let javaSlugs: Project;
  let rustSlugs: Project;
  let cppSlugs: Project;
  let phpSlugs: Project;
  let rubySlugs: Project;
  let rspecSlugs: Project;

  beforeAll(async () => {
    sandbox = await createDockerSandbox();
    py = project(
      { 'conftest.py': '', 'slugs.py': SLUGS('[^a-z0-9]'), 'tests/test_slugs.py': SLUG_TESTS('') },
      { 'slugs.py': SLUGS('[^a-z0-9]+') },
      // Collapses the runs, and drops digits with them.
      { 'slugs.py': SLUGS('[^a-z]+') },
      { 'tests/test_slugs.py': SLUG_TESTS(NEW_PY) },
      { image: 'python:3.11', install: '', testCmd: 'python3 -m pytest -p no:cacheprovider {files}' },
    );
    mocha = bytesProject('mocha');
    jest = bytesProject('jest');
    vitest = bytesProject('vitest');
    // vitest 5 needs Node 22.
    vitest5 = bytesProject('vitest', { version: '^5.1.1', image: 'node:22' });
    // The golang image, its install and go test, all detected from go.mod.
    goSlugs = project(
      { 'go.mod': 'module example.com/slugs\n\ngo 1.21\n', 'slugs.go': GO_SLUGS('[^a-z0-9]'), 'slugs_test.go': GO_SLUG_TESTS('') },
      { 'slugs.go': GO_SLUGS('[^a-z0-9]+') },
      { 'slugs.go': GO_SLUGS('[^a-z]+') },
      { 'slugs_test.go': GO_SLUG_TESTS(NEW_GO) },
      {},
    );
    rustSlugs = project(
      { 'Cargo.toml': '[package]\nname = "slugs"\nversion = "0.1.0"\nedition = "2021"\n', 'src/lib.rs': RUST_SLUGS(false, true), 'tests/slugs.rs': RUST_SLUG_TESTS('') },
      { 'src/lib.rs': RUST_SLUGS(true, true) },
      { 'src/lib.rs': RUST_SLUGS(true, false) },
      { 'tests/slugs.rs': RUST_SLUG_TESTS(NEW_RUST) },
      { image: 'rust:1.85', install: 'cargo fetch', testCmd: 'cargo test {files} -- --test-threads=1' },
    );
    // The swt-cc image, CMake's configure and build kept warm, CTest: all detected from CMakeLists.txt.
    cppSlugs = project(
      { 'CMakeLists.txt': CPP_CMAKE, 'src/slugs.h': CPP_SLUGS_H, 'src/slugs.cpp': CPP_SLUGS('[^a-z0-9]'), 'tests/slugs_test.cpp': CPP_SLUG_TESTS('') },
      { 'src/slugs.cpp': CPP_SLUGS('[^a-z0-9]+') },
      { 'src/slugs.cpp': CPP_SLUGS('[^a-z]+') },
      { 'tests/slugs_test.cpp': CPP_SLUG_TESTS(NEW_CPP) },
      {},
    );
    // Named outright: the detected install would ask Packagist, which this machine cannot reach.
    phpSlugs = project(
      { ...PHP_FILES, 'src/Slugs.php': PHP_SLUGS('[^a-z0-9]'), 'tests/SlugsTest.php': PHP_SLUG_TESTS('') },
      { 'src/Slugs.php': PHP_SLUGS('[^a-z0-9]+') },
      { 'src/Slugs.php': PHP_SLUGS('[^a-z]+') },
      { 'tests/SlugsTest.php': PHP_SLUG_TESTS(NEW_PHP) },
      { image: 'php:8.4-cli', install: 'composer dump-autoload', testCmd: 'phpunit {files}' },
    );
    // Named outright: the detected install would ask RubyGems, which this machine cannot reach.
    rubySlugs = project(
      { 'lib/slugs.rb': RUBY_SLUGS('[^a-z0-9]'), 'test/slugs_test.rb': RUBY_SLUG_TESTS('') },
      { 'lib/slugs.rb': RUBY_SLUGS('[^a-z0-9]+') },
      { 'lib/slugs.rb': RUBY_SLUGS('[^a-z]+') },
      { 'test/slugs_test.rb': RUBY_SLUG_TESTS(NEW_RUBY) },
      { image: 'ruby:3.1', install: '', testCmd: 'ruby -Ilib -Itest {files}' },
    );
    rspecSlugs = project(
      { 'lib/slugs.rb': RUBY_SLUGS('[^a-z0-9]'), 'spec/slugs_spec.rb': RSPEC_SLUG_SPECS('') },
      { 'lib/slugs.rb': RUBY_SLUGS('[^a-z0-9]+') },
      { 'lib/slugs.rb': RUBY_SLUGS('[^a-z]+') },
      { 'spec/slugs_spec.rb': RSPEC_SLUG_SPECS(NEW_RSPEC) },
      { image: 'ruby:3.1', install: '', testCmd: 'rspec -Ilib {files}' },
    );
    const main = 'src/main/java/com/example/Slugs.java';
    const test = 'src/test/java/com/example/SlugsTest.java';
    javaSlugs = project({ 'pom.xml': JAVA_POM, [main]: JAVA_SLUGS('[^a-z0-9]'), [test]: JAVA_SLUG_TESTS('') }, { [main]: JAVA_SLUGS('[^a-z0-9]+') }, { [main]: JAVA_SLUGS('[^a-z]+') }, { [test]: JAVA_SLUG_TESTS(NEW_JAVA) }, {});
  });
  afterAll(() => {
    cleanupGitRepos();
    expect(containersOfOursOnceRetired()).toBe('');
  });

  // No confirm given: the default (2 more runs of each test that moves) applies.
  const check = (p: () => Project, head: 'gold' | 'wrong', opts: { confirm?: number; knownFlaky?: string[] } = {}) =>
    validate(sandbox, { repo: p().repo.path, base: p().base, head: p()[head], testPatch: p().testPatch, ...(p().image ? { image: p().image, install: p().install, testCmd: p().testCmd } : {}), ...opts });
  const row = (v: ValidationResult, id: string) => {
    const t = v.tests.find((x) => x.id === id);
    if (!t) throw new Error(`no ${id} in ${v.tests.map((x) => x.id).join(', ')}`);
    return t;
  };

  const js = {
    added: 'test/bytes.test.js > 1024 bytes is 1 KiB, also from the cache',
    poisoned: 'test/bytes.test.js > the cache starts empty and holds each size once',
    broken: 'test/bytes.test.js > keeps sizes under a kibibyte in bytes',
    brokenBefore: 'test/bytes.test.js > keeps 1000 bytes in bytes',
  };
  // Every runner ROUNDS times in a row (its confirmation rounds run where the file ran).
  const cases = [
    {
      name: 'python/pytest',
      p: () => py,
      control: true,
      added: 'tests/test_slugs.py::test_unique_slug_collapses_spaces',
      poisoned: 'tests/test_slugs.py::test_unique_slug_first_page_is_plain',
      broken: 'tests/test_slugs.py::test_slugify_keeps_numbers_in_titles',
      brokenBefore: 'tests/test_slugs.py::test_slugify_keeps_digits',
      inProcess: true,
    },
    {
      name: 'go/go test',
      p: () => goSlugs,
      added: 'example.com/slugs.TestUniqueSlugCollapsesSpaces',
      poisoned: 'example.com/slugs.TestUniqueSlugFirstPageIsPlain',
      broken: 'example.com/slugs.TestSlugifyKeepsNumbersInTitles',
      brokenBefore: 'example.com/slugs.TestSlugifyKeepsDigits',
      inProcess: true,
    },
    {
      name: 'java/maven',
      p: () => javaSlugs,
      added: 'com.example.SlugsTest.uniqueSlugCollapsesSpaces',
      poisoned: 'com.example.SlugsTest.uniqueSlugFirstPageIsPlain',
      broken: 'com.example.SlugsTest.slugifyKeepsNumbersInTitles',
      brokenBefore: 'com.example.SlugsTest.slugifyKeepsDigits',
      inProcess: true,
      // A Maven build per run, and a Maven rerun for each head failure: minutes on a loaded machine.
      minutes: 6,
    },
    {
      name: 'rust/cargo test',
      p: () => rustSlugs,
      added: 'tests/slugs.rs::unique_slug_collapses_spaces',
      poisoned: 'tests/slugs.rs::unique_slug_first_page_is_plain',
      broken: 'tests/slugs.rs::slugify_keeps_numbers_in_titles',
      brokenBefore: 'tests/slugs.rs::slugify_keeps_digits',
      inProcess: true,
    },
    {
      name: 'c++/ctest',
      p: () => cppSlugs,
      added: 'tests/slugs_test.cpp > Slugs.UniqueSlugCollapsesSpaces',
      poisoned: 'tests/slugs_test.cpp > Slugs.UniqueSlugFirstPageIsPlain',
      broken: 'tests/slugs_test.cpp > Slugs.SlugifyKeepsNumbersInTitles',
      brokenBefore: 'tests/slugs_test.cpp > Slugs.SlugifyKeepsDigits',
      inProcess: true,
      // The environment's first build (GoogleTest's headers, the project) on a loaded machine.
      minutes: 4,
    },
    {
      name: 'php/phpunit',
      p: () => phpSlugs,
      added: 'tests/SlugsTest.php > Slugs\\Tests\\SlugsTest::testUniqueSlugCollapsesSpaces',
      poisoned: 'tests/SlugsTest.php > Slugs\\Tests\\SlugsTest::testUniqueSlugFirstPageIsPlain',
      broken: 'tests/SlugsTest.php > Slugs\\Tests\\SlugsTest::testSlugifyKeepsNumbersInTitles',
      brokenBefore: 'tests/SlugsTest.php > Slugs\\Tests\\SlugsTest::testSlugifyKeepsDigits',
      // Its rounds in PHPUnit's process, the registry's static property back to its default first.
      inProcess: true,
    },
    {
      name: 'ruby/minitest',
      p: () => rubySlugs,
      added: 'test/slugs_test.rb > SlugsTest#test_unique_slug_collapses_spaces',
      poisoned: 'test/slugs_test.rb > SlugsTest#test_unique_slug_first_page_is_plain',
      broken: 'test/slugs_test.rb > SlugsTest#test_slugify_keeps_numbers_in_titles',
      brokenBefore: 'test/slugs_test.rb > SlugsTest#test_slugify_keeps_digits',
      // Its rounds run in minitest's process, the module's registry as the run left it: the new
      // test's round differs from its run, so it reruns in new processes, which decide.
      inProcess: false,
    },
    {
      name: 'ruby/rspec',
      p: () => rspecSlugs,
      added: 'spec/slugs_spec.rb > Slugs collapses spaces',
      poisoned: 'spec/slugs_spec.rb > Slugs gives the first page a plain slug',
      broken: 'spec/slugs_spec.rb > Slugs keeps numbers in titles',
      brokenBefore: 'spec/slugs_spec.rb > Slugs keeps digits',
      // As minitest's: its rounds in RSpec's process, the registry as the run left it; reruns decide.
      inProcess: false,
    },
    { name: 'javascript/mocha', p: () => mocha, ...js, inProcess: true },
    { name: 'javascript/jest', p: () => jest, ...js, inProcess: true },
    { name: 'javascript/vitest 3', p: () => vitest, ...js, inProcess: true },
    { name: 'javascript/vitest 5', p: () => vitest5, ...js, inProcess: true },
  ];

  // Which validations label the poisoned test known flaky (as the App does when its history has it): alternate, from a different start per runner.
  // The control (confirmation off) runs on one runner: every runner's gold check below already shows
  // the head's first run failing the poisoned test, and what confirmation off makes of that is the
  // pipeline's, not the runner's. It was 40 % of this file's time with a control per runner.
  describe.each(cases.map((c, n) => ({ control: false, ...c, labelled: (i: number) => (i + n) % 2 === 0 })))('$name', ({ p, added, poisoned, broken, brokenBefore, inProcess, labelled, control, minutes = 2 }) => {
    if (control) {
      it('without confirmation, the poisoned neighbour is a P2F that fails the gold fix', async () => {
        const v = await check(p, 'gold', { confirm: 0 });
        expect(row(v, poisoned)).toMatchObject({ transition: 'P2F', flaky: false });
        expect(v.success).toBe(false);
        expect(v.confirmation).toBeUndefined();
      });
    }

    it(`gold fix: S in ${ROUNDS} validation(s) in a row, the poisoned test reported flaky (fails only after the new test)`, async () => {
      for (let i = 0; i < ROUNDS; i++) {
        const gold = await check(p, 'gold', labelled(i) ? { knownFlaky: [poisoned] } : {});
        expect(row(gold, added)).toMatchObject({ transition: 'F2P', flaky: false, runs: { base: { runs: 3, failed: 3 }, head: { runs: 3, failed: 0 } } });
        expect(row(gold, poisoned)).toMatchObject({
          flaky: true,
          headFlaky: true,
          orderDependent: `fails only after ${added}`,
          runs: { base: { runs: 3, failed: 0 }, head: { runs: 3, failed: 1 } },
        });
        expect(gold.tests.filter((t) => t.flaky).map((t) => t.id)).toEqual([poisoned]);
        expect(gold).toMatchObject({ success: true, likelyCorrect: true });
        expect(gold.confirmation).toMatchObject({ rounds: 2, alone: true, tests: expect.arrayContaining([added, poisoned]) });
        // Every runner here confirms the new test in rounds inside the first runs; the poisoned one, a head failure, reruns alone.
        expect(gold.confirmation?.inProcess ?? []).toEqual(inProcess ? [added] : []);
        const text = renderText(gold);
        expect(text).toContain('Flaky (not counted for S or the fix filter):');
        expect(text).toContain(`${poisoned}: failed 1 of 3 runs after the fix; fails only after ${added}${labelled(i) ? '; seen flaky here before' : ''}`);
        expect(!!row(gold, poisoned).knownFlaky).toBe(labelled(i));
      }
      // A validation with its confirmation: minutes on a loaded machine; the first builds the environment too.
    }, (ROUNDS + 1) * minutes * 60_000);

    // In the default suite, where the gold check's first validation does not label the poisoned test.
    if (ROUNDS > 1 || !labelled(0)) {
      it(`a wrong fix's real P2F caught in ${ROUNDS} validation(s) in a row, not taken for a flaky one`, async () => {
        for (let i = 0; i < ROUNDS; i++) {
          const wrong = await check(p, 'wrong');
          expect(row(wrong, broken)).toMatchObject({ transition: 'P2F', flaky: false, runs: { head: { runs: 3, failed: 3 } } });
          expect(row(wrong, added)).toMatchObject({ transition: 'F2P', flaky: false });
          expect(row(wrong, brokenBefore)).toMatchObject({ transition: 'P2F', flaky: false, preexisting: true });
          expect(wrong).toMatchObject({ success: false, likelyCorrect: false });
        }
      }, (ROUNDS + 1) * minutes * 60_000);
    }
  });
});
