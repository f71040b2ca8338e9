import { join } from 'node:path';
import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, validateJson } from '../helpers/ecosystemRun.js';

// A small Maven project with a real Maven Central dependency (commons-lang3) and JUnit 4, with no
// configuration at all: detection from pom.xml, the maven image (built offline from Debian
// bookworm's OpenJDK 17 and Maven 3.8.7 here), the install through the egress proxy (plugins,
// dependencies, Surefire's JUnit provider), `mvn test -Dtest=GreeterTest` read from Surefire's
// XML, in real containers.

const POM = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>greeter</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-lang3</artifactId><version>3.14.0</version></dependency>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
    </plugins>
  </build>
</project>
`;
const GREETER = (fixed: boolean) => `package com.example;

import org.apache.commons.lang3.StringUtils;

public class Greeter {
    public static String greet(String name) {
        ${fixed ? 'if (StringUtils.isBlank(name)) {\n            return "Hello!";\n        }\n        ' : ''}return "Hello, " + StringUtils.capitalize(name.trim()) + "!";
    }
}
`;
const OLD_TEST = `package com.example;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class GreeterTest {
    @Test
    public void greetsByName() {
        assertEquals("Hello, Ada!", Greeter.greet("ada"));
    }
}
`;
const TEST_PATCH = [
  'diff --git a/src/test/java/com/example/GreeterTest.java b/src/test/java/com/example/GreeterTest.java',
  '--- a/src/test/java/com/example/GreeterTest.java',
  '+++ b/src/test/java/com/example/GreeterTest.java',
  '@@ -9,4 +9,9 @@ public class GreeterTest {',
  '     public void greetsByName() {',
  '         assertEquals("Hello, Ada!", Greeter.greet("ada"));',
  '     }',
  '+',
  '+    @Test',
  '+    public void greetsNobody() {',
  '+        assertEquals("Hello!", Greeter.greet(null));',
  '+    }',
  ' }',
  '',
].join('\n');

afterAll(cleanUpEcosystemRuns);

describe('Maven projects, no configuration (real containers, a Maven Central dependency)', () => {
  it('swt validate runs the touched test class and reports exactly the new test as F→P and S', async () => {
    const repo = createGitRepo({ 'pom.xml': POM, 'src/main/java/com/example/Greeter.java': GREETER(false), 'src/test/java/com/example/GreeterTest.java': OLD_TEST });
    const base = repo.sha;
    const head = repo.commit({ 'src/main/java/com/example/Greeter.java': GREETER(true) }, 'greet nobody');
    const out = await validateJson(repo.path, base, head, TEST_PATCH);
    expect(out.tests.map((t: { id: string; transition: string }) => [t.id, t.transition])).toEqual([
      ['com.example.GreeterTest.greetsByName', 'P2P'],
      ['com.example.GreeterTest.greetsNobody', 'F2P'],
    ]);
    expect(out.success).toBe(true);
  }, 1_500_000);
});
