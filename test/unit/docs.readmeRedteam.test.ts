/**
 * SECURITY.md's red-team figure and table are the red-team suite's own: every `attack: …` test,
 * which must all pass to land, is counted, and the table has one row per attack naming its file.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(process.cwd(), 'test/redteam');
const attacksPerFile = new Map(
  readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => [f.replace(/\.test\.ts$/, ''), (readFileSync(join(dir, f), 'utf8').match(/\bit\(\s*['"`]attack: /g) ?? []).length] as const),
);
const attacks = [...attacksPerFile.values()].reduce((a, b) => a + b, 0);
const security = readFileSync(join(process.cwd(), 'SECURITY.md'), 'utf8');

it("SECURITY.md's attack count matches the attacks in test/redteam", () => {
  const m = /\*\*(\d+) attacks tried, (\d+) held\.\*\*/.exec(security);
  expect(m).not.toBeNull();
  expect({ tried: Number(m![1]), held: Number(m![2]) }).toEqual({ tried: attacks, held: attacks });
});

it("SECURITY.md's red-team table has one row per attack, each naming its test file", () => {
  // Rows of the table: | area | `file` | attack | what holds |
  const rows = [...security.matchAll(/^\| [^|]+ \| `([A-Za-z0-9_.-]+)` \|/gm)].map((m) => m[1]!);
  for (const f of rows) expect(existsSync(join(dir, `${f}.test.ts`)) ? f : `${f} (no such file in test/redteam)`).toBe(f);
  const perFile = Object.fromEntries([...attacksPerFile.keys()].map((f) => [f, rows.filter((r) => r === f).length]));
  expect(perFile).toEqual(Object.fromEntries(attacksPerFile));
});
