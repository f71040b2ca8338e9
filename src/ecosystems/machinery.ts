/**
 * What the ecosystems' dependency-manifest and test-machinery rules share: a file whose part
 * (a pyproject's `[tool.pytest]`) changed, the configs to read beside the changed paths.
 * When a part cannot be read (a file that does not parse), the whole change counts. Pure.
 */
import { parse as parseToml } from 'smol-toml';
import type { MachineryTexts } from './types.js';

/** The same value, compared as JSON (undefined and a missing key alike). */
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Whether `part` of `path`'s text differs between base and head; a side that does not parse counts as changed. */
export function partChanged(path: string, texts: MachineryTexts, part: (text: string) => unknown): boolean {
  const read = (text: string | undefined): { ok: boolean; value?: unknown } => {
    if (text === undefined) return { ok: true };
    try {
      return { ok: true, value: part(text) };
    } catch {
      return { ok: false };
    }
  };
  const [b, h] = [read(texts.base[path]), read(texts.head[path])];
  return !b.ok || !h.ok || !same(b.value, h.value);
}

/** A TOML file's values at these dotted keys (`tool.pytest`), for `partChanged`. */
export function tomlPart(keys: readonly string[]): (text: string) => unknown {
  return (text) => {
    const doc = parseToml(text) as Record<string, unknown>;
    return keys.map((k) => k.split('.').reduce<unknown>((v, seg) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[seg] : undefined), doc));
  };
}

/** A JSON file's values at these top-level keys, for `partChanged` (JSON5 is not needed: package.json and composer.json are JSON). */
export function jsonPart(pick: (doc: any) => unknown): (text: string) => unknown {
  return (text) => pick(JSON.parse(text));
}

/** An INI file's sections of these names (`tool:pytest`), as their trimmed lines, for `partChanged`. */
export function iniSections(names: readonly string[]): (text: string) => unknown {
  return (text) => {
    const out: Record<string, string[]> = {};
    let current: string | undefined;
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim();
      const header = /^\[([^\]]+)\]/.exec(line);
      if (header) current = names.includes(header[1]!.trim()) ? header[1]!.trim() : undefined;
      else if (current && line && !/^[#;]/.test(line)) (out[current] ??= []).push(line);
    }
    return out;
  };
}

/** `package.json` (or another name) in the directory of each changed path and every directory above it. */
export function inAncestors(changed: readonly string[], name: string): string[] {
  const out = new Set<string>([name]);
  for (const f of changed) {
    const segs = f.split('/').slice(0, -1);
    for (let i = 1; i <= segs.length; i++) out.add(`${segs.slice(0, i).join('/')}/${name}`);
  }
  return [...out];
}

/** Root file names of `stems` × `exts` (`jest.config` × `js`, `ts`, …). */
export function named(stems: readonly string[], exts: readonly string[]): string[] {
  return stems.flatMap((s) => exts.map((e) => `${s}.${e}`));
}
