/**
 * The docs are current: docs/configuration.md is exactly what `npm run docs:config` prints from
 * the settings table and the `.github/swt.yml` schema, and every relative link in the README,
 * SECURITY.md and docs/*.md points at a file that exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { configurationDoc, shownDefault } from '../../src/cli/configDoc.js';
import { repoConfigSchema } from '../../src/config/repoConfig.js';
import { llmSettingsFrom } from '../../src/generation/llmClient.js';
import { DEFAULT_INSTALL_LIMITS } from '../../src/sandbox/environments/environment.js';
import { GROUP_TITLES, VARIABLES, type Variable } from '../../src/settings/index.js';

const ROOT = process.cwd();
const read = (p: string) => readFileSync(p, 'utf8');

describe('docs/configuration.md is made from the schemas', () => {
  const doc = configurationDoc();

  it('equals what the generator prints (run `npm run docs:config` after changing a variable or a key)', () => {
    expect(read(join(ROOT, 'docs/configuration.md'))).toBe(doc);
  });

  it('has a row for every variable of the table, with its default, and for every top-level key of the schema', () => {
    const names = Object.keys(VARIABLES);
    expect(names.length).toBeGreaterThan(80);
    expect(names.filter((n) => !doc.includes('| `' + n + '` |'))).toEqual([]);
    // The default a row shows is the one the schema applies.
    expect(doc).toContain('| `SWT_MAX_PIDS` | 4096 |');
    expect(doc).toContain('| `SWT_ROLE` | `all` |');
    expect(shownDefault(VARIABLES.SWT_ENV_CACHE_GB as Variable)).toBe('20');
    const keys = Object.keys(repoConfigSchema.shape);
    expect(keys.length).toBeGreaterThan(10);
    expect(keys.filter((k) => !doc.includes('| `' + k + '` |'))).toEqual([]);
    // Nested keys come from the schema too.
    expect(doc).toMatch(/\| `limits` \| [^|]+ \| `timeout_seconds`, `memory_mib`, `pids`, `cpus`, `disk_mib`, `output_kib`: /);
  });

  it('shows the defaults that the LLM settings and the install apply where the table has none of its own', () => {
    const s = llmSettingsFrom({});
    const shown = (n: keyof typeof VARIABLES) => shownDefault(VARIABLES[n] as Variable);
    expect([shown('SWT_LLM_MODEL'), shown('SWT_LLM_TEMPERATURE'), shown('SWT_LLM_TIMEOUT_MS'), shown('SWT_LLM_MAX_RETRIES'), shown('SWT_LLM_TOOL_MODE')]).toEqual([
      `\`${s.model}\``,
      String(s.temperature),
      String(s.timeoutMs),
      String(s.maxRetries),
      `\`${s.toolMode}\``,
    ]);
    expect([shown('SWT_LOCAL_THREADS'), shown('SWT_LOCAL_CONTEXT_TOKENS'), shown('SWT_LOCAL_CONTEXTS')]).toEqual([s.local.threads, s.local.contextTokens, s.local.contexts].map(String));
    expect(shown('SWT_INSTALL_TIMEOUT_MS')).toBe(String(DEFAULT_INSTALL_LIMITS.timeoutMs));
  });

  it('every variable has a doc line, and only the table’s groups', () => {
    for (const [name, v] of Object.entries(VARIABLES) as Array<[string, Variable]>) {
      expect([name, v.doc.trim().length > 2, v.doc.includes('\n'), v.group in GROUP_TITLES]).toEqual([name, true, false, true]);
    }
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
