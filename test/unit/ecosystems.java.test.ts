import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detectEcosystem, recogniseRunner } from '../../src/ecosystems/index.js';
import { classOfTestFile, gradle, java, javaReleaseOf, jdkFor, jvmMethodOf, maven } from '../../src/ecosystems/java/index.js';
import { OUTPUT_MARKER, REPORT_MARKER, parseJvmReports } from '../../src/ecosystems/java/reports.js';
import { isTestFile, isTestPath } from '../../src/harness/testFiles.js';
import { parseRunReports } from '../../src/harness/parsers/index.js';
import { compareRuns } from '../../src/harness/classify.js';
import type { RunResult } from '../../src/results/types.js';

// Real reports: Maven 3.8.7 (Debian bookworm, OpenJDK 17) with Surefire 2.22.2 and 3.2.5 from
// Maven Central, on a JUnit 4.13 project and a JUnit Jupiter 5.10 project (passes, assertion
// failures, exceptions, expected exceptions, @Ignore/@Disabled, failed assumptions, timeouts,
// parameterized and repeated tests, duplicate method names across classes and nested classes),
// plus each project with a test file that does not compile; and Gradle 4.4.1 (Debian bullseye,
// OpenJDK 11: the Gradle Debian packages) on the JUnit 4 project. Download lines were dropped
// from the Maven logs.
const FIX = fileURLToPath(new URL('./fixtures/java/', import.meta.url));
const FILES = ['src/test/java/com/example/CalcTest.java', 'src/test/java/com/example/OtherTest.java', 'src/test/java/com/example/ParamTest.java'];

/** The report file the maven and gradle runners assemble: every TEST-*.xml, then the build's output. */
function assembled(dir: string, log: string, xmlDir = dir): string {
  const xml = readdirSync(join(FIX, xmlDir)).filter((f) => /^TEST-.*\.xml$/.test(f)).sort();
  const parts = xml.map((f) => `${REPORT_MARKER}./target/surefire-reports/${f} -->\n${readFileSync(join(FIX, xmlDir, f), 'utf8')}\n`);
  return `${parts.join('')}${OUTPUT_MARKER}\n${readFileSync(join(FIX, dir, log), 'utf8')}`;
}

const parse = (content: string, files = FILES) => parseJvmReports(content, { files, output: '', root: '/testbed' });

describe.each(['surefire-2.22.2-junit4', 'surefire-3.2.5-junit4', 'gradle-4.4.1-junit4'])('%s', (dir) => {
  const log = dir.startsWith('gradle') ? 'gradle.log' : 'maven.log';
  const r = parse(assembled(dir, log));
  const byId = new Map(r.tests.map((t) => [t.id, t]));

  it('names tests <class>.<method>, parameterized runs by index, same-named methods per class', () => {
    expect(byId.get('com.example.CalcTest.adds')).toMatchObject({ outcome: 'passed', file: 'src/test/java/com/example/CalcTest.java' });
    expect(byId.get('com.example.CalcTest.same')!.outcome).toBe('passed');
    expect(byId.get('com.example.OtherTest.same')).toMatchObject({ outcome: 'passed', file: 'src/test/java/com/example/OtherTest.java' });
    expect(['com.example.ParamTest.add[0]', 'com.example.ParamTest.add[1]', 'com.example.ParamTest.add[2]'].map((id) => byId.get(id)?.outcome)).toEqual(['passed', 'passed', 'failed']);
  });

  it('reads assertion failures, exceptions, timeouts, ignored tests and failed assumptions', () => {
    expect(byId.get('com.example.CalcTest.assertionFails')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('one and two') });
    expect(byId.get('com.example.CalcTest.throwsException')).toMatchObject({ outcome: 'failed', message: expect.stringContaining('ArithmeticException') });
    expect(byId.get('com.example.CalcTest.expectedException')!.outcome).toBe('passed');
    expect(byId.get('com.example.CalcTest.timesOut')).toMatchObject({ outcome: 'failed', failureKind: 'timeout' });
    expect(byId.get('com.example.CalcTest.ignored')!.outcome).toBe('skipped');
    expect(byId.get('com.example.OtherTest.assumptionFails')!.outcome).toBe('skipped');
    expect(r.buildFailures).toBeUndefined();
  });

  it('turns a test file that does not compile into a build failure of the module, with javac\'s message', () => {
    const failed = parse(assembled(dir, dir.startsWith('gradle') ? 'gradle-build-failure.log' : 'maven-build-failure.log', `${dir}/selected`).replace(/<!-- swt-report [^\n]*\n[\s\S]*?(?=<!-- swt-)/g, ''), [
      'src/test/java/com/example/BrokenTest.java',
    ]);
    expect(failed.tests).toEqual([]);
    expect(failed.buildFailures).toEqual([{ unit: expect.any(String), dir: '', message: expect.stringMatching(/BrokenTest\.java:3(:\d+)?: cannot find symbol/) }]);
    expect(failed.fileErrors).toEqual([{ file: 'src/test/java/com/example/BrokenTest.java', kind: 'collection', message: expect.stringContaining('cannot find symbol') }]);
  });
});

