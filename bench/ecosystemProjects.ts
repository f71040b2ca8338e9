/**
 * One small real project per ecosystem the examples do not cover, for bench:harness: each with
 * real dependencies from its registry (Python and Rust: a tree of about ten), no configuration
 * (image, install and runner are detected), a fix and a test patch whose new test goes F→P.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { git as runGit } from '../src/repo/gitExec.js';
import * as goClampx from '../test/helpers/goClampx.js';
import * as mavenGreeter from '../test/helpers/mavenGreeter.js';
import * as rustDescribe from '../test/helpers/rustDescribe.js';
import * as cppClampx from '../test/helpers/cppClampx.js';
import * as phpSlugger from '../test/helpers/phpSlugger.js';
import * as rubyRoman from '../test/helpers/rubyRoman.js';
import * as rubyStack from '../test/helpers/rubyStack.js';
import { REGISTRIES } from '../src/ecosystems/registries.js';

export interface BenchProject {
  name: string;
  repo: string;
  base: string;
  /** Detected when undefined. */
  image?: string;
  /** A compiled project: validation ÷ cold environment build must stay at or under this (its build kept warm). */
  warmBuildTarget?: number;
  install?: string;
  testCmd?: string;
  patch: string;
  testPatch: string;
}

async function commitRepo(dir: string, files: Record<string, string>): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const git = (...a: string[]) => runGit(dir, ['-c', 'user.name=b', '-c', 'user.email=b@b', ...a]);
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'base');
  return (await git('rev-parse', 'HEAD')).trim();
}

/** A unified diff adding `path` with `lines`. */
function newFile(path: string, lines: string[]): string {
  return [`diff --git a/${path} b/${path}`, 'new file mode 100644', '--- /dev/null', `+++ b/${path}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`), ''].join('\n');
}

/** Go: the Go integration test's module, needing github.com/google/go-cmp from the module proxy (checked against go.sum). */
async function goProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'go-clampx');
  const base = await commitRepo(dir, goClampx.BASE_FILES);
  const patch = [
    'diff --git a/clampx.go b/clampx.go',
    '--- a/clampx.go',
    '+++ b/clampx.go',
    '@@ -6,4 +6,7 @@ func Clamp(x, lo, hi int) int {',
    ' \t\treturn lo',
    ' \t}',
    '+\tif x > hi {',
    '+\t\treturn hi',
    '+\t}',
    ' \treturn x',
    ' }',
    '',
  ].join('\n');
  return { name: 'go: clampx (go-cmp)', repo: dir, base, patch, testPatch: goClampx.ABOVE };
}

/** Python: requirements.txt with requests and pydantic from PyPI (9 distributions with their own dependencies, pydantic-core a binary wheel), pytest. */
async function pythonProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'py-shop');
  const shop = (fixed: boolean) =>
    [
      'from decimal import Decimal',
      '',
      'import requests',
      'from pydantic import BaseModel, Field',
      '',
      '',
      'class Item(BaseModel):',
      '    name: str',
      '    price: Decimal = Field(ge=0)',
      '    quantity: int = Field(default=1, ge=1)',
      '',
      '',
      'class Order(BaseModel):',
      '    items: list[Item]',
      '',
      '    def total(self) -> Decimal:',
      `        return sum((${fixed ? 'i.price * i.quantity' : 'i.price'} for i in self.items), Decimal(0))`,
      '',
      '',
      'def order_request(base_url: str, order: Order) -> requests.PreparedRequest:',
      "    return requests.Request('POST', f'{base_url}/orders', json=order.model_dump(mode='json')).prepare()",
      '',
    ].join('\n');
  const base = await commitRepo(dir, {
    'requirements.txt': 'requests==2.32.3\npydantic==2.9.2\n',
    'shop/__init__.py': shop(false),
    'tests/__init__.py': '',
    'tests/test_request.py': "from decimal import Decimal\n\nfrom shop import Item, Order, order_request\n\n\ndef test_request_body():\n    r = order_request('http://shop.invalid', Order(items=[Item(name='a', price=Decimal('1.50'))]))\n    assert r.url == 'http://shop.invalid/orders'\n    assert b'1.50' in r.body\n",
  });
  const patch = await diffTo(dir, { 'shop/__init__.py': shop(true) });
  const testPatch = newFile('tests/test_total.py', [
    'from decimal import Decimal',
    '',
    'from shop import Item, Order',
    '',
    '',
    'def test_total_counts_quantity():',
    "    assert Order(items=[Item(name='a', price=Decimal('1.50'), quantity=2)]).total() == Decimal('3.00')",
    '',
  ]);
  return { name: 'python: shop (requests, pydantic)', repo: dir, base, patch, testPatch };
}

