/** A diff cut into files: the one scan of a diff's headers that the ecosystems' changed-test readers share. */
import { changedFunctions } from '../../src/ecosystems/diffFunctions.js';
import { changedGoTests } from '../../src/ecosystems/go/changedTests.js';
import { splitDiff } from '../../src/patch/diffFiles.js';

// A removed SQL comment inside a Go raw string: its diff line starts with `---`, as a header does.
const diff = `diff --git a/queries_test.go b/queries_test.go
index 1..2 100644
--- a/queries_test.go
+++ b/queries_test.go
@@ -3,3 +3,2 @@ func TestQuery(t *testing.T) {
 \tq := \`
--- old comment in SQL
 \t\`
diff --git a/gone_test.go b/gone_test.go
deleted file mode 100644
--- a/gone_test.go
+++ /dev/null
@@ -1,3 +0,0 @@
-func TestGone(t *testing.T) {
-}
-
`;

describe('a diff cut into files', () => {
  it("keeps each file's hunks from the first @@ on, a removed line that starts with -- among them", () => {
    const files = splitDiff(diff);
    expect(files.map((f) => [f.path, f.isDeleted, f.hunks.length])).toEqual([
      ['queries_test.go', false, 4],
      ['gone_test.go', true, 5],
    ]);
    expect(files[0]!.hunks[2]).toBe('--- old comment in SQL');
    expect(files[0]!.removed).toEqual(['-- old comment in SQL']);
  });

  it("the ecosystems' readers see a changed line that looks like a header, and skip deleted files", () => {
    // Before they shared splitDiff, each scanned headers itself and took `--- old comment` for one.
    expect(changedGoTests(diff)).toEqual([{ dir: '', name: 'TestQuery' }]);
    const rust = changedFunctions(diff.replaceAll('_test.go', '.rs'), { file: (p) => p.endsWith('.rs'), declaration: /^\s*func (\w+)/, neutral: /^\s*$/ });
    expect(rust.whole).toEqual(new Set(['queries.rs']));
    expect([...rust.names.keys()]).toEqual([]);
  });
});
