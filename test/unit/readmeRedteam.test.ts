/** The README's red-team figure is the red-team suite's own count: every `attack: …` test, which must all pass to land. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

it("the README's attack count matches the attacks in test/redteam", () => {
  const dir = join(process.cwd(), 'test/redteam');
  const attacks = readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .reduce((n, f) => n + (readFileSync(join(dir, f), 'utf8').match(/\bit\(\s*['"`]attack: /g) ?? []).length, 0);
  const m = /\*\*(\d+) attacks tried, (\d+) held\.\*\*/.exec(readFileSync(join(process.cwd(), 'README.md'), 'utf8'));
  expect(m).not.toBeNull();
  expect({ tried: Number(m![1]), held: Number(m![2]) }).toEqual({ tried: attacks, held: attacks });
});
