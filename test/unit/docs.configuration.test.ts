/**
 * The docs are current: every environment variable src/ reads and every top-level key of the
 * `.github/swt.yml` schema is named in docs/configuration.md, and every relative link in the
 * README, SECURITY.md and docs/*.md points at a file that exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { repoConfigSchema } from '../../src/config/repoConfig.js';

const ROOT = process.cwd();
const SRC = join(ROOT, 'src');
const read = (p: string) => readFileSync(p, 'utf8');

function srcFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? srcFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const NAME = '([A-Z][A-Z0-9_]*[A-Z0-9])';
/** Reads of a variable (not writes: `env.X = …` sets one for a child process). */
const READS = [
  // process.env.X, process.env?.X, process.env['X'], and the same through an `env` parameter
  new RegExp(String.raw`\benv\??\.${NAME}\b(?!\s*=[^=])`, 'g'),
  new RegExp(String.raw`\benv\[\s*['"\`]${NAME}['"\`]\s*\](?!\s*=[^=])`, 'g'),
  // a helper given the name: num('SWT_ENV_CACHE_GB', 20); the ceilings' table: variable: 'SWT_MAX_PIDS'
  new RegExp(String.raw`\b(?:num|variable:)\s*\(?\s*['"]${NAME}['"]`, 'g'),
  // Python and shell in the sandbox: os.environ.get("X"), os.environ["X"]
  new RegExp(String.raw`os\.environ(?:\.get\(|\[)\s*['"]${NAME}['"]`, 'g'),
];

/** The names of the zod object `const ENV = z.object({ … })` in src/settings (each key is a variable). */
function settingsKeys(): string[] {
  const text = read(join(SRC, 'settings/index.ts'));
  const start = text.indexOf('const ENV = z.object({');
  const block = text.slice(start, text.indexOf('\n});', start));
  return [...block.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
}

export function envVariablesReadInSrc(): string[] {
  const names = new Set<string>(settingsKeys());
  for (const f of srcFiles(SRC)) {
    const text = read(f);
    for (const re of READS) for (const m of text.matchAll(re)) names.add(m[1]!);
  }
  return [...names].sort();
}

const configDoc = read(join(ROOT, 'docs/configuration.md'));
/** A name counts as documented in a code span of its own, alone or in a list: `X`, `X` (or `Y`). */
const documented = (name: string) => configDoc.includes('`' + name + '`');

describe('docs/configuration.md is current', () => {
  it('finds the variables src/ reads (the scan itself works)', () => {
    const found = envVariablesReadInSrc();
    // One of each way a variable is read: process.env.X, an env parameter, the settings schema, a helper, Python.
    expect(found).toEqual(expect.arrayContaining(['SWT_PULL', 'SWT_LLM_MODEL', 'SWT_ROLE', 'SWT_ENV_CACHE_GB', 'SWT_MAX_PIDS', 'SWT_COV_OUT', 'GHE_HOST', 'REDIS_URL']));
    // Writes are not reads: git's settings are set for a child process, never read.
    expect(found).not.toContain('GIT_TERMINAL_PROMPT');
    expect(found.length).toBeGreaterThan(60);
  });

  it('names every environment variable read in src/', () => {
    expect(envVariablesReadInSrc().filter((n) => !documented(n))).toEqual([]);
  });

  it('names every top-level key of the .github/swt.yml schema', () => {
    const keys = Object.keys(repoConfigSchema.shape);
    expect(keys.length).toBeGreaterThan(10);
    expect(keys.filter((k) => !configDoc.includes('`' + k + '`'))).toEqual([]);
  });
});

/** Relative links of a markdown file: `[text](target)`, without the `#fragment`; web and mail links left out. */
export function relativeLinks(markdown: string): string[] {
  const noCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...noCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'))
    .map((t) => decodeURIComponent(t.split('#')[0]!));
}

describe('links between the docs resolve', () => {
  const docs = ['README.md', 'SECURITY.md', 'bench/README.md', 'src/harness/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

  it('finds the links (the scan itself works)', () => {
    expect(relativeLinks('[a](docs/x.md#y) [b](https://e.example) [c](#top) `[d](no.md)` [e](../f.png "t")')).toEqual(['docs/x.md', '../f.png']);
  });

  it.each(docs)('every relative link in %s points at a file that exists', (doc) => {
    const missing = relativeLinks(read(join(ROOT, doc))).filter((t) => !existsSync(resolve(dirname(join(ROOT, doc)), t)));
    expect(missing.map((t) => relative(ROOT, resolve(dirname(join(ROOT, doc)), t)))).toEqual([]);
  });

  it('every fragment link into another doc names one of its headings', () => {
    const slug = (h: string) => h.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const bad: string[] = [];
    let checked = 0;
    for (const doc of docs) {
      const text = read(join(ROOT, doc));
      for (const m of text.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s#]*)#([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(m[1]!)) continue;
        const target = m[1] ? resolve(dirname(join(ROOT, doc)), m[1]) : join(ROOT, doc);
        if (!existsSync(target) || !target.endsWith('.md')) continue;
        const headings = read(target).replace(/```[\s\S]*?```/g, '').match(/^#{1,6} .*$/gm) ?? [];
        checked++;
        if (!headings.some((h) => slug(h.replace(/^#+ /, '')) === m[2])) bad.push(`${doc} → ${m[1] || ''}#${m[2]}`);
      }
    }
    expect(bad).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });
});
