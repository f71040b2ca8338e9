/**
 * Maven's confirmation rounds inside the first run (RunnerDef.roundsInProcess), for JUnit 4 and
 * JUnit 5 tests. Once `mvn` has run and its reports are collected, one JVM runs the chosen tests again
 * (the test methods whose lines hold a line the patch adds), once per round, with no Maven: no
 * second JVM for Maven, no model, no plugin resolution, no lifecycle. The test classpath is the
 * one Surefire ran with (`surefire.test.class.path` in its XML report); each round loads the
 * project's classes and JUnit in a class loader of its own, so static state starts as a new JVM
 * would have it, and runs the tests through the JUnit Platform launcher when the classpath has
 * the platform (JUnit 5; the launcher Surefire resolved for itself is added), else each through
 * JUnit 4's `JUnitCore` with `Request.method`. The runner is
 * compiled once, into the environment image (JAVA_ROUNDS_INSTALL): compiling it in the run (Java's
 * source launcher) cost 6 s of the 8 the rounds took on a loaded machine.
 *
 * What a round does not have that Surefire's fork has: its `argLine`, its system properties and
 * environment variables from the POM, JVM-wide state (system properties a test set, threads it
 * left). So a round that differs from the run proves nothing (freshProcess false): its test
 * reruns through Maven, which decides. A parameterised method (its names are not the method's),
 * Java 8, a JUnit 5 build whose launcher is nowhere to be found and a multi-module run get no
 * rounds: their tests rerun through Maven as before. Pure.
 */
import { shellQuote } from '../../util/shell.js';
import { roundReport, writeLines } from '../command.js';
import type { RoundPlan, RunnerDef } from '../types.js';
import { OUTPUT_MARKER, REPORT_MARKER } from './reports.js';

/** The shell function the command calls after the run (`swt_java_rounds <module dir>`). */
export const JAVA_ROUNDS_FUNCTION = 'swt_java_rounds';
/** Where the install leaves the compiled runner (home: the image keeps it, as it keeps ~/.m2). */
const RUNNER_DIR = '"$HOME/.cache/swt-rounds"';

/**
 * The runner: `java SwtRounds <report> <rounds> <classpath> <Class#method>…`; round N's
 * report is `<report>.roundN`, Surefire's XML between the markers the Maven report uses. A method
 * a request did not run (not a JUnit 4 test, a parameterised one: JUnit reports a failure of
 * another name, "No tests found matching"; the platform finds no method of that name without
 * parameters) is not reported.
 */
