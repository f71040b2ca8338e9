import { join } from 'node:path';
import { createGitRepo } from '../helpers/gitRepo.js';
import { prepareContext } from '../../src/pipeline/context.js';
import { createDockerSandbox } from '../../src/sandbox/index.js';
import { buildTestCommand } from '../../src/harness/runners.js';
import { cleanUpEcosystemRuns, expectSameJudgementFromCacheOnly, transitions, validateJson } from '../helpers/ecosystemRun.js';
import { BASE_FILES, GREETER, OLD_TEST_JUNIT5, POM_JUNIT5, TEST_PATCH } from '../helpers/mavenGreeter.js';

// A small Maven project with a real Maven Central dependency (commons-lang3) and JUnit 4, with no
// configuration at all: detection from pom.xml, the maven image (built offline from Debian
// bookworm's OpenJDK 17 and Maven 3.8.7 here), the install through the egress proxy (plugins,
// dependencies, Surefire's JUnit provider), `mvn test -Dtest=GreeterTest` read from Surefire's
// XML, in real containers.

afterAll(cleanUpEcosystemRuns);

describe('Maven projects, no configuration (real containers, a Maven Central dependency)', () => {
  // One repository for the first two tests: the second starts from the package cache the first
  // filled through Maven Central (a Maven install online is the longest step of this file).
  let repo: ReturnType<typeof createGitRepo>;
  let base: string;
  let head: string;
  beforeAll(() => {
    repo = createGitRepo(BASE_FILES);
    base = repo.sha;
    head = repo.commit({ 'src/main/java/com/example/Greeter.java': GREETER(true) }, 'greet nobody');
  });

  it('swt validate runs the touched test class and reports exactly the new test as F→P and S', async () => {
    const out = await validateJson(repo.path, base, head, TEST_PATCH);
    expect(transitions(out)).toEqual([
      ['com.example.GreeterTest.greetsByName', 'P2P'],
      ['com.example.GreeterTest.greetsNobody', 'F2P'],
    ]);
    expect(out.success).toBe(true);
    // Confirmation (on by default) ran the new test twice more on each side in Maven's JVM once it was
    // done, with Surefire's classpath: no Maven rerun. The error is the one Surefire reported.
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: ['com.example.GreeterTest.greetsNobody'], inProcess: ['com.example.GreeterTest.greetsNobody'] });
    const seen = (side: 'base' | 'head') => out.confirmation!.runs[side].map((r) => r.tests.map((t) => [t.id, t.outcome]));
    expect(seen('base')).toEqual([[['com.example.GreeterTest.greetsNobody', 'failed']], [['com.example.GreeterTest.greetsNobody', 'failed']]]);
    expect(seen('head')).toEqual([[['com.example.GreeterTest.greetsNobody', 'passed']], [['com.example.GreeterTest.greetsNobody', 'passed']]]);
    expect(out.confirmation!.runs.base[0].tests[0]).toMatchObject({ message: expect.stringContaining('NullPointerException') });
  }, 1_500_000);

  it('JUnit 5: the rounds run the new test through the JUnit Platform launcher Surefire resolved, in Maven\'s JVM once it is done', async () => {
    const repo5 = createGitRepo({ ...BASE_FILES, 'pom.xml': POM_JUNIT5, 'src/test/java/com/example/GreeterTest.java': OLD_TEST_JUNIT5 });
    const base5 = repo5.sha;
    const head5 = repo5.commit({ 'src/main/java/com/example/Greeter.java': GREETER(true) }, 'greet nobody');
    const out = await validateJson(repo5.path, base5, head5, TEST_PATCH);
    expect(transitions(out)).toEqual([
      ['com.example.GreeterTest.greetsByName', 'P2P'],
      ['com.example.GreeterTest.greetsNobody', 'F2P'],
    ]);
    expect(out.success).toBe(true);
    expect(out.confirmation).toMatchObject({ rounds: 2, tests: ['com.example.GreeterTest.greetsNobody'], inProcess: ['com.example.GreeterTest.greetsNobody'] });
    const seen = (side: 'base' | 'head') => out.confirmation!.runs[side].map((r) => r.tests.map((t) => [t.id, t.outcome]));
    expect(seen('base')).toEqual([[['com.example.GreeterTest.greetsNobody', 'failed']], [['com.example.GreeterTest.greetsNobody', 'failed']]]);
    expect(seen('head')).toEqual([[['com.example.GreeterTest.greetsNobody', 'passed']], [['com.example.GreeterTest.greetsNobody', 'passed']]]);
    expect(out.confirmation!.runs.base[0].tests[0]).toMatchObject({ message: expect.stringContaining('NullPointerException') });
  }, 1_500_000);

  it('the rounds run in Maven\'s own JVM once its build is done; when Maven cannot run them, in a JVM of their own', async () => {
    // A test that writes which JVM runs it (Surefire's fork, then each round) and fails, as a new test
    // does on base: Maven's build fails. The rounds' command is the harness's own (rounds planned for
    // the test's lines), in a container of the env image.
    const TEST = 'src/test/java/com/example/JvmTest.java';
    const source = [
      'package com.example;',
      '',
      'import java.nio.file.*;',
      'import org.junit.Test;',
      '',
      'public class JvmTest {',
      '    @Test',
      '    public void recordsItsJvm() throws Exception {',
      '        String main = System.getProperty("sun.java.command", "?").split(" ")[0];',
      '        if (main.contains("/surefirebooter")) main = "surefire\'s fork";',
      '        Files.writeString(Path.of("/tmp/jvms"), main + "\\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);',
      '        org.junit.Assert.fail("recorded");',
      '    }',
      '}',
      '',
    ].join('\n');
    const repoJ = createGitRepo({ ...BASE_FILES, [TEST]: source });
    const sandbox = createDockerSandbox();
    const ctx = await prepareContext(sandbox, { repo: repoJ.path, base: repoJ.sha });
    const command = buildTestCommand(ctx.runner, [TEST], '/tmp/swt-out', { rounds: { rounds: 2, lines: { [TEST]: [9, 10] } } });
    const jvms = async (before: string) => {
      const seen = await sandbox.run({ env: ctx.env, repo: repoJ.path, state: { rev: repoJ.sha, patches: [] }, command: `${before} ( ${command} ); ls /tmp/swt-out; grep -l 'message="recorded"' /tmp/swt-out/*.round*; cat /tmp/jvms` });
      return seen.output.trim().split('\n');
    };
    // Surefire's fork, then Maven's launcher (plexus-classworlds) twice: no JVM was started for the rounds.
    const reports = ['build-output.txt', 'maven-reports.txt', 'maven-reports.txt.round1', 'maven-reports.txt.round2'];
    const failedIn = ['/tmp/swt-out/maven-reports.txt.round1', '/tmp/swt-out/maven-reports.txt.round2'];
    expect(await jvms('')).toEqual([...reports, ...failedIn,
      "surefire's fork", 'org.codehaus.plexus.classworlds.launcher.Launcher', 'org.codehaus.plexus.classworlds.launcher.Launcher']);
    // Without the spy's registration Maven runs none: the command's own JVM runs both rounds after it.
    expect(await jvms('rm "$HOME/.cache/swt-rounds/META-INF/plexus/components.xml";')).toEqual([...reports, ...failedIn,
      "surefire's fork", 'SwtRounds', 'SwtRounds']);
  }, 1_500_000);

  it('keeps the local repository in the repository\'s package cache: a cold build with no registry reachable installs from it offline', async () => {
    // No "Maven could not resolve": plugins, commons-lang3 and JUnit came from Maven Central, then from the package cache.
    await expectSameJudgementFromCacheOnly(repo.path, base, head, TEST_PATCH, [
      ['com.example.GreeterTest.greetsByName', 'P2P'],
      ['com.example.GreeterTest.greetsNobody', 'F2P'],
    ]);
  }, 1_500_000);

  it('a named install (`mvn dependency:go-offline`) reaches Maven Central through the egress proxy, and no proxy stays in the image', async () => {
    // Before ~/.m2/settings.xml named the proxy, this install failed: Maven reads no HTTPS_PROXY.
    const repo = createGitRepo({ ...BASE_FILES, '.github/swt.yml': 'install: mvn -B -q dependency:go-offline\n' });
    const sandbox = createDockerSandbox();
    const ctx = await prepareContext(sandbox, { repo: repo.path, base: repo.sha });
    expect(ctx.install).toBe('mvn -B -q dependency:go-offline');
    const seen = await sandbox.run({ env: ctx.env, repo: repo.path, state: { rev: repo.sha, patches: [] }, command: 'ls -A "$HOME/.m2"; ls "$HOME/.m2/repository/org/apache/commons/commons-lang3"; cat "$HOME/.m2/settings.xml" 2>/dev/null; true' });
    expect(seen.output.trim().split('\n')).toEqual(['repository', '3.14.0']);
  }, 1_500_000);
});
