import { createGitRepo } from '../helpers/gitRepo.js';
import { cleanUpEcosystemRuns, transitions, validateJson } from '../helpers/ecosystemRun.js';
import { BASE_FILES, GREETER, TEST_PATCH } from '../helpers/mavenGreeter.js';

// Issue 39: a Maven reactor whose sibling module needs an unreleased SNAPSHOT. The install's
// `dependency:go-offline` failed fast at that module (listed first), before resolving the module
// that owns the touched test; the runs then had nothing to build it with and gave no test at all.
// Resolved module by module (--fail-at-end), the touched module builds alone with what it needs
// (`-pl greeter -am`), and its new test is F→P. Real Maven Central through the egress proxy.

const ROOT_POM = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>reactor</artifactId>
  <version>1.0</version>
  <packaging>pom</packaging>
  <modules>
    <module>extra</module>
    <module>greeter</module>
  </modules>
</project>
`;
const EXTRA_POM = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>extra</artifactId>
  <version>1.0</version>
  <dependencies>
    <dependency><groupId>com.example.unreleased</groupId><artifactId>next-api</artifactId><version>9.9-SNAPSHOT</version></dependency>
  </dependencies>
</project>
`;

afterAll(cleanUpEcosystemRuns);

describe('a Maven reactor with one unresolvable module (real containers, Maven Central)', () => {
  it("the touched test's module resolves and builds alone; its new test is F→P", async () => {
    const files = Object.fromEntries(Object.entries(BASE_FILES).map(([p, t]) => [`greeter/${p}`, t]));
    const repo = createGitRepo({ ...files, 'pom.xml': ROOT_POM, 'extra/pom.xml': EXTRA_POM, 'extra/src/main/java/com/example/extra/Extra.java': 'package com.example.extra;\n\npublic class Extra {}\n' });
    const base = repo.sha;
    const head = repo.commit({ 'greeter/src/main/java/com/example/Greeter.java': GREETER(true) }, 'greet nobody');
    const patch = TEST_PATCH.replace(/ ([ab])\/src\//g, ' $1/greeter/src/').replace(/^(---|\+\+\+) ([ab])\/src\//gm, '$1 $2/greeter/src/');
    const out = await validateJson(repo.path, base, head, patch);
    expect(transitions(out)).toEqual([
      ['com.example.GreeterTest.greetsByName', 'P2P'],
      ['com.example.GreeterTest.greetsNobody', 'F2P'],
    ]);
    expect(out.success).toBe(true);
  }, 1_200_000);
});
