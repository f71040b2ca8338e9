/**
 * Maven's confirmation rounds inside the first run (RunnerDef.roundsInProcess), for JUnit 4 and
 * JUnit 5 tests: the chosen tests (the test methods whose lines hold a line the patch adds) run
 * again once per round, with no second Maven: no model, no plugin resolution, no lifecycle. They
 * run in Maven's own JVM once its build is done (a core extension, the spy below), or when Maven
 * could not (a module's run, a spy that failed) in one JVM of their own after it: starting that
 * JVM was most of what the rounds cost. The test classpath is the one Surefire ran with
 * (`surefire.test.class.path` in its XML report); each round loads the project's classes and
 * JUnit in a class loader of its own, so static state starts as a new JVM would have it, and runs
 * the tests through the JUnit Platform launcher when the classpath has the platform (JUnit 5; the
 * launcher Surefire resolved for itself is added), else each through JUnit 4's `JUnitCore` with
 * `Request.method`. Runner and spy are compiled once, into the environment image
 * (JAVA_ROUNDS_INSTALL): compiling in the run (Java's source launcher) cost 6 s of the 8 the rounds
 * took on a loaded machine.
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

/** The shell functions the command calls before the run and after it (`… <module dir>`; see javaRoundsFunction). */
export const JAVA_ROUNDS_PLAN = 'swt_java_rounds_plan';
export const JAVA_ROUNDS_FUNCTION = 'swt_java_rounds';
/** The environment variable naming the plan, for the spy in Maven's JVM. */
const PLAN_VARIABLE = 'SWT_JAVA_ROUNDS';
/** Where the install leaves the compiled runner (home: the image keeps it, as it keeps ~/.m2). */
const RUNNER_DIR = '"$HOME/.cache/swt-rounds"';

