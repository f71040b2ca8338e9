/** Go: go.mod, `go mod download`, `go test -json`. Pure. */
import { tidyGoTest } from './newTest.js';
import { saveToCache, seedFromCache } from '../packageCacheShell.js';
import { shellQuote } from '../../util/shell.js';
import { fillTemplate, installNote, regexEscape, reportPath } from '../command.js';
import { REGISTRIES } from '../registries.js';
import type { RunnerSpec } from '../../results/types.js';
import type { Ecosystem, RepoFacts, RunnerDef } from '../types.js';
import { changedGoTests, isChangedGoTest } from './changedTests.js';
import { dirOf, parseGoTestJson } from './goTestJson.js';
import { goDependencyManifest, goMachinery } from './machinery.js';
import { GO_ROUNDS_EXEC, GO_ROUNDS_FUNCTION, GO_TEST2JSON, goRounds } from './rounds.js';

/** The Go the module asks for: its `toolchain` line, else its `go` line, as major.minor; undefined without either. */
export function goVersionOf(goMod: string | undefined): string | undefined {
  if (!goMod) return undefined;
  const toolchain = /^\s*toolchain\s+go(\d+)\.(\d+)/m.exec(goMod);
  const go = /^\s*go\s+(\d+)\.(\d+)/m.exec(goMod);
  const m = toolchain ?? go;
  return m ? `${m[1]}.${m[2]}` : undefined;
}

/** The default when go.mod names no version. */
export const DEFAULT_GO = '1.24';

/** `./dir` for each directory holding one of the files (`.` for the root), as go test takes packages. */
export function packagesOf(files: readonly string[]): string[] {
  const dirs = files.map(dirOf);
  return [...new Set(dirs)].map((d) => (d ? `./${d}` : '.'));
}

function checkedPackage(pkg: string): string {
  if (/[\u0000-\u001f\u007f]/.test(pkg)) throw new Error(`refusing package path ${JSON.stringify(pkg)}`);
  return shellQuote(pkg);
}

/**
 * The top-level test function of a go test id (`example.com/m/pkg.TestName/sub case`): the first
 * `.Test…`/`.Example…`/`.Fuzz…` identifier followed by a subtest or the end (a package path may
 * hold dots, a subtest's name anything).
 */
export function goTestName(id: string): string {
  const m = /\.((?:Test|Example|Fuzz)[A-Za-z0-9_]*)(?:\/|$)/.exec(id);
  return m ? m[1] : id.slice(id.lastIndexOf('.') + 1);
}

/** Another test file of `file`'s package (go test runs a directory's test files together), the first by name. */
export function goPackagePeer(file: string, files: readonly string[]): string | undefined {
  const dir = dirOf(file);
  return files.filter((f) => f !== file && f.endsWith('_test.go') && dirOf(f) === dir).sort()[0];
}

// The sandbox's /tmp is noexec: go test runs its test binaries from GOTMPDIR.
const TMP = 'export GOTMPDIR="$HOME/.cache/swt-go-tmp"; mkdir -p "$GOTMPDIR";';
/** Where a first run leaves its test binary, for the confirmation reruns in its own container. */
const KEPT_BINARY = '"$GOTMPDIR/swt-first-run.test"';
const REPORT = 'go-test.json';

/**
 * Whether a run of `files` can leave its test binary for the reruns: one package, and the default
 * command (a template's own go flags, `-short` say, would not reach a binary run by hand).
 */
function keepsBinary(spec: RunnerSpec, files: readonly string[]): boolean {
  return spec.template.trim() === 'go test {files}' && packagesOf(files).length === 1;
}

interface GoOptions {
  run?: string;
  kept?: boolean;
  /** The run holds confirmation rounds (rounds.ts): its binary runs through their wrapper, and the function `prepare` defined follows. */
  rounds?: boolean;
}

function goCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string, opts: GoOptions = {}): string {
  return `${TMP} ${goTestInvocation(spec, files, out, report, opts)}`;
}

/** The go test invocation itself, into the report (goCommand sets GOTMPDIR first). */
function goTestInvocation(spec: RunnerSpec, files: readonly string[], out: string, report: string, opts: GoOptions): string {
  const { run, kept } = opts;
  // -count=1: never a cached result; -vet=off: vet findings are not test results. A kept
  // container's run leaves its binary (writing it costs ~0.1 s; a rerun with it saves ~0.3 s); a
  // run with rounds has its wrapper leave it (rounds.ts).
  const rounds = opts.rounds && !run && keepsBinary(spec, files);
  const keep = kept && !rounds && !run && keepsBinary(spec, files);
  const words = ['-json', '-count=1', '-vet=off', ...(keep ? ['-o', KEPT_BINARY] : []), ...(rounds ? ['-exec', GO_ROUNDS_EXEC] : []), ...(run ? [`-run=${shellQuote(run)}`] : []), ...packagesOf(files).map(checkedPackage)];
  const test = `${fillTemplate(spec.template, words)} > ${reportPath(out, report)}`;
  return rounds ? `${test}; swt_rc=$?; ${GO_ROUNDS_FUNCTION}; (exit $swt_rc)` : test;
}