export const ROUNDS_RUNNER_SOURCE = String.raw`import java.io.*;
import java.lang.reflect.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
public class SwtRounds {
  static String esc(String s) { return s == null ? "" : s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;").replaceAll("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f]", "?"); }
  static Object call(Object o, String name) throws Exception { return o.getClass().getMethod(name).invoke(o); }
  static Class<?> type(ClassLoader l, String name) throws Exception { return Class.forName(name, true, l); }
  static void testcase(StringBuilder xml, String cls, String name, long start, Throwable t) {
    xml.append("<testcase classname=\"").append(esc(cls)).append("\" name=\"").append(esc(name)).append("\" time=\"").append((System.nanoTime() - start) / 1e9).append("\">");
    if (t != null) {
      String tag = t instanceof AssertionError ? "failure" : "error";
      StringWriter trace = new StringWriter();
      t.printStackTrace(new PrintWriter(trace));
      String text = trace.toString();
      int cut = text.indexOf("\tat org.junit.runner.JUnitCore.run");
      if (cut < 0) cut = text.indexOf("\tat org.junit.platform.");
      xml.append("<").append(tag).append(" message=\"").append(esc(t.getMessage())).append("\" type=\"").append(esc(t.getClass().getName())).append("\">").append(esc(cut < 0 ? text : text.substring(0, cut))).append("</").append(tag).append(">");
    }
    xml.append("</testcase>");
  }
  /** JUnit 4: each method through JUnitCore and Request.method; a method the request did not run is not reported. */
  static void junit4(ClassLoader loader, String[] a, StringBuilder xml) throws Exception {
    Class<?> core = type(loader, "org.junit.runner.JUnitCore"), request = type(loader, "org.junit.runner.Request");
    Method run = core.getMethod("run", request), method = request.getMethod("method", Class.class, String.class);
    Object junit = core.getConstructor().newInstance();
    for (int i = 3; i < a.length; i++) {
      String cls = a[i].substring(0, a[i].indexOf('#')), name = a[i].substring(a[i].indexOf('#') + 1);
      long start = System.nanoTime();
      Object result = run.invoke(junit, method.invoke(null, Class.forName(cls, false, loader), name));
      List<?> failures = (List<?>) call(result, "getFailures");
      boolean ran = (Integer) call(result, "getRunCount") > 0;
      for (Object f : failures) ran &= name.equals(call(call(f, "getDescription"), "getMethodName"));
      if (!ran) continue;
      Throwable t = failures.isEmpty() ? null : (Throwable) call(failures.get(0), "getException");
      testcase(xml, cls, name, start, t);
    }
  }
  /** The JUnit Platform (JUnit 5, and JUnit 4 through its vintage engine): one launch of every chosen method; what it reports ran, aborted tests left out. */
  static void platform(ClassLoader loader, String[] a, StringBuilder xml) throws Exception {
    Class<?> selector = type(loader, "org.junit.platform.engine.DiscoverySelector"), builder = type(loader, "org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder");
    Class<?> launcherType = type(loader, "org.junit.platform.launcher.Launcher"), listenerType = type(loader, "org.junit.platform.launcher.TestExecutionListener");
    Method select = type(loader, "org.junit.platform.engine.discovery.DiscoverySelectors").getMethod("selectMethod", String.class, String.class);
    Object selectors = Array.newInstance(selector, a.length - 3);
    for (int i = 3; i < a.length; i++) Array.set(selectors, i - 3, select.invoke(null, a[i].substring(0, a[i].indexOf('#')), a[i].substring(a[i].indexOf('#') + 1)));
    Object b = builder.getMethod("request").invoke(null);
    b = builder.getMethod("selectors", selectors.getClass()).invoke(b, selectors);
    Object request = builder.getMethod("build").invoke(b);
    Map<Object, Long> started = new HashMap<>();
    Object listener = java.lang.reflect.Proxy.newProxyInstance(loader, new Class<?>[] { listenerType }, (self, m, args) -> {
      switch (m.getName()) {
        case "equals": return self == args[0];
        case "hashCode": return System.identityHashCode(self);
        case "toString": return "swt-rounds";
        case "executionStarted": started.put(args[0], System.nanoTime()); return null;
        case "executionFinished": break;
        default: return null;
      }
      Optional<?> source = (Optional<?>) call(args[0], "getSource");
      if (!(Boolean) call(args[0], "isTest") || !source.isPresent() || !source.get().getClass().getName().equals("org.junit.platform.engine.support.descriptor.MethodSource")) return null;
      String status = String.valueOf(call(args[1], "getStatus"));
      if (status.equals("ABORTED")) return null;
      Optional<?> thrown = (Optional<?>) call(args[1], "getThrowable");
      Long start = started.get(args[0]);
      testcase(xml, (String) call(source.get(), "getClassName"), (String) call(source.get(), "getMethodName"), start == null ? System.nanoTime() : start, !status.equals("FAILED") ? null : thrown.isPresent() ? (Throwable) thrown.get() : new AssertionError("failed"));
      return null;
    });
    Object listeners = Array.newInstance(listenerType, 1);
    Array.set(listeners, 0, listener);
    Object launcher = type(loader, "org.junit.platform.launcher.core.LauncherFactory").getMethod("create").invoke(null);
    launcherType.getMethod("execute", type(loader, "org.junit.platform.launcher.LauncherDiscoveryRequest"), listeners.getClass()).invoke(launcher, request, listeners);
  }
  public static void main(String[] a) throws Exception {
    List<URL> urls = new ArrayList<>();
    for (String p : a[2].split(File.pathSeparator)) if (!p.isEmpty()) urls.add(new File(p).toURI().toURL());
    PrintStream out = System.out, err = System.err;
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    for (int r = 1; r <= Integer.parseInt(a[1]); r++) {
      StringBuilder xml = new StringBuilder();
      try (URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
        Thread.currentThread().setContextClassLoader(loader);
        boolean platform = loader.getResource("org/junit/platform/launcher/core/LauncherFactory.class") != null;
        System.setOut(quiet); System.setErr(quiet);
        try { if (platform) platform(loader, a, xml); else junit4(loader, a, xml); } finally { System.setOut(out); System.setErr(err); }
      }
      String report = "${REPORT_MARKER}round " + r + " -->\n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"swt-rounds\">" + xml + "</testsuite>\n${OUTPUT_MARKER}\n";
      Files.write(Paths.get(a[0] + ".round" + r), report.getBytes(StandardCharsets.UTF_8));
    }
  }
}`.split('\n');

/**
 * The test methods (`Class#method`) of the files awk reads whose lines hold one of `L`'s
 * `file:line` keys: a line belongs to the method declared last before it; blank lines, comments
 * and annotations belong to none (an added `@Test` goes with the method it precedes).
 */
