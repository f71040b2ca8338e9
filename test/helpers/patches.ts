/** TEST HELPER. A unified diff that adds one file of the given lines (what a generated test patch looks like). */
export function newFilePatch(path: string, lines: readonly string[]): string {
  return [`diff --git a/${path} b/${path}`, 'new file mode 100644', '--- /dev/null', `+++ b/${path}`, `@@ -0,0 +1,${lines.length} @@`, ...lines.map((l) => `+${l}`), ''].join('\n');
}
