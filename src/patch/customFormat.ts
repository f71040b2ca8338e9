/**
 * Tolerant parser for the custom diff format of the SWT-bench paper (App. A, Fig. 7):
 *
 *     diff
 *     <path>
 *     rewrite | insert
 *     <line number> | EOF | BOF
 *     <code>
 *     end diff
 *
 * Tolerates what models get wrong: prose and markdown fences around the blocks, a missing
 * `end diff`, CRLF, trailing whitespace, a missing location line, a one-line header
 * (`diff path rewrite 12`), decorated paths (`a/x.py`, backticks, `File: x.py`), and location
 * spellings such as `line 12`, `~12`, `12-20`, `end of file`.
 */
import { isBlank, toLf } from './text.js';

export type BlockMode = 'rewrite' | 'insert';
export type BlockLocation = { kind: 'line'; line: number } | { kind: 'EOF' } | { kind: 'BOF' } | { kind: 'none' };

export interface CustomBlock {
  path: string;
  mode: BlockMode;
  location: BlockLocation;
  /** The code, LF line endings, trailing whitespace stripped, surrounding blank lines removed. */
  code: string;
  /** 1-based line of the block's `diff` line in the model output, for messages. */
  sourceLine: number;
  /** Whether the block was closed by `end diff`. */
  terminated: boolean;
}

export interface CustomParse {
  blocks: CustomBlock[];
  warnings: string[];
  errors: string[];
}

const MODE_WORDS: Record<string, BlockMode> = {
  rewrite: 'rewrite',
  replace: 'rewrite',
  modify: 'rewrite',
  update: 'rewrite',
  insert: 'insert',
  add: 'insert',
  append: 'insert',
  create: 'insert',
};

const FENCE_RE = /^\s*(```+|~~~+)\s*([\w+-]*)\s*$/;
const DIFF_RE = /^\s*(?:[*#>]+\s*)?diff\s*:?\s*$/i;
const END_RE = /^\s*(?:[*#>]+\s*)?end\s*[-_ ]?diff\s*:?\s*$/i;
const ONE_LINE_HEADER_RE = /^\s*diff\s+(?!--git\b|-[a-z])(\S+)\s+(rewrite|replace|insert|add|append)\b\s*(.*)$/i;
const DIFF_PATH_RE = /^\s*diff\s+(?!--git\b|-[a-z])(\S+)\s*$/i;

/** Cleans a path line: backticks, quotes, `File:` labels, `a/` `b/` prefixes are removed by the caller. */
export function cleanPathLine(line: string): string {
  let p = line.trim();
  p = p.replace(/^(?:file(?:name)?|path)\s*:\s*/i, '');
  p = p.replace(/^[`'"*]+|[`'"*]+$/g, '');
  p = p.replace(/^<|>$/g, '');
  p = p.replace(/^\[start of |\]$/gi, '');
  return p.trim();
}

