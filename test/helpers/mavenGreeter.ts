/**
 * TEST HELPER. A small real Maven project (greeter) needing commons-lang3 from Maven Central, with
 * JUnit 4: its files at base, the fixed source, and a test patch. One definition for the Java
 * integration test and bench:harness.
 */

/** A one-module Maven project's POM: Java 17, JUnit 4.13.2, the compiler and Surefire the tests pin; `dependencies` go before JUnit. */
export const pomFor = (artifactId: string, dependencies = '') => `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>${artifactId}</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
${dependencies}    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
    </plugins>
  </build>
</project>
`;
export const POM = pomFor('greeter', '    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-lang3</artifactId><version>3.14.0</version></dependency>\n');
export const GREETER = (fixed: boolean) => `package com.example;

import org.apache.commons.lang3.StringUtils;

public class Greeter {
    public static String greet(String name) {
        ${fixed ? 'if (StringUtils.isBlank(name)) {\n            return "Hello!";\n        }\n        ' : ''}return "Hello, " + StringUtils.capitalize(name.trim()) + "!";
    }
}
`;
export const OLD_TEST = `package com.example;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class GreeterTest {
    @Test
    public void greetsByName() {
        assertEquals("Hello, Ada!", Greeter.greet("ada"));
    }
}
`;
export const TEST_PATCH = [
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

/** The same project on JUnit 5 (Jupiter): the same lines, so TEST_PATCH applies to it too. */
export const POM_JUNIT5 = POM.replace(
  '<dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>',
  '<dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>5.10.2</version><scope>test</scope></dependency>',
);
export const OLD_TEST_JUNIT5 = OLD_TEST.replace('import static org.junit.Assert.assertEquals;', 'import static org.junit.jupiter.api.Assertions.assertEquals;').replace('import org.junit.Test;', 'import org.junit.jupiter.api.Test;');

/** The project at base. */
export const BASE_FILES: Record<string, string> = { 'pom.xml': POM, 'src/main/java/com/example/Greeter.java': GREETER(false), 'src/test/java/com/example/GreeterTest.java': OLD_TEST };