const CHOOSE =
  'BEGIN { n = split(L, a, "\\n"); for (i = 1; i <= n; i++) w[a[i]] = 1 } ' +
  'FNR == 1 { m = ""; c = FILENAME; sub(/^(.*\\/)?src\\/[^\\/]+\\/(java|kotlin|groovy)\\//, "", c); sub(/\\.(java|kt|groovy)$/, "", c); gsub(/\\//, ".", c) } ' +
  '/^[ \\t]*((public|protected|private|static|final|synchronized|internal|override)[ \\t]+)*(void|fun)[ \\t]+[A-Za-z_$][A-Za-z0-9_$]*[ \\t]*\\(/ { m = $0; sub(/\\(.*/, "", m); sub(/.*[ \\t]/, "", m) } ' +
  '((FILENAME ":" FNR) in w) && m != "" && !/^[ \\t]*(\\/\\/.*|\\/\\*.*|\\*.*|@[A-Za-z0-9_.]+(\\(.*\\))?)?[ \\t]*$/ { s[c "#" m] = 1 } ' +
  'END { o = ""; for (k in s) o = o (o == "" ? "" : " ") k; print o }';

const PLAIN = /^[\w./-]+\.(java|kt|groovy)$/;

/** The awk command that prints the chosen `Class#method`s of `plan` (undefined when no file of it can be read so), run from the repository root. */
export function javaChooseCommand(plan: RoundPlan): string | undefined {
  const keys = Object.entries(plan.lines)
    .filter(([file]) => PLAIN.test(file))
    .flatMap(([file, lines]) => lines.map((n) => `${file}:${n}`));
  const files = [...new Set(keys.map((k) => k.slice(0, k.lastIndexOf(':'))))];
  return files.length ? `awk -v L=${shellQuote(keys.join('\\n'))} ${shellQuote(CHOOSE)} ${files.map(shellQuote).join(' ')}` : undefined;
}

/**
 * JUnit 5: the Platform launcher matching the platform engine on Surefire's classpath, where
 * Surefire resolved it for its own provider (the local repository), unless the project has it.
 */
const LAUNCHER =
  `v=$(printf '%s\\n' "$cp" | tr ':' '\\n' | sed -n 's#.*/junit-platform-engine-\\([^/]*\\)\\.jar$#\\1#p' | head -n 1); ` +
  `l="$HOME/.m2/repository/org/junit/platform/junit-platform-launcher/$v/junit-platform-launcher-$v.jar"; ` +
  `case "$cp" in *junit-platform-launcher-*) ;; *) [ -z "$v" ] || [ ! -f "$l" ] || cp="$cp:$l";; esac;`;

/** The function `prepare` defines, and the runner it writes: the chosen tests `plan.rounds` times, each round's report beside the run's. */
export function javaRoundsFunction(out: string, report: string, plan: RoundPlan): string {
  const choose = javaChooseCommand(plan);
  if (!choose) return ` ${JAVA_ROUNDS_FUNCTION}() { :; };`;
  // Surefire's classpath for the module's tests, from its XML report (each report holds it).
  const cp = `sed -n 's/.*name="surefire.test.class.path" value="\\([^"]*\\)".*/\\1/p' "$1"/target/surefire-reports/TEST-*.xml 2>/dev/null | head -n 1`;
  return (
    ` ${JAVA_ROUNDS_FUNCTION}() { [ -f ${RUNNER_DIR}/SwtRounds.class ] || return 0; ` +
    `sel=$(${choose} 2>/dev/null); [ -n "$sel" ] || return 0; ` +
    `cp=$(${cp}); [ -n "$cp" ] || return 0; ${LAUNCHER} ` +
    `( cd "$1" && java -XX:TieredStopAtLevel=1 -cp ${RUNNER_DIR} SwtRounds ${shellQuote(`${out}/${report}`)} ${plan.rounds} "$cp" $sel ) >/dev/null 2>&1; };`
  );
}

/**
 * Shell for the environment's install: the runner compiled for Java 11 and later (an older JDK
 * cannot, and its runs get no rounds). Never fails the install.
 */
export const JAVA_ROUNDS_INSTALL = `{ mkdir -p ${RUNNER_DIR} && ${writeLines(`${RUNNER_DIR}/SwtRounds.java`, ROUNDS_RUNNER_SOURCE)} && javac --release 11 -d ${RUNNER_DIR} ${RUNNER_DIR}/SwtRounds.java; } >/dev/null 2>&1 || true`;

/** Maven's rounds: one JVM, a class loader per round (see above). */
export function mavenRounds(report: string): NonNullable<RunnerDef['roundsInProcess']> {
  return {
    prepare: (out, plan) => javaRoundsFunction(out, report, plan),
    report: (name, round) => roundReport(name, round),
    // The rounds run after Maven: they cannot keep it from running.
    hookFailed: /(?!)/,
    freshProcess: false,
  };
}