/**
 * The chosen tests from the first run's own binary when it is there (the same state, in the same
 * container): as go test runs it, in the package's directory, its output turned into go test's
 * JSON by test2json; a few ms against go test's link. Else go test -run.
 */
function rerunCommand(spec: RunnerSpec, file: string, ids: readonly string[], out: string, report: string): string {
  const run = `^(${[...new Set(ids.map(goTestName))].map(regexEscape).join('|')})$`;
  const importPath = /^(.*?)\.(?:Test|Example|Fuzz)[A-Za-z0-9_]*(?:\/|$)/.exec(ids[0] ?? '')?.[1];
  if (!keepsBinary(spec, [file]) || !importPath) return goCommand(spec, [file], out, report, { run });
  const dir = packagesOf([file])[0];
  const binary = `( cd ${checkedPackage(dir)} && ${KEPT_BINARY} -test.count=1 -test.timeout=10m0s -test.v=test2json -test.run=${shellQuote(run)} 2>&1 ) | swt_test2json -t -p ${checkedPackage(importPath)} > ${reportPath(out, report)}`;
  return `${TMP} if [ -x ${KEPT_BINARY} ]; then ${GO_TEST2JSON} ${binary}; else ${goTestInvocation(spec, [file], out, report, { run })}; fi`;
}

export const goTest: RunnerDef = {
  kind: 'go-test',
  recognise: /(^|[\s/;&|(])go\s+test(\s|$|;|&|\|)/,
  reportFile: REPORT,
  command: (spec, files, out, report, opts) => goCommand(spec, files, out, report, { ...(opts?.kept ? { kept: true } : {}), ...(opts?.rounds ? { rounds: true } : {}) }),
  // `-run '^(TestA|TestB)$'`: whole top-level tests, their subtests with them (rerunCommand).
  commandForTests: rerunCommand,
  parse: (content, ctx) => parseGoTestJson(content, ctx),
  roundsInProcess: goRounds(REPORT, KEPT_BINARY, TMP),
};

export const go: Ecosystem = {
  id: 'go',
  language: 'Go',
  manifests: ['go.mod'],
  projectFile: 'go.mod',
  tidyNewTest: tidyGoTest,
  unitPeer: goPackagePeer,
  dependencyManifest: goDependencyManifest,
  testMachinery: goMachinery,
  runnerNames: ['go test'],
  ownsPath: (p) => p.base.endsWith('.go'),
  detect: (facts: RepoFacts) => (facts.files.includes('go.mod') ? 20 : facts.files.some((f) => f.endsWith('/go.mod')) ? 8 : 0),
  isTestFile: (p) => p.base.endsWith('_test.go') && !p.dirs.some((d) => d === 'testdata' || d === 'vendor'),
  isTestSupport: (p) => p.dirs.includes('testdata'),
  languageOf: () => 'go',
  environment(facts) {
    const version = goVersionOf(facts.manifests?.['go.mod']) ?? DEFAULT_GO;
    return {
      image: `golang:${version}`,
      // Air-gapped (no proxy answers), tests still build from the modules the image holds; say so instead of failing.
      // Then compile every package's tests once (running none: -exec true), so the image's build cache
      // spares each test run the compiling of the standard library and the dependencies. With a
      // package cache ($SWT_PKG_CACHE), what was downloaded goes there for the next install (a GOPROXY layout).
      install:
        `go mod download && { go test -count=1 -vet=off -run '^$' -exec true ./... >/dev/null 2>&1 || true; } || ` +
        installNote('go mod download failed (no module proxy answered?): the tests build only with the modules the image already holds') +
        `; { ${saveToCache('"$(go env GOMODCACHE)/cache/download"', 'go')}; } 2>/dev/null || true`,
    };
  },
  defaultRunner: () => ({ kind: 'go-test', template: 'go test {files}' }),
  runners: [goTest],
  // Every package the module and its tests import (the standard library included: it is not
  // shipped compiled) and every test binary, compiled once into the image's build cache
  // (content-addressed). A test the patch adds may import what no test imported before: the
  // test main's packages (testing and what it pulls in) and every package of the module's direct
  // requirements are compiled too (bounded: a giant dependency set costs at most 5 minutes here,
  // and every package left out is compiled by the run as before). With a package cache, the
  // build cache goes back to it after, and starts from it before the install (beforeInstall), whose
  // own test compile would otherwise build the standard library and the dependencies again.
  beforeInstall: seedFromCache('go-build', '"$(go env GOCACHE)"'),
  warm:
    "go build all; go test -count=1 -vet=off -run '^$' ./...; go build testing testing/internal/testdeps; " +
    "timeout 300 sh -c 'for m in $(go list -m -f \"{{if not (or .Main .Indirect)}}{{.Path}}{{end}}\" all); do go build \"$m/...\"; done'; " +
    saveToCache('"$(go env GOCACHE)"', 'go-build'),
  changedTests(testPatch) {
    const changed = changedGoTests(testPatch);
    return (t) => isChangedGoTest(t, changed);
  },
  // the compiler's name for what does not exist (like a NameError)
  ownErrorText: /\bundefined: [\w.]+/,
  registries: REGISTRIES.go,
  coverage: { counter: 'go-cover' },
};
