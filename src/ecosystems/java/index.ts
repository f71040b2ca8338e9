/** Java: pom.xml (Maven, Surefire XML) and build.gradle(.kts) (Gradle, its JUnit XML). Pure. */
import { shellQuote } from '../../util/shell.js';
import { fillTemplate, installNote, reportPath } from '../command.js';
import { REGISTRIES } from '../registries.js';
import type { RunnerSpec } from '../../results/types.js';
import { changedFunctions, isChangedFunction, type FunctionSyntax } from '../diffFunctions.js';
import type { Ecosystem, PathInfo, RepoFacts, RunnerDef } from '../types.js';
import { OUTPUT_MARKER, REPORT_MARKER, moduleDirOf, parseJvmReports } from './reports.js';
import { saveToCache, seedFromCache } from '../packageCacheShell.js';
import { javaDependencyManifest, javaMachinery } from './machinery.js';
import { JAVA_ROUNDS_EXTENSION, JAVA_ROUNDS_FUNCTION, JAVA_ROUNDS_INSTALL, JAVA_ROUNDS_PLAN, mavenRounds } from './rounds.js';

/** The JDK images come in these releases; a project gets the first at or above what it declares. */
const JDK_RELEASES = [8, 11, 17, 21, 25];
export const DEFAULT_JDK = 17;

/** Surefire's default includes: Test*, *Test, *Tests, *TestCase. */
const TEST_CLASS = /^(Test[^/]*|[^/]*(Test|Tests|TestCase))\.(java|kt|groovy)$/;
const SOURCE = /\.(java|kt|groovy)$/;

