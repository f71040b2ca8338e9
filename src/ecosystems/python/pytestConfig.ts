/**
 * The test files a project's pytest configuration names: `python_files` (pylint's `unittest_*.py`),
 * with `python_classes`, `python_functions` and `testpaths` read beside it for the record. Read from
 * the file pytest itself would take: pytest.ini, then pyproject.toml's `[tool.pytest.ini_options]`
 * (or pytest 9's `[tool.pytest]`), tox.ini's `[pytest]`, setup.cfg's `[tool:pytest]`. Pure.
 */
import { parse as parseToml } from 'smol-toml';
import type { PathInfo, TestFileRules } from '../types.js';

/** pytest's own order: the first file that has a pytest section is the configuration. */
const CONFIG_FILES = ['pytest.ini', '.pytest.ini', 'pyproject.toml', 'tox.ini', 'setup.cfg'] as const;
const INI_SECTION: Record<string, string> = { 'pytest.ini': 'pytest', '.pytest.ini': 'pytest', 'tox.ini': 'pytest', 'setup.cfg': 'tool:pytest' };
const KEYS = ['python_files', 'python_classes', 'python_functions', 'testpaths'] as const;
type Key = (typeof KEYS)[number];

export function pytestConfigFiles(files: readonly string[]): string[] {
  return CONFIG_FILES.filter((f) => files.includes(f));
}

/** An INI section's keys (continuation lines are indented), or undefined when the section is absent. */
function iniSection(text: string, section: string): Partial<Record<Key, string[]>> | undefined {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((l) => l.trim() === `[${section}]`);
  if (start < 0) return undefined;
  const out: Partial<Record<Key, string[]>> = {};
  let key: Key | undefined;
  for (const l of lines.slice(start + 1)) {
    if (/^\[/.test(l)) break;
    if (/^\s*[#;]/.test(l) || !l.trim()) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*[=:]\s*(.*)$/.exec(l);
    if (m && !/^\s/.test(l)) {
      key = (KEYS as readonly string[]).includes(m[1]!) ? (m[1] as Key) : undefined;
      if (key) out[key] = words(m[2]!);
    } else if (key && /^\s/.test(l)) out[key]!.push(...words(l));
  }
  return out;
}

const words = (s: string) => s.split(/\s+/).filter(Boolean);

function tomlSection(text: string): Partial<Record<Key, string[]>> | undefined {
  let doc: Record<string, any>;
  try {
    doc = parseToml(text) as Record<string, any>;
  } catch {
    return undefined;
  }
  const section = doc.tool?.pytest?.ini_options ?? doc.tool?.pytest;
  if (!section || typeof section !== 'object') return undefined;
  const out: Partial<Record<Key, string[]>> = {};
  for (const k of KEYS) {
    const v = section[k];
    if (typeof v === 'string') out[k] = words(v);
    else if (Array.isArray(v)) out[k] = v.filter((x): x is string => typeof x === 'string');
  }
  return out;
}

/** The rules of the configuration pytest would read: `python_files` as globs; undefined when it names none. */
export function pytestTestFileRules(texts: Readonly<Record<string, string>>): TestFileRules | undefined {
  for (const file of CONFIG_FILES) {
    const text = texts[file];
    if (text === undefined) continue;
    const section = file === 'pyproject.toml' ? tomlSection(text) : iniSection(text, INI_SECTION[file]!);
    // pytest.ini is the configuration even without a section; the others only with one.
    if (!section && !file.startsWith('pytest') && file !== '.pytest.ini') continue;
    const globs = section?.python_files ?? [];
    if (!globs.length) return undefined;
    const named = KEYS.filter((k) => section?.[k]?.length).map((k) => `${file} ${k}`);
    return { globs, excludes: [], regexes: [], sources: named };
  }
  return undefined;
}

/** fnmatch as pytest applies it: a pattern without `/` to the file's name, else to the end of its path. */
function fnmatchRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        const body = pattern.slice(i + 1, end);
        re += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const compiled = new WeakMap<TestFileRules, (p: PathInfo) => boolean>();

/** Whether the configuration's `python_files` names this file. */
export function namedByPytestConfig(p: PathInfo, rules: TestFileRules): boolean {
  let match = compiled.get(rules);
  if (!match) {
    const tests = rules.globs.map((g) => ({ path: g.includes('/'), re: fnmatchRegex(g.includes('/') ? `*/${g}` : g) }));
    match = (q) => tests.some((t) => t.re.test(t.path ? `/${q.path}` : q.base));
    compiled.set(rules, match);
  }
  return match(p);
}
