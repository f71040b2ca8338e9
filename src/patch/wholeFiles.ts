/**
 * Whole files in a model's answer: a fenced code block that names its path, what small models
 * write far more often than a diff. The path may be in the fence's info string (```python
 * tests/test_x.py, ```title="x.py"), on the block's first line as a comment (`# tests/test_x.py`,
 * `// test/a.test.js`), or on the line just before the fence (`**tests/test_x.py**`,
 * "Create `tests/test_x.py`:"), or alone on the block's first line (then it is not the file's text).
 * Pure.
 */
import { toLf } from './text.js';

export interface WholeFile {
  path: string;
  content: string;
}

export interface FencedBlock {
  /** The info string after the opening fence (language, maybe a path). */
  info: string;
  body: string;
  /** Up to two non-empty lines of prose before the fence. */
  before: string[];
}

/** A path with a directory or an extension, e.g. `tests/test_a.py`, `a.test.js`, `FooTest.java`. */
const PATH = /(?:^|[\s`*"'(:=])((?:[\w.-]+\/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5})(?=$|[\s`*"'),:])/g;
/** Words that look like file names and are not: versions, abbreviations. */
const NOT_A_PATH = /^(e\.g|i\.e|etc|vs|v?\d+(\.\d+)*)$/i;

/** An HTML-style code block's opening line, alone: `<code>`, `<code class="language-go">`. */
const TAG_OPEN = /^\s*<code(?:\s+(?:class|lang(?:uage)?)=["']?(?:language-)?([\w+#-]+)["']?)?\s*>\s*$/i;

/** Every fenced block (``` or ~~~, or <code> … </code>), with the lines before it. */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = toLf(text).split('\n');
  const out: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const tag = TAG_OPEN.exec(lines[i]!);
    if (tag) {
      // <code> … </code>, as small models also write a file (Qwen2.5-Coder 1.5B, a Go test).
      let j = i + 1;
      while (j < lines.length && !/^\s*<\/code>\s*$/i.test(lines[j]!)) j++;
      const before = lines.slice(Math.max(0, i - 3), i).filter((l) => l.trim()).slice(-2);
      if (j < lines.length) out.push({ info: tag[1] ?? '', body: lines.slice(i + 1, j).join('\n'), before });
      i = j;
      continue;
    }
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(lines[j]!)) j++;
    const before = lines.slice(Math.max(0, i - 3), i).filter((l) => l.trim()).slice(-2);
    out.push({ info: open[2]!.trim(), body: lines.slice(i + 1, j).join('\n'), before });
    i = j;
  }
  return out;
}

function pathsIn(line: string): string[] {
  return [...line.matchAll(PATH)].map((m) => m[1]!.replace(/^\.\//, '')).filter((p) => !NOT_A_PATH.test(p));
}

/** A block whose first line is a path alone and whose code follows (`tests/test_x.py` then the file). */
function barePath(block: FencedBlock): string | undefined {
  const nl = block.body.indexOf('\n');
  const first = nl < 0 ? '' : block.body.slice(0, nl).trim();
  if (!first || /\s/.test(first) || !block.body.slice(nl + 1).trim()) return undefined;
  const paths = pathsIn(` ${first} `);
  return paths.length === 1 && paths[0] === first.replace(/^\.\//, '') ? paths[0] : undefined;
}

/** The path a block names for itself, or undefined. */
export function namedPath(block: FencedBlock): string | undefined {
  const info = /title=["']?([^"'\s]+)/.exec(block.info)?.[1] ?? pathsIn(block.info).find((p) => p.includes('/') || /\.\w+$/.test(p));
  if (info) return info;
  const first = block.body.split('\n', 1)[0] ?? '';
  const bare = barePath(block);
  if (bare) return bare;
  const comment = /^\s*(?:#|\/\/|--|\/\*|<!--)\s*(?:(?:file(?:name)?|path)\s*:\s*)?(\S+)\s*(?:\*\/|-->)?\s*$/i.exec(first);
  if (comment && pathsIn(` ${comment[1]!} `).length) return pathsIn(` ${comment[1]!} `)[0];
  const prose = block.before[block.before.length - 1] ?? '';
  // A line that names one path (a heading, "File: x", "Create `x`:"); a sentence naming several is not a label.
  const named = pathsIn(prose);
  return named.length === 1 && prose.length <= 160 ? named[0] : undefined;
}

/** The whole files an answer gives: its fenced blocks that name a path (a later block for the same path wins). */
export function parseWholeFiles(text: string): WholeFile[] {
  const byPath = new Map<string, string>();
  for (const b of fencedBlocks(text)) {
    const path = namedPath(b);
    // A bare path on the first line is a label, not the file's text.
    const body = barePath(b) ? b.body.slice(b.body.indexOf('\n') + 1) : b.body;
    if (path && body.trim()) byPath.set(path, body.endsWith('\n') ? body : `${body}\n`);
  }
  return [...byPath].map(([path, content]) => ({ path, content }));
}
