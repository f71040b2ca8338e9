/**
 * One small real project per ecosystem the examples do not cover, for bench:harness: each with a
 * real dependency from its registry (so its install has something to cache), no configuration
 * (image, install and runner are detected), a fix and a test patch whose new test goes F→P.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { git as runGit } from '../src/repo/gitExec.js';
import * as goClampx from '../test/helpers/goClampx.js';
import * as mavenGreeter from '../test/helpers/mavenGreeter.js';
import * as rustDescribe from '../test/helpers/rustDescribe.js';

export interface BenchProject {
  name: string;
  repo: string;
  base: string;
  /** Detected when undefined. */
  image?: string;
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

/** Python: requirements.txt with a PyPI dependency (attrs), pytest. */
async function pythonProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'py-points');
  const base = await commitRepo(dir, {
    'requirements.txt': 'attrs==23.2.0\n',
    'points/__init__.py': 'import attr\n\n\n@attr.s(frozen=True)\nclass Point:\n    x = attr.ib()\n    y = attr.ib()\n\n    def norm1(self):\n        return self.x + self.y\n',
    'tests/__init__.py': '',
  });
  const patch = [
    'diff --git a/points/__init__.py b/points/__init__.py',
    '--- a/points/__init__.py',
    '+++ b/points/__init__.py',
    '@@ -9,2 +9,2 @@ class Point:',
    '     def norm1(self):',
    '-        return self.x + self.y',
    '+        return abs(self.x) + abs(self.y)',
    '',
  ].join('\n');
  const testPatch = newFile('tests/test_points.py', ['from points import Point', '', '', 'def test_norm1_negative():', '    assert Point(-1, 2).norm1() == 3', '']);
  return { name: 'python: points (attrs)', repo: dir, base, patch, testPatch };
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

/** Java: the Maven integration test's project, needing commons-lang3 from Maven Central, JUnit 4. */
async function mavenProject(root: string): Promise<BenchProject> {
  const dir = join(root, 'maven-greeter');
  const base = await commitRepo(dir, mavenGreeter.BASE_FILES);
  const patch = await diffTo(dir, { 'src/main/java/com/example/Greeter.java': mavenGreeter.GREETER(true) });
  return { name: 'java: greeter (commons-lang3, JUnit)', repo: dir, base, patch, testPatch: mavenGreeter.TEST_PATCH };
}

/** Every project, or those whose name contains one of `only` (bench:harness `--project rust`). */
export async function ecosystemProjects(root: string, only: readonly string[] = []): Promise<BenchProject[]> {
  const all: [string, (root: string) => Promise<BenchProject>][] = [['python', pythonProject], ['go', goProject], ['rust', rustProject], ['java', mavenProject]];
  const out: BenchProject[] = [];
  for (const [id, make] of all) if (only.length === 0 || only.includes(id)) out.push(await make(root));
  return out;
}