/** The Java release a build declares (`maven.compiler.release`, `<release>`, `source`, `java.version`, Gradle's toolchain or sourceCompatibility), as a number. */
export function javaReleaseOf(manifests: Readonly<Record<string, string>> | undefined): number | undefined {
  const m = manifests ?? {};
  const pom = m['pom.xml'] ?? '';
  const gradle = (m['build.gradle'] ?? '') + (m['build.gradle.kts'] ?? '');
  const patterns: [string, RegExp][] = [
    [pom, /<maven\.compiler\.release>\s*(?:1\.)?(\d+)\s*</],
    [pom, /<release>\s*(?:1\.)?(\d+)\s*</],
    [pom, /<maven\.compiler\.source>\s*(?:1\.)?(\d+)\s*</],
    [pom, /<source>\s*(?:1\.)?(\d+)\s*</],
    [pom, /<java\.version>\s*(?:1\.)?(\d+)\s*</],
    [gradle, /JavaLanguageVersion\.of\(\s*(\d+)\s*\)/],
    [gradle, /sourceCompatibility\s*=?\s*(?:JavaVersion\.VERSION_(?:1_)?(\d+)|['"]?(?:1\.)?(\d+))/],
  ];
  for (const [text, re] of patterns) {
    const hit = re.exec(text);
    const v = hit && Number(hit[1] ?? hit[2]);
    if (v) return v;
  }
  return undefined;
}

export function jdkFor(release: number | undefined): number {
  if (!release) return DEFAULT_JDK;
  return JDK_RELEASES.find((r) => r >= release) ?? JDK_RELEASES[JDK_RELEASES.length - 1];
}

function checked(word: string): string {
  if (/[\u0000-\u001f\u007f]/.test(word)) throw new Error(`refusing build argument ${JSON.stringify(word)}`);
  return shellQuote(word);
}

/** `core/src/test/java/com/example/FooTest.java` → `com.example.FooTest` (undefined outside a source root). */
export function classOfTestFile(file: string): string | undefined {
  const m = /(?:^|\/)src\/[^/]+\/(?:java|kotlin|groovy)\/(.+)\.(?:java|kt|groovy)$/.exec(file);
  return m ? m[1].replace(/\//g, '.') : undefined;
}

/** Plugins that check style or licences in the build would fail a test run for reasons that are not tests. */
const SKIPS = ['-Dcheckstyle.skip=true', '-Denforcer.skip=true', '-Drat.skip=true', '-Dspotless.check.skip=true', '-Djacoco.skip=true'];

/**
 * The JVM ignores HTTPS_PROXY: the install hands the egress proxy to Gradle as system properties
 * and to Maven (whose resolver reads neither) as the user's settings file with <proxies>.
 */
const PROXY_PARTS = 'p=${HTTPS_PROXY#*://}; p=${p%/}; ph=${p%:*}; pp=${p##*:};';
const JVM_PROXY = `if [ -n "\${HTTPS_PROXY:-}" ]; then ${PROXY_PARTS} export JAVA_TOOL_OPTIONS="-Dhttps.proxyHost=$ph -Dhttps.proxyPort=$pp -Dhttp.proxyHost=$ph -Dhttp.proxyPort=$pp \${JAVA_TOOL_OPTIONS:-}"; fi;`;
export const MAVEN_SETTINGS = '"$HOME/.m2/settings.xml"';
/** Marks the settings file as swt's, so the warm-up removes it (and never a settings file the image brought). */
const OWN_SETTINGS = '"$HOME/.m2/.swt-settings"';
const MAVEN_PROXY =
  `mkdir -p "$HOME/.m2"; if [ -n "\${HTTPS_PROXY:-}" ] && [ ! -e ${MAVEN_SETTINGS} ]; then ${PROXY_PARTS} ` +
  `printf '<settings><proxies><proxy><id>swt-https</id><active>true</active><protocol>https</protocol><host>%s</host><port>%s</port></proxy>` +
  `<proxy><id>swt-http</id><active>true</active><protocol>http</protocol><host>%s</host><port>%s</port></proxy></proxies></settings>\\n' "$ph" "$pp" "$ph" "$pp" > ${MAVEN_SETTINGS} && : > ${OWN_SETTINGS}; fi;`;
/**
 * Maven's own JVM (not the tests' forks) with the client compiler only and the serial collector: a
 * build of a few seconds is spent starting and warming up, and costs a third less so (10 s → 6.5 s
 * on two cores). The project's own MAVEN_OPTS come after, so they win.
 */
const MAVEN_JVM = `export MAVEN_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC\${MAVEN_OPTS:+ \$MAVEN_OPTS}";`;

/** Maven's local repository, where the runs (`-o`) read it. */
const M2_REPO = '"$HOME/.m2/repository"';

/**
 * Before any install: the egress proxy in the user's settings (so a named `mvn …` install reaches
 * Maven Central too), and the local repository seeded from the package cache.
 */
const MAVEN_BEFORE = `${MAVEN_PROXY} ${seedFromCache('m2', M2_REPO)}`;
/** After it: swt's settings file goes (no proxy stays in the image), what was resolved goes to the package cache (files already there are not copied again). */
const MAVEN_AFTER = `[ ! -e ${OWN_SETTINGS} ] || rm -f ${MAVEN_SETTINGS} ${OWN_SETTINGS}; ${saveToCache(M2_REPO, 'm2')}`;

/** Resolves the build's plugins and dependencies: go-offline, and a test run with failures ignored for what only it resolves (Surefire's JUnit provider). */
function mavenResolve(flags: string): string {
  return `mvn -B -q ${flags}dependency:go-offline && mvn -B -q ${flags}${SKIPS.join(' ')} -Dmaven.test.failure.ignore=true test >/dev/null 2>&1`;
}

/**
 * The same from Maven Central, module by module (`--fail-at-end`): a reactor module that cannot
 * resolve (a sibling needing an unreleased SNAPSHOT) no longer stops the others' resolution, and
 * the test runs build only the touched test's module with what it needs (`-pl <module> -am`).
 */
function mavenResolveEach(): string {
  return `mvn -B -q -fae dependency:go-offline; mvn -B -q -fae ${SKIPS.join(' ')} -Dmaven.test.failure.ignore=true test >/dev/null 2>&1; true`;
}

/** Gathers every XML report under `pattern` and the build's output into one report file. */
function collect(find: string, out: string, report: string): string {
  const r = reportPath(out, report);
  const log = reportPath(out, 'build-output.txt');
  return (
    `{ for f in $(find . ${find} -name 'TEST-*.xml' 2>/dev/null | sort); do echo "${REPORT_MARKER}$f -->"; cat "$f"; echo; done; ` +
    `echo ${shellQuote(OUTPUT_MARKER)}; tail -c 300000 ${log}; } > ${r}`
  );
}

/**
 * The test method of a JVM test id (`com.example.CalcTest.adds`, `….adds(int)[2]`) in the file's
 * class: what follows the class, without parameters or invocation index; undefined when the id is
 * not of that class (a nested class's test reruns with the whole file).
 */
export function jvmMethodOf(id: string, file: string): string | undefined {
  const cls = classOfTestFile(file);
  if (!cls || !id.startsWith(`${cls}.`)) return undefined;
  const m = /^[A-Za-z_$][\w$]*/.exec(id.slice(cls.length + 1));
  return m?.[0];
}

const MAVEN_REPORT = 'maven-reports.txt';

/** Set in a run container's own /tmp once a Maven build there compiled the run's sources. */
const BUILT_HERE = '/tmp/.swt-maven-built-here';

function mavenCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string, methods?: readonly string[], rounds = false): string {
  const classes = [...new Set(files.map((f) => f.split('/').pop()!.replace(SOURCE, '')))];
  const modules = [...new Set(files.map(moduleDirOf))].filter((d) => d !== '');
  // Surefire's `Class#m1+m2` runs only those methods of the class.
  const test = methods?.length ? `${classes[0]}#${methods.join('+')}` : classes.join(',');
  const words = ['-B', '-o', ...SKIPS, '-Dsurefire.failIfNoSpecifiedTests=false', '-DfailIfNoTests=false', `-Dtest=${checked(test)}`];
  if (modules.length) words.push('-pl', checked(modules.join(',')), '-am');
  const log = reportPath(out, 'build-output.txt');
  // Reports of an earlier build would read as this run's. The classes the install's test run compiled
  // from base's code would be kept by Maven's timestamp check when the run's sources look older: they
  // go too, unless a build of this container already compiled these sources (a marker in its own
  // /tmp, which no image holds): its confirmation reruns then skip compiling everything again.
  const reports = `find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} + 2>/dev/null;`;
  const stale = `[ -e ${BUILT_HERE} ] || find . \\( -path '*/target/classes' -o -path '*/target/test-classes' -o -path '*/target/maven-status' \\) -type d -prune -exec rm -rf {} + 2>/dev/null;`;
  // Confirmation rounds (rounds.ts), one module's tests only: planned before Maven, run in its JVM
  // once it is done, or after the reports are collected when that JVM did not.
  const module = rounds && new Set(files.map(moduleDirOf)).size === 1 ? checked(moduleDirOf(files[0]) || '.') : undefined;
  if (module) words.push(JAVA_ROUNDS_EXTENSION);
  const plan = module ? ` ${JAVA_ROUNDS_PLAN} ${module};` : '';
  const round = module ? ` ${JAVA_ROUNDS_FUNCTION} ${module};` : '';
  return `${reports} ${stale}${plan} ${fillTemplate(spec.template, words)} > ${log} 2>&1; rc=$?; touch ${BUILT_HERE} 2>/dev/null; ${collect("-path '*/target/surefire-reports/*'", out, report)};${round} exit $rc`;
}

/** The methods of `file`'s class the ids name, or undefined when one of them is not a plain method of it. */
function methodsOf(file: string, ids: readonly string[]): string[] | undefined {
  const methods = ids.map((id) => jvmMethodOf(id, file));
  return methods.every((m): m is string => !!m) ? [...new Set(methods)] : undefined;
}

export const maven: RunnerDef = {
  kind: 'maven',
  recognise: /(^|[\s/;&|(])(mvn|mvnw)(\s|$|;|&|\|)/,
  reportFile: MAVEN_REPORT,
  exits: true,
  command: (spec, files, out, report, opts) => mavenCommand(spec, files, out, report, undefined, !!opts?.rounds),
  commandForTests: (spec, file, ids, out, report) => mavenCommand(spec, [file], out, report, methodsOf(file, ids)),
  prepare: () => ` ${MAVEN_JVM}`,
  parse: (content, ctx) => parseJvmReports(content, ctx),
  roundsInProcess: mavenRounds(MAVEN_REPORT),
};

function gradleCommand(spec: RunnerSpec, files: readonly string[], out: string, report: string, methods?: readonly string[]): string {
  const words = ['--offline', '--continue'];
  for (const f of files) {
    const cls = classOfTestFile(f);
    // `--tests com.example.CalcTest.adds` per chosen method, else the class.
    if (cls) for (const t of methods?.length ? methods.map((m) => `${cls}.${m}`) : [cls]) words.push('--tests', checked(t));
  }
  const log = reportPath(out, 'build-output.txt');
  const clean = `find . -path '*/build/test-results' -type d -prune -exec rm -rf {} + 2>/dev/null;`;
  return `${clean} ${fillTemplate(spec.template, words)} > ${log} 2>&1; rc=$?; ${collect("-path '*/build/test-results/*'", out, report)}; exit $rc`;
}

export const gradle: RunnerDef = {
  kind: 'gradle',
  recognise: /(^|[\s/;&|(])(gradle|gradlew)(\s|$|;|&|\|)/,
  reportFile: 'gradle-reports.txt',
  exits: true,
  command: (spec, files, out, report) => gradleCommand(spec, files, out, report),
  commandForTests: (spec, file, ids, out, report) => gradleCommand(spec, [file], out, report, methodsOf(file, ids)),
  parse: (content, ctx) => parseJvmReports(content, ctx),
};

function isMaven(facts: RepoFacts): boolean {
  return facts.files.includes('pom.xml');
}

function isGradle(facts: RepoFacts): boolean {
  return facts.files.some((f) => /^(build|settings)\.gradle(\.kts)?$/.test(f));
}

/**
 * The image's own Maven or Gradle, not the project's wrapper: `mvnw` and `gradlew` download their
 * distribution on first use, from hosts no allowlist opens (and nothing can be fetched at test time).
 */
function runnerFor(facts: RepoFacts): RunnerSpec {
  if (!isMaven(facts) && isGradle(facts)) return { kind: 'gradle', template: 'gradle test {files}' };
  return { kind: 'maven', template: 'mvn test {files}' };
}

function inTestSources(p: PathInfo): boolean {
  const i = p.dirs.indexOf('src');
  return i >= 0 && p.dirs[i + 1] === 'test';
}

/** Java/Kotlin test methods in a diff: a declaration with a return type (or `fun`); blank lines, comments and annotations belong to none. */
export const JVM_FUNCTIONS: FunctionSyntax = {
  file: (p) => SOURCE.test(p),
  declaration:
    /^\s*(?:(?:public|protected|private|static|final|synchronized|abstract|default|override|suspend|internal)\s+)*(?:fun\s+(?:`([^`]+)`|(\w+))|(?!(?:return|new|throw|else|if|for|while|switch|case|assert|do|try|catch)\b)(?:<[^>]+>\s+)?[\w.$<>,?\[\]]+\s+(\w+))\s*\(/,
  neutral: /^\s*(\/\/.*|\/\*.*|\*.*|@[\w.]+(\(.*\))?|)$/,
};

/** `com.example.CalcTest.add(int, int)[1]` → `add`. */
export function methodOfId(id: string): string {
  return id.replace(/[([{].*$/, '').split('.').pop() ?? id;
}

export const java: Ecosystem = {
  id: 'java',
  language: 'Java',
  manifests: ['pom.xml', 'build.gradle', 'build.gradle.kts'],
  dependencyManifest: javaDependencyManifest,
  testMachinery: javaMachinery,
  runnerNames: ['Maven (Surefire)', 'Gradle'],
  ownsPath: (p) => SOURCE.test(p.base),
  detect(facts: RepoFacts) {
    if (isMaven(facts) || isGradle(facts)) return 20;
    return facts.files.some((f) => /(^|\/)(pom\.xml|build\.gradle(\.kts)?)$/.test(f)) ? 8 : 0;
  },
  // Maven's and Gradle's layout: test classes under src/test/<language>/, named as Surefire includes them.
  isTestFile: (p) => inTestSources(p) && TEST_CLASS.test(p.base),
  isTestSupport: (p) => inTestSources(p),
  languageOf: (testFiles) => (testFiles.some((f) => f.endsWith('.kt')) ? 'kotlin' : 'java'),
  environment(facts) {
    const jdk = jdkFor(javaReleaseOf(facts.manifests));
    if (!isMaven(facts) && isGradle(facts)) {
      const g = 'gradle';
      return {
        image: `gradle:8-jdk${jdk}`,
        install: `${JVM_PROXY} ${g} --no-daemon -q dependencies testClasses || ${installNote("Gradle could not resolve the build's dependencies (no repository answered?): the tests build only with what the image holds")}`,
      };
    }
    return {
      image: `maven:3.9-eclipse-temurin-${jdk}`,
      // Offline first, from the local repository the package cache seeded (beforeInstall); what is missing comes from Maven Central.
      install:
        `${MAVEN_JVM} { ${mavenResolve('-o ')}; } >/dev/null 2>&1 || { ${mavenResolveEach()}; }; ` +
        `mvn -B -q -o ${SKIPS.join(' ')} -DskipTests test-compile >/dev/null 2>&1 || ${installNote("Maven could not resolve all of the build's plugins and dependencies (no repository answered, or a module needs what none has): the tests build with what the local repository holds")}; ` +
        // The runner of the confirmation rounds (rounds.ts), compiled once here rather than in every run.
        JAVA_ROUNDS_INSTALL,
    };
  },
  beforeInstall: MAVEN_BEFORE,
  warm: MAVEN_AFTER,
  // Maven's and Gradle's local repositories are in home (~/.m2, ~/.gradle), their builds under /testbed.
  savesInstall: true,
  defaultRunner: (facts) => runnerFor(facts),
  runners: [maven, gradle],
  changedTests(testPatch) {
    const changed = changedFunctions(testPatch, JVM_FUNCTIONS);
    return (t) => isChangedFunction(t, changed, methodOfId);
  },
  // javac: a class, method or field that does not exist
  ownErrorText: /\bcannot find symbol\b/,
  registries: REGISTRIES.java,
  coverage: { counter: null, reason: 'Java line counts need a coverage agent (JaCoCo) in the build, which is not added' },
};