/** The diff from the committed files to `files`, as git writes it (the worktree put back after). */
async function diffTo(dir: string, files: Record<string, string>): Promise<string> {
  for (const [path, text] of Object.entries(files)) await writeFile(join(dir, path), text);
  const diff = await runGit(dir, ['diff']);
  await runGit(dir, ['checkout', '--', '.']);
  return diff;
}

/** Rust: the Rust integration test's crate, needing itoa from crates.io; its new integration test goes F→P. */
async function rustProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'rust-describe');
  const base = await commitRepo(dir, rustDescribe.BASE_FILES);
  const patch = await diffTo(dir, { 'src/lib.rs': rustDescribe.LIB(true) });
  return { name: 'rust: describe (itoa)', repo: dir, base, patch, testPatch: rustDescribe.INTEGRATION_PATCH };
}

/** Rust: a crate with serde (derive) and serde_json from crates.io (9 crates, syn among them); its new integration test goes F→P. */
async function rustSerdeProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'rust-invoice');
  const lib = (fixed: boolean) =>
    [
      'use serde::{Deserialize, Serialize};',
      '',
      '#[derive(Debug, PartialEq, Serialize, Deserialize)]',
      'pub struct Line {',
      '    pub name: String,',
      '    pub cents: u64,',
      '    #[serde(default = "one")]',
      '    pub qty: u64,',
      '}',
      '',
      'fn one() -> u64 {',
      '    1',
      '}',
      '',
      '#[derive(Debug, Serialize, Deserialize)]',
      'pub struct Invoice {',
      '    pub lines: Vec<Line>,',
      '}',
      '',
      'impl Invoice {',
      '    pub fn total_cents(&self) -> u64 {',
      `        self.lines.iter().map(|l| ${fixed ? 'l.cents * l.qty' : 'l.cents'}).sum()`,
      '    }',
      '}',
      '',
      'pub fn parse(json: &str) -> serde_json::Result<Invoice> {',
      '    serde_json::from_str(json)',
      '}',
      '',
    ].join('\n');
  const test = 'use invoice::parse;\n\n#[test]\nfn one_line() {\n    assert_eq!(parse(r#"{"lines":[{"name":"a","cents":150}]}"#).unwrap().total_cents(), 150);\n}\n';
  const base = await commitRepo(dir, {
    'Cargo.toml': '[package]\nname = "invoice"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nserde = { version = "1", features = ["derive"] }\nserde_json = "1"\n',
    'src/lib.rs': lib(false),
    'tests/invoice.rs': test,
  });
  const patch = await diffTo(dir, { 'src/lib.rs': lib(true) });
  const testPatch = [
    'diff --git a/tests/invoice.rs b/tests/invoice.rs',
    '--- a/tests/invoice.rs',
    '+++ b/tests/invoice.rs',
    '@@ -4,3 +4,8 @@ use invoice::parse;',
    ' fn one_line() {',
    '     assert_eq!(parse(r#"{"lines":[{"name":"a","cents":150}]}"#).unwrap().total_cents(), 150);',
    ' }',
    '+',
    '+#[test]',
    '+fn counts_quantity() {',
    '+    assert_eq!(parse(r#"{"lines":[{"name":"a","cents":150,"qty":2}]}"#).unwrap().total_cents(), 300);',
    '+}',
    '',
  ].join('\n');
  return { name: 'rust: invoice (serde, serde_json)', repo: dir, base, patch, testPatch };
}

/** Java: the Maven integration test's project, needing commons-lang3 from Maven Central, JUnit 4. */
async function mavenProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'maven-greeter');
  const base = await commitRepo(dir, mavenGreeter.BASE_FILES);
  const patch = await diffTo(dir, { 'src/main/java/com/example/Greeter.java': mavenGreeter.GREETER(true) });
  return { name: 'java: greeter (commons-lang3, JUnit)', repo: dir, base, patch, testPatch: mavenGreeter.TEST_PATCH };
}

/** Compile-heavy filler of the C++ project: a module of regex and map code and its GoogleTest file. */
function cppModule(i: number): Record<string, string> {
  const src = [
    `#include "m${i}.h"`,
    '#include <algorithm>',
    '#include <map>',
    '#include <regex>',
    '#include <sstream>',
    '',
    `std::map<std::string, int> counts${i}(const std::string& text) {`,
    '  static const std::regex word("[A-Za-z]+");',
    '  std::map<std::string, int> out;',
    '  for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it) out[it->str()] += 1;',
    '  return out;',
    '}',
    '',
    `std::string top${i}(const std::string& text) {`,
    `  auto c = counts${i}(text);`,
    '  auto best = std::max_element(c.begin(), c.end(), [](auto& a, auto& b) { return a.second < b.second; });',
    '  std::ostringstream s;',
    '  if (best != c.end()) s << best->first << ":" << best->second;',
    '  return s.str();',
    '}',
    '',
  ].join('\n');
  const header = `#pragma once\n#include <map>\n#include <string>\n\nstd::map<std::string, int> counts${i}(const std::string& text);\nstd::string top${i}(const std::string& text);\n`;
  const test = `#include <gtest/gtest.h>\n#include "m${i}.h"\n\nTEST(M${i}, Top) { EXPECT_EQ("a:2", top${i}("a b a")); }\nTEST(M${i}, Counts) { EXPECT_EQ(2u, counts${i}("x y x").size()); }\n`;
  return { [`src/m${i}.cpp`]: src, [`src/m${i}.h`]: header, [`tests/m${i}_test.cpp`]: test };
}

