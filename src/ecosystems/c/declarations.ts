/**
 * C/C++ test declarations, as a file declares them and as the frameworks then name the tests:
 * GoogleTest's `TEST(Suite, Name)` (`TEST_F`, `TEST_P`, `TYPED_TEST`…) is `Suite.Name` (with an
 * instantiation prefix and a parameter suffix: `Values/Suite.Name/3`); Catch2's and doctest's
 * `TEST_CASE("name", …)` (`TEST_CASE_METHOD(F, "name")`, `SCENARIO("name")` is `Scenario: name`)
 * is `name`, a section or subcase `name/section`. Pure.
 */

export interface Declared {
  file: string;
  /** GoogleTest: `Suite.Name`; Catch2/doctest: the test case's name. */
  name: string;
  kind: 'gtest' | 'case';
  line?: number;
}

const GTEST = /^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P|GTEST_TEST|FRIEND_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)/;
const CASE = /^\s*(TEST_CASE|SCENARIO|TEST_CASE_METHOD|TEST_CASE_FIXTURE|TEMPLATE_TEST_CASE|SCENARIO_METHOD)\s*\(\s*(?:\w+(?:::\w+)*\s*,\s*)?"((?:[^"\\]|\\.)*)"/;

/** The declarations of one file: its source, or `grep -n` lines of it (`12:TEST(A, B) {`). */
export function declaredTests(file: string, text: string): Declared[] {
  const out: Declared[] = [];
  text.split('\n').forEach((raw, i) => {
    const numbered = /^(\d+):(.*)$/.exec(raw);
    const line = numbered ? Number(numbered[1]) : i + 1;
    const src = numbered ? numbered[2]! : raw;
    const g = GTEST.exec(src);
    if (g) {
      out.push({ file, name: `${g[1]}.${g[2]}`, kind: 'gtest', line });
      return;
    }
    const c = CASE.exec(src);
    if (c) {
      const name = c[2]!.replace(/\\(.)/g, '$1');
      out.push({ file, name: c[1]!.startsWith('SCENARIO') ? `Scenario: ${name}` : name, kind: 'case', line });
    }
  });
  return out;
}

/**
 * The file a test (as its framework names it) is declared in, when exactly one requested file
 * declares it: `Suite.Name`, `Prefix/Suite.Name/0`, `Suite/0.Name` (typed); a case, or a case's
 * section (`case/section`).
 */
export function fileOfTest(name: string, declared: readonly Declared[]): string | undefined {
  const files = new Set(declared.filter((d) => matches(name, d)).map((d) => d.file));
  return files.size === 1 ? [...files][0] : undefined;
}

function matches(name: string, d: Declared): boolean {
  if (d.kind === 'case') return name === d.name || name.startsWith(`${d.name}/`);
  const [suite, test] = d.name.split('.');
  // Value-parameterized (`Inst/Suite.Name/3`) and typed (`Suite/0.Name`) tests carry extra parts around the two names.
  const re = new RegExp(`^(?:[^./]+/)?${suite}(?:/\\d+)?\\.${test}(?:/.+)?$`);
  return re.test(name);
}

/** Whether a test's name (as above) is one of `names` (declarations the test patch adds or changes). */
export function isDeclared(name: string, names: readonly Declared[]): boolean {
  return names.some((d) => matches(name, d));
}