describe.each(['surefire-2.22.2-junit5', 'surefire-3.2.5-junit5'])('%s (JUnit Jupiter)', (dir) => {
  const r = parse(assembled(dir, 'maven.log'), ['src/test/java/com/example/CalcTest.java']);
  const byId = new Map(r.tests.map((t) => [t.id, t]));
  const v3 = dir.startsWith('surefire-3');

  it('names parameterized and repeated invocations as Surefire writes them, nested classes by their binary name', () => {
    const add = r.tests.filter((t) => /^com\.example\.CalcTest\.add[({]/.test(t.id));
    expect(add.map((t) => t.outcome)).toEqual(['passed', 'passed', 'failed']);
    expect(add[0].id).toBe(v3 ? 'com.example.CalcTest.add(int, int, int)[1]' : 'com.example.CalcTest.add{int, int, int}[1]');
    expect(byId.get('com.example.CalcTest$Inner.same')).toMatchObject({ outcome: 'passed', file: 'src/test/java/com/example/CalcTest.java' });
    expect(byId.get('com.example.CalcTest.same')!.outcome).toBe('passed');
    // Surefire 3.2.5 writes both @RepeatedTest runs as `repeated`: duplicates are one test (failing if either failed).
    expect(r.tests.filter((t) => t.id.startsWith('com.example.CalcTest.repeated')).map((t) => t.outcome)).toEqual(v3 ? ['passed'] : ['passed', 'passed']);
  });

  it('reads failures, exceptions, @Timeout, @Disabled and failed assumptions', () => {
    expect(byId.get('com.example.CalcTest.assertionFails')).toMatchObject({ outcome: 'failed', failureKind: 'assertion', message: expect.stringContaining('one and two') });
    expect(byId.get('com.example.CalcTest.throwsException')).toMatchObject({ outcome: 'failed', message: expect.stringContaining('ArithmeticException') });
    expect(byId.get('com.example.CalcTest.timesOut')).toMatchObject({ outcome: 'failed', failureKind: 'timeout' });
    expect(byId.get('com.example.CalcTest.disabled')!.outcome).toBe('skipped');
    expect(byId.get('com.example.CalcTest.assumptionFails')!.outcome).toBe('skipped');
  });
});

describe('the Java ecosystem', () => {
  it('is detected from pom.xml or build.gradle(.kts), and picks Maven or Gradle', () => {
    expect(java.detect({ files: ['pom.xml'] })).toBeGreaterThan(0);
    expect(java.detect({ files: ['build.gradle.kts', 'settings.gradle.kts'] })).toBeGreaterThan(0);
    expect(java.defaultRunner({ files: ['pom.xml'] })).toEqual({ kind: 'maven', template: 'mvn test {files}' });
    expect(java.defaultRunner({ files: ['build.gradle', 'gradlew'] })).toEqual({ kind: 'gradle', template: 'gradle test {files}' });
    // The wrapper would download Maven itself, from a host no allowlist opens.
    expect(java.defaultRunner({ files: ['pom.xml', 'mvnw'] })).toEqual({ kind: 'maven', template: 'mvn test {files}' });
    expect(detectEcosystem({ files: ['pom.xml', 'frontend/package.json'] }, ['src/test/java/a/BTest.java'])!.id).toBe('java');
    expect(recogniseRunner('./mvnw -B test')).toBe('maven');
    expect(recogniseRunner('gradle test')).toBe('gradle');
  });

  it('takes classes under src/test/<language>/ named as Surefire includes them as test files', () => {
    for (const f of ['src/test/java/a/BTest.java', 'core/src/test/java/a/TestB.java', 'src/test/kotlin/a/BTests.kt', 'src/test/java/a/BTestCase.java']) expect([f, isTestFile(f)]).toEqual([f, true]);
    for (const f of ['src/main/java/a/BTest.java', 'src/test/java/a/Helper.java']) expect([f, isTestFile(f)]).toEqual([f, false]);
    expect(isTestPath('src/test/java/a/Helper.java')).toBe(true);
    expect(classOfTestFile('core/src/test/java/com/example/FooTest.java')).toBe('com.example.FooTest');
  });

  it('runs the touched classes with -Dtest, modules with -pl, offline, and collects every report', () => {
    const cmd = maven.command({ kind: 'maven', template: 'mvn test {files}' }, ['core/src/test/java/a/BTest.java', 'core/src/test/java/a/CTest.java'], '/swt-out', 'maven-reports.txt');
    expect(cmd).toContain('mvn test -B -o');
    expect(cmd).toContain('-Dtest=BTest,CTest');
    expect(cmd).toContain('-pl core -am');
    expect(cmd).toContain("find . -path '*/target/surefire-reports/*' -name 'TEST-*.xml'");
    expect(cmd).toMatch(/exit \$rc$/);
    // Reports always go; compiled classes only when no build of this container compiled them (its own /tmp).
    expect(cmd).toMatch(/^find \. -path '\*\/target\/surefire-reports' -type d -prune -exec rm -rf \{\} \+ 2>\/dev\/null; \[ -e \/tmp\/\.swt-maven-built-here \] \|\| find \. .*'\*\/target\/classes'/);
    expect(cmd.indexOf('touch /tmp/.swt-maven-built-here')).toBeGreaterThan(cmd.indexOf('mvn test'));
    const g = gradle.command({ kind: 'gradle', template: './gradlew test {files}' }, ['src/test/java/a/BTest.java'], '/swt-out', 'gradle-reports.txt');
    expect(g).toContain('./gradlew test --offline --continue --tests a.BTest');
  });

  it('reruns chosen methods: Surefire -Dtest=Class#m1+m2, Gradle --tests per method; the class when an id is no plain method of it', () => {
    const file = 'core/src/test/java/a/BTest.java';
    const m = maven.commandForTests!({ kind: 'maven', template: 'mvn test {files}' }, file, ['a.BTest.adds', 'a.BTest.divides(int)[2]'], '/swt-out/c0-0', 'maven-reports.txt');
    expect(m).toContain("-Dtest='BTest#adds+divides'");
    expect(m).toContain('-pl core -am');
    expect(m).toContain('> /swt-out/c0-0/maven-reports.txt');
    const g = gradle.commandForTests!({ kind: 'gradle', template: './gradlew test {files}' }, 'src/test/java/a/BTest.java', ['a.BTest.adds'], '/o', 'gradle-reports.txt');
    expect(g).toContain('--tests a.BTest.adds');
    expect(jvmMethodOf('a.BTest$Inner.x', file)).toBeUndefined();
    expect(maven.commandForTests!({ kind: 'maven', template: 'mvn test {files}' }, file, ['a.BTest$Inner.x'], '/o', 'r.txt')).toContain('-Dtest=BTest ');
  });

  it('takes the JDK from the release the build declares, at the next image that has it', () => {
    expect(javaReleaseOf({ 'pom.xml': '<properties><maven.compiler.release>21</maven.compiler.release></properties>' })).toBe(21);
    expect(javaReleaseOf({ 'pom.xml': '<configuration><source>1.8</source></configuration>' })).toBe(8);
    expect(javaReleaseOf({ 'build.gradle.kts': 'java { toolchain { languageVersion = JavaLanguageVersion.of(17) } }' })).toBe(17);
    expect(javaReleaseOf({ 'build.gradle': "sourceCompatibility = '11'" })).toBe(11);
    expect(jdkFor(7)).toBe(8);
    expect(jdkFor(undefined)).toBe(17);
    expect(java.environment({ files: ['pom.xml'], manifests: { 'pom.xml': '<maven.compiler.release>21</maven.compiler.release>' } }).image).toBe('maven:3.9-eclipse-temurin-21');
    expect(java.environment({ files: ['build.gradle'] }).image).toBe('gradle:8-jdk17');
    const install = java.environment({ files: ['pom.xml'] }).install;
    expect(install).toContain('swt: Maven could not resolve');
    // Offline first, from the local repository the package cache seeded; online for what is missing.
    // Maven's own JVM is a short-lived one: client compiler, serial collector, the project's MAVEN_OPTS last.
    expect(install).toMatch(/^export MAVEN_OPTS="-XX:TieredStopAtLevel=1 -XX:\+UseSerialGC\$\{MAVEN_OPTS:\+ \$MAVEN_OPTS\}"; \{ mvn -B -q -o dependency:go-offline && .*\} >\/dev\/null 2>&1 \|\| \{ mvn -B -q -fae dependency:go-offline; mvn -B -q -fae .* test >\/dev\/null 2>&1; true; \}/);
    // Maven's resolver reads neither HTTPS_PROXY nor the JVM's proxy properties: before any install (a named one too), the user's settings file names the egress proxy.
    expect(java.beforeInstall).toMatch(/<proxies>.*<protocol>https<\/protocol><host>%s<\/host><port>%s<\/port>.*> "\$HOME\/\.m2\/settings\.xml" && : > "\$HOME\/\.m2\/\.swt-settings"/);
    expect(java.beforeInstall).toContain('cp -a "$SWT_PKG_CACHE/m2/." "$HOME/.m2/repository"/');
    // ...and after it, swt's settings file goes (never one the image brought) and the resolved artifacts go to the package cache.
    expect(java.warm).toMatch(/^\[ ! -e "\$HOME\/\.m2\/\.swt-settings" \] \|\| rm -f "\$HOME\/\.m2\/settings\.xml"/);
    expect(java.warm).toContain('cp -au "$HOME/.m2/repository"/. "$SWT_PKG_CACHE/m2/"');
    expect(java.environment({ files: ['build.gradle'] }).install).toContain('-Dhttps.proxyHost=$ph -Dhttps.proxyPort=$pp');
  });
});

describe('which Java tests a test patch adds or changes', () => {
  it('names the methods the real instances\' test patches add, parameterized runs included', () => {
    const instances = readFileSync(join(FIX, '..', '..', '..', '..', 'fixtures', 'instances', 'instances.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { instance_id: string; test_patch: string });
    const patchOf = (id: string) => instances.find((i) => i.instance_id === id)!.test_patch;
    const csv = java.changedTests!(patchOf('stleary__JSON-java-b2943b8'));
    const file = 'src/test/java/org/json/junit/CDLTest.java';
    expect(csv({ id: 'org.json.junit.CDLTest.csvParsingCatchesLastRow', file })).toBe(true);
    expect(csv({ id: 'org.json.junit.CDLTest.badEscapedQuote', file })).toBe(false);
    const semver = java.changedTests!(patchOf('semver4j__semver4j-94528d5'));
    const sfile = 'src/test/java/org/semver4j/SemverTest.java';
    expect(semver({ id: 'org.semver4j.SemverTest.shouldTreatParsedVersionsAsEqual', file: sfile })).toBe(true);
    expect(semver({ id: 'org.semver4j.SemverTest.shouldTryCoerceVersion(String, String)[1]', file: sfile })).toBe(false);
  });
});

// Issue 39: a plain Maven project whose Surefire (2.22.3) Maven Central does not have: the build
// stops before any test, and its output went to the report, not the run's. It said only "the
// runner reported no tests for this file" (F→F on both sides); now the file's failure is Maven's why.
describe('surefire-2.22.3-missing (a build that stops before any test; real Maven 3.9 output)', () => {
  const content = `${OUTPUT_MARKER}\n${readFileSync(join(FIX, 'surefire-2.22.3-missing', 'build-output.txt'), 'utf8')}`;

  it("each requested file fails with the build's own error lines, not its advice", () => {
    const r = parse(content, ['src/test/java/com/example/CalcTest.java']);
    expect(r.tests).toEqual([]);
    expect(r.fileErrors).toEqual([
      { file: 'src/test/java/com/example/CalcTest.java', kind: 'collection', message: expect.stringMatching(/^the build failed before running tests: Plugin org\.apache\.maven\.plugins:maven-surefire-plugin:2\.22\.3 or one of its dependencies could not be resolved/) },
    ]);
    expect(r.fileErrors[0]!.message).not.toMatch(/full stack trace|Help 1/);
  });

  it('through the harness: the file is F→F with that reason on both sides', () => {
    const run = (): RunResult => {
      const p = parseRunReports({ kind: 'maven', template: 'mvn test {files}' }, { files: ['src/test/java/com/example/CalcTest.java'], reports: { 'maven-reports.txt': content }, output: '', exitCode: 1, timedOut: false, root: '/testbed' });
      return { tests: p.tests, fileErrors: p.fileErrors, timedOut: false, exitCode: 1, output: '', durationMs: 0 };
    };
    const v = compareRuns([run()], [run()]);
    expect(v.tests).toHaveLength(1);
    expect(v.tests[0]).toMatchObject({ transition: 'F2F', headFailure: { kind: 'collection', message: expect.stringContaining('maven-surefire-plugin:2.22.3') } });
  });
});