/**
 * C++: CMake + GoogleTest, 8 regex-and-map modules beside clampx (the C integration test's bug),
 * a test executable per module (gtest_discover_tests), the fix in one file: the build the
 * environment keeps warm must spare a validation the cold build.
 */
async function cppProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'cpp-textkit');
  const modules = Array.from({ length: 8 }, (_, i) => i);
  const cmake = [
    'cmake_minimum_required(VERSION 3.14)',
    'project(textkit CXX)',
    'set(CMAKE_CXX_STANDARD 17)',
    'find_package(GTest REQUIRED)',
    `add_library(textkit src/clampx.cpp ${modules.map((i) => `src/m${i}.cpp`).join(' ')})`,
    'target_include_directories(textkit PUBLIC src)',
    'enable_testing()',
    'include(GoogleTest)',
    ...['clampx', ...modules.map((i) => `m${i}`)].flatMap((m) => [`add_executable(${m}_test tests/${m}_test.cpp)`, `target_link_libraries(${m}_test textkit GTest::gtest_main)`, `gtest_discover_tests(${m}_test)`]),
    '',
  ].join('\n');
  const files: Record<string, string> = { 'CMakeLists.txt': cmake, ...Object.fromEntries(Object.entries(cppClampx.GTEST_BASE).filter(([p]) => p.startsWith('src/') || p.startsWith('tests/'))) };
  for (const i of modules) Object.assign(files, cppModule(i));
  const base = await commitRepo(dir, files);
  const patch = await diffTo(dir, { 'src/clampx.cpp': cppClampx.FIXED_CPP });
  return { name: 'cpp: textkit (CMake, GoogleTest, 9 modules)', repo: dir, base, patch, testPatch: cppClampx.GTEST_ABOVE, warmBuildTarget: 0.3 };
}

/**
 * Ruby (minitest, RSpec) and PHP (PHPUnit): the integration test's projects. RubyGems and Packagist are not
 * reachable here: their installs take the air-gapped way (Debian's gems, Debian's PHPUnit), and
 * the bench's sandbox leaves those registries out of its egress (AIR_GAPPED_HOSTS), as the test does.
 */
async function rubyProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'ruby-roman');
  const base = await commitRepo(dir, rubyRoman.BASE_FILES);
  return { name: 'ruby: roman (minitest)', repo: dir, base, patch: await diffTo(dir, rubyRoman.FIX), testPatch: rubyRoman.TEST_PATCH };
}

async function rspecProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'ruby-stack');
  const base = await commitRepo(dir, rubyStack.BASE_FILES);
  return { name: 'ruby: stack (RSpec)', repo: dir, base, patch: await diffTo(dir, rubyStack.FIX), testPatch: rubyStack.TEST_PATCH };
}

async function phpProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'php-slugger');
  const base = await commitRepo(dir, phpSlugger.BASE_FILES);
  return { name: 'php: slugger (PHPUnit)', repo: dir, base, patch: await diffTo(dir, phpSlugger.FIX), testPatch: phpSlugger.TEST_PATCH };
}

/** Registries the bench's sandbox never asks: the Ruby and PHP projects install without them. */
export const AIR_GAPPED_HOSTS: readonly string[] = [...REGISTRIES.ruby, ...REGISTRIES.php];

/**
 * Every project, or those whose id is one of `only` (bench:harness `--project=rust`; `rust-describe`: the small crate the Rust
 * integration tests share, only when named).
 */
export async function ecosystemProjects(root: string, only: readonly string[] = []): Promise<BenchProject[]> {
  const all: [string, (root: string) => Promise<BenchProject>][] = [
    ['python', pythonProject],
    ['go', goProject],
    ['rust', rustSerdeProject],
    ['rust-describe', rustProject],
    ['java', mavenProject],
    ['cpp', cppProject],
    ['ruby', rubyProject],
    ['rspec', rspecProject],
    ['php', phpProject],
  ];
  const out: BenchProject[] = [];
  // The small crate only when asked for: the serde crate is the Rust project.
  for (const [id, make] of all) if (only.length === 0 ? id !== 'rust-describe' : only.includes(id)) out.push(await make(root));
  return out;
}