function parseMode(line: string): BlockMode | null {
  const w = line.trim().replace(/^[`'"*<]+|[`'"*>:]+$/g, '').toLowerCase();
  return MODE_WORDS[w] ?? null;
}

/** Parses a location line; null if the line is not one. */
export function parseLocation(line: string): BlockLocation | null {
  const t = line.trim().replace(/^[`'"*<]+|[`'"*>:]+$/g, '').trim();
  if (/^(eof|end(\s+of\s+file)?|end-of-file|bottom)$/i.test(t)) return { kind: 'EOF' };
  if (/^(bof|beginning(\s+of\s+file)?|start(\s+of\s+file)?|beginning-of-file|top)$/i.test(t)) return { kind: 'BOF' };
  const m = /^(?:(?:at\s+)?(?:line|ln|l\.?)\s*:?\s*)?[~≈]?\s*(\d+)(?:\s*(?:-|–|to|:)\s*\d+)?$/i.exec(t);
  if (m) return { kind: 'line', line: Number(m[1]) };
  return null;
}

function isHeaderStart(lines: string[], i: number): boolean {
  if (ONE_LINE_HEADER_RE.test(lines[i])) return true;
  if (DIFF_PATH_RE.test(lines[i])) {
    const next = nextNonBlank(lines, i + 1);
    return next >= 0 && parseMode(lines[next]) !== null;
  }
  if (!DIFF_RE.test(lines[i])) return false;
  const p = nextNonBlank(lines, i + 1);
  if (p < 0 || parseMode(lines[p]) !== null) return false;
  const m = nextNonBlank(lines, p + 1);
  return m >= 0 && parseMode(lines[m]) !== null;
}

function nextNonBlank(lines: string[], i: number): number {
  for (let j = i; j < lines.length && j < i + 3; j++) if (!isBlank(lines[j])) return j;
  return -1;
}

/** Whether the text contains at least one custom-format block header. */
export function looksLikeCustom(text: string): boolean {
  const lines = toLf(text).split('\n');
  for (let i = 0; i < lines.length; i++) if (isHeaderStart(lines, i)) return true;
  return false;
}

export function parseCustomDiff(text: string): CustomParse {
  const lines = toLf(text).split('\n');
  const blocks: CustomBlock[] = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  let inFence = false;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE_RE.exec(line);
    if (fence) {
      inFence = !inFence;
      i++;
      continue;
    }
    if (!isHeaderStart(lines, i)) {
      i++;
      continue;
    }
    const sourceLine = i + 1;
    const head = readHeader(lines, i, sourceLine, warnings);
    const { path, mode, location } = head;
    const body = readCode(lines, head.next, inFence);
    i = body.next;
    inFence = body.inFence;
    const { code, terminated } = body;
    if (!terminated) warnings.push(`block at line ${sourceLine} (${path}): missing "end diff"; block ends at ${i >= lines.length ? 'end of output' : `line ${i}`}`);
    const cleaned = code.map((l) => l.replace(/[ \t]+$/, ''));
    while (cleaned.length > 0 && cleaned[0] === '') cleaned.shift();
    while (cleaned.length > 0 && cleaned[cleaned.length - 1] === '') cleaned.pop();
    if (!path) {
      errors.push(`PATCH_MALFORMED: block at line ${sourceLine}: no file path`);
      continue;
    }
    if (!mode) {
      errors.push(`PATCH_MALFORMED: block at line ${sourceLine} (${path}): expected "rewrite" or "insert"`);
      continue;
    }
    if (cleaned.length === 0) {
      errors.push(`PATCH_MALFORMED: block at line ${sourceLine} (${path}): no code`);
      continue;
    }
    blocks.push({ path, mode, location, code: cleaned.join('\n'), sourceLine, terminated });
  }
  return { blocks, warnings, errors };
}

/** A block's header: its path, mode and location (on the header line or the next non-blank one), and where its code starts. */
function readHeader(lines: string[], start: number, sourceLine: number, warnings: string[]): { path: string; mode: BlockMode | null; location: BlockLocation; next: number } {
  let i = start;
  const line = lines[i];
  let path = '';
  let mode: BlockMode | null = null;
  let location: BlockLocation | null = null;
  const one = ONE_LINE_HEADER_RE.exec(line);
  const diffPath = DIFF_PATH_RE.exec(line);
  if (one) {
    path = cleanPathLine(one[1]);
    mode = parseMode(one[2]);
    location = one[3].trim() ? parseLocation(one[3]) : null;
    i++;
  } else if (diffPath) {
    path = cleanPathLine(diffPath[1]);
    const m = nextNonBlank(lines, i + 1);
    mode = parseMode(lines[m]);
    i = m + 1;
  } else {
    const p = nextNonBlank(lines, i + 1);
    path = cleanPathLine(lines[p]);
    const m = nextNonBlank(lines, p + 1);
    mode = parseMode(lines[m]);
    i = m + 1;
  }
  // No location on the header: it is on the next non-blank line, or missing.
  if (!location) {
    const n = nextNonBlank(lines, i);
    const loc = n >= 0 ? parseLocation(lines[n]) : null;
    if (loc) {
      location = loc;
      i = n + 1;
    } else {
      location = { kind: 'none' };
      warnings.push(`block at line ${sourceLine} (${path}): no line number, EOF or BOF; ${mode === 'insert' ? 'inserting at EOF' : 'locating by name only'}`);
    }
  }
  return { path, mode, location, next: i };
}

/** A block's code: to `end diff`, the next block header, or the closing fence of the fence the block is in. */
function readCode(lines: string[], start: number, enclosingFence: boolean): { code: string[]; terminated: boolean; next: number; inFence: boolean } {
  let i = start;
  let inFence = enclosingFence;
const code: string[] = [];
  let terminated = false;
  let codeFence = false;
  for (; i < lines.length; i++) {
    const l = lines[i];
    if (END_RE.test(l)) {
      terminated = true;
      i++;
      break;
    }
    if (isHeaderStart(lines, i)) break;
    const f = FENCE_RE.exec(l);
    if (f) {
      // A fence opened inside the code (```python) is the model wrapping the code itself.
      if (!codeFence && code.every(isBlank) && f[2] !== '') {
        codeFence = true;
        continue;
      }
      if (codeFence) {
        codeFence = false;
        continue;
      }
      if (inFence) {
        // Closing fence of the enclosing block: the block ends here.
        inFence = false;
        i++;
        break;
      }
      // A bare fence outside any fence: treat as the end too (model opened a fence after prose).
      i++;
      break;
    }
    code.push(l);
  }
  return { code, terminated, next: i, inFence };
}