/**
 * The runner: `SwtRounds.main(<report>, <rounds>, <Class#method>…)` from the module's directory,
 * in Maven's JVM or `java SwtRounds …`; round N's report is `<report>.roundN`, Surefire's XML between the markers the Maven report uses. A method
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
    for (int i = 2; i < a.length; i++) {
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
    Object selectors = Array.newInstance(selector, a.length - 2);
    for (int i = 2; i < a.length; i++) Array.set(selectors, i - 2, select.invoke(null, a[i].substring(0, a[i].indexOf('#')), a[i].substring(a[i].indexOf('#') + 1)));
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
  /**
   * Surefire's test classpath, from one of its XML reports in target/surefire-reports (each holds
   * it); for JUnit 5, with the Platform launcher Surefire resolved for itself (the local repository)
   * when the project has the engine and not the launcher. Null when no report has it.
   */
  static String classpath() throws IOException {
    File[] reports = new File("target/surefire-reports").listFiles((d, n) -> n.startsWith("TEST-") && n.endsWith(".xml"));
    if (reports == null) return null;
    Arrays.sort(reports);
    for (File f : reports) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("name=\"surefire\\.test\\.class\\.path\" value=\"([^\"]*)\"").matcher(new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8));
      if (!m.find()) continue;
      String cp = m.group(1).replace("&quot;", "\"").replace("&apos;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
      java.util.regex.Matcher engine = java.util.regex.Pattern.compile("/junit-platform-engine-([^/" + File.pathSeparator + "]*)\\.jar(" + File.pathSeparator + "|$)").matcher(cp);
      if (engine.find() && !cp.contains("junit-platform-launcher-")) {
        String v = engine.group(1);
        File launcher = new File(System.getProperty("user.home"), ".m2/repository/org/junit/platform/junit-platform-launcher/" + v + "/junit-platform-launcher-" + v + ".jar");
        if (launcher.isFile()) cp += File.pathSeparator + launcher;
      }
      return cp;
    }
    return null;
  }
  /** Arguments: the report, the rounds, then Class#method for each test; run from the module's directory, after Surefire ran there. */
  public static void main(String[] a) throws Exception {
    String cp = classpath();
    if (cp == null) return;
    List<URL> urls = new ArrayList<>();
    for (String p : cp.split(File.pathSeparator)) if (!p.isEmpty()) urls.add(new File(p).toURI().toURL());
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
 * The spy Maven loads when the run's command names the runner's directory as a core extension
 * (`-Dmaven.ext.class.path`): when Maven is done (EventSpy.close) it runs the rounds in Maven's own
 * JVM, warm, with no JVM to start (that start was most of what the rounds cost). Only for a run of
 * the root module: a module's tests run from its directory, which Maven's JVM cannot enter. The
 * plan comes by environment (SWT_JAVA_ROUNDS: module, report, rounds, tests, a line each); if
 * anything goes wrong, the command runs the rounds in a JVM of their own after Maven.
 */
export const ROUNDS_SPY_SOURCE = String.raw`import java.util.Arrays;
import org.apache.maven.eventspy.AbstractEventSpy;
public class SwtRoundsSpy extends AbstractEventSpy {
  @Override public void close() {
    String plan = System.getenv("${PLAN_VARIABLE}");
    if (plan == null) return;
    String[] a = plan.split("\n");
    if (a.length < 4 || !a[0].equals(".")) return;
    Thread thread = Thread.currentThread();
    ClassLoader context = thread.getContextClassLoader();
    try { SwtRounds.main(Arrays.copyOfRange(a, 1, a.length)); } catch (Throwable e) { } finally { thread.setContextClassLoader(context); }
  }
}`.split('\n');

/** Plexus's component descriptor, which registers the spy with Maven's container. */
const SPY_COMPONENT = [
  '<component-set><components><component>',
  '<role>org.apache.maven.eventspy.EventSpy</role><role-hint>swt-rounds</role-hint><implementation>SwtRoundsSpy</implementation>',
  '</component></components></component-set>',
];

/** What the run's command adds to Maven's words when it has rounds: the spy's directory, when the plan chose it. */
export const JAVA_ROUNDS_EXTENSION = '${swt_java_ext:+"$swt_java_ext"}';

/**
 * The functions `prepare` defines. Before Maven, `swt_java_rounds_plan <module>` chooses the tests
 * and names the plan (SWT_JAVA_ROUNDS) for the spy; after it, `swt_java_rounds <module>` runs the
 * rounds in a JVM of their own when the spy did not write the last round's report.
 */
export function javaRoundsFunction(out: string, report: string, plan: RoundPlan): string {
  const choose = javaChooseCommand(plan);
  if (!choose) return ` ${JAVA_ROUNDS_PLAN}() { swt_java_ext=; }; ${JAVA_ROUNDS_FUNCTION}() { :; };`;
  const first = shellQuote(`${out}/${report}`);
  // The spy, for the root module, registered, and unless the project names core extensions of its own that way.
  const spy = `[ "$1" != . ] || [ ! -f ${RUNNER_DIR}/META-INF/plexus/components.xml ] || grep -qs maven.ext.class.path .mvn/maven.config .mvn/jvm.config || swt_java_ext=-Dmaven.ext.class.path=${RUNNER_DIR};`;
  return (
    ` ${JAVA_ROUNDS_PLAN}() { swt_java_ext=; rm -f ${first}.round*; [ -f ${RUNNER_DIR}/SwtRounds.class ] || return 0; ` +
    `sel=$(${choose} 2>/dev/null); [ -n "$sel" ] || return 0; ` +
    `${PLAN_VARIABLE}=$(printf '%s\\n' "$1" ${first} ${plan.rounds} $sel); export ${PLAN_VARIABLE}; ${spy} };` +
    ` ${JAVA_ROUNDS_FUNCTION}() { [ -n "\$${PLAN_VARIABLE}" ] && [ ! -f ${shellQuote(roundReport(`${out}/${report}`, plan.rounds))} ] || return 0; ` +
    `printf '%s\\n' "\$${PLAN_VARIABLE}" | tail -n +2 | tr '\\n' '\\000' | ( cd "$1" && xargs -0 java -XX:TieredStopAtLevel=1 -cp ${RUNNER_DIR} SwtRounds ) >/dev/null 2>&1; };`
  );
}

/**
 * Shell for the environment's install: the runner compiled for Java 11 and later (an older JDK
 * cannot, and its runs get no rounds), then the spy against the image's Maven, registered only
 * once it compiled. Never fails the install.
 */
export const JAVA_ROUNDS_INSTALL =
  `{ mkdir -p ${RUNNER_DIR} && ${writeLines(`${RUNNER_DIR}/SwtRounds.java`, ROUNDS_RUNNER_SOURCE)} && javac --release 11 -d ${RUNNER_DIR} ${RUNNER_DIR}/SwtRounds.java && ` +
  `${writeLines(`${RUNNER_DIR}/SwtRoundsSpy.java`, ROUNDS_SPY_SOURCE)} && m=$(readlink -f "$(command -v mvn)") && ` +
  `javac --release 11 -cp ${RUNNER_DIR}:"\${MAVEN_HOME:-\${m%/bin/mvn}}/lib/*" -d ${RUNNER_DIR} ${RUNNER_DIR}/SwtRoundsSpy.java && ` +
  `mkdir -p ${RUNNER_DIR}/META-INF/plexus && ${writeLines(`${RUNNER_DIR}/META-INF/plexus/components.xml`, SPY_COMPONENT)}; } >/dev/null 2>&1 || true`;

/** Maven's rounds: in Maven's JVM or one of their own, a class loader per round (see above). */
export function mavenRounds(report: string): NonNullable<RunnerDef['roundsInProcess']> {
  return {
    prepare: (out, plan) => javaRoundsFunction(out, report, plan),
    report: (name, round) => roundReport(name, round),
    // The rounds run once Maven is done: they cannot keep it from running.
    hookFailed: /(?!)/,
    freshProcess: false,
  };
}
