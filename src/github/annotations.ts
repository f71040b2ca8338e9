/** Check-run annotations: each test that fails on the head, marked on the line of the test patch that defines it. */
import { parsePatch } from 'diff';
import { fileOfId } from '../harness/classify.js';
import { diffPath } from '../patch/fileNames.js';
import type { TestTransition, Verdict } from '../results/types.js';
import type { Annotation } from './types.js';

/** GitHub takes at most this many annotations per check-run request. */
export const ANNOTATIONS_PER_REQUEST = 50;

const ARROW = { F2P: 'F→P', P2F: 'P→F', F2F: 'F→F', P2P: 'P→P' } as const;

/** One annotation per test that fails on the head, on the line where the test patch defines it. */
export function annotationsFor(v: Verdict, testPatch: string): Annotation[] {
  const added = addedLines(testPatch);
  return v.tests
    .filter((t) => t.head === 'fail' && !t.preexisting)
    .map((t) => {
      const path = fileOfId(t.id);
      const line = testLine(t, added.get(path) ?? []);
      const failure = t.headFailure;
      return {
        path,
        start_line: line,
        end_line: line,
        annotation_level: t.flaky ? ('warning' as const) : ('failure' as const),
        title: `${ARROW[t.transition]}${t.flaky ? ' (flaky)' : ''}: ${leafName(t.id)}`.slice(0, 255),
        message: (failure ? `${failure.kind}${failure.message ? `: ${failure.message}` : ''}` : 'fails on the head').slice(0, 4000),
      };
    });
}

/** Annotations in requests of at most 50. */
export function batches<T>(items: readonly T[], size = ANNOTATIONS_PER_REQUEST): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function leafName(id: string): string {
  const parts = id.split(/::| > /);
  return parts[parts.length - 1]!.replace(/\[.*\]$/, '');
}

function addedLines(testPatch: string): Map<string, Array<{ line: number; text: string }>> {
  const out = new Map<string, Array<{ line: number; text: string }>>();
  let files;
  try {
    files = parsePatch(testPatch);
  } catch {
    return out;
  }
  for (const f of files) {
    const path = diffPath(f.newFileName) ?? '';
    const lines: Array<{ line: number; text: string }> = [];
    for (const h of f.hunks) {
      let n = h.newStart;
      for (const l of h.lines) {
        if (l.startsWith('+')) lines.push({ line: n++, text: l.slice(1) });
        else if (l.startsWith(' ')) n++;
      }
    }
    out.set(path, lines);
  }
  return out;
}

function testLine(t: TestTransition, lines: Array<{ line: number; text: string }>): number {
  const name = leafName(t.id);
  const hit = lines.find((l) => l.text.includes(name));
  return hit?.line ?? lines[0]?.line ?? 1;
}
