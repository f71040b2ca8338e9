/** RSpec's JSON formatter (`--format json`), RSpec 3.x. Pure. */
import { failureKindOf, firstLines, mergeDuplicates, normalizeRel, resolveFile, stripAnsi } from '../../results/formats/common.js';
import type { FileError, TestResult } from '../../results/types.js';
import type { OneReport, ReportContext } from '../types.js';

interface RspecExample {
  full_description?: string;
  description?: string;
  status?: string;
  file_path?: string;
  pending_message?: string | null;
  exception?: { class?: string; message?: string };
}

interface RspecReport {
  version?: string;
  messages?: string[];
  examples?: RspecExample[];
  summary?: { errors_outside_of_examples_count?: number };
}

/** "An error occurred while loading ./spec/x_spec.rb." (3.x) / "While loading ./spec/x_spec.rb a `raise SyntaxError` occurred" (3.13). */
const LOAD_ERROR = /(?:An error occurred while loading|While loading) (\S+?\.rb)\b/;

/** `spec/x_spec.rb > Outer inner does something`: the file, then RSpec's full description. */
export function rspecId(file: string, fullDescription: string): string {
  return `${file} > ${fullDescription}`;
}

export function parseRspecJson(content: string, ctx: ReportContext): OneReport {
  let doc: RspecReport;
  try {
    doc = JSON.parse(content) as RspecReport;
  } catch {
    throw new Error('not an RSpec JSON report (not JSON)');
  }
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.examples)) throw new Error('not an RSpec JSON report: no "examples"');

  const tests: TestResult[] = [];
  for (const ex of doc.examples) {
    const file = ex.file_path ? resolveFile(ex.file_path, ctx) : ctx.file ? normalizeRel(ctx.file) : '';
    const t: TestResult = { id: rspecId(file, ex.full_description ?? ex.description ?? ''), file, outcome: 'passed' };
    if (ex.status === 'failed') {
      const type = ex.exception?.class;
      const text = `${type ? `${type}: ` : ''}${stripAnsi(ex.exception?.message ?? '').trim()}`;
      t.outcome = 'failed';
      // RSpec's own expectation failures are assertions; anything else raised is an error.
      t.failureKind = type && /^RSpec::(Expectations|Mocks)::/.test(type) ? 'assertion' : failureKindOf(text, type);
      const m = firstLines(ex.exception?.message ?? text);
      if (m) t.message = m;
    } else if (ex.status === 'pending') {
      t.outcome = 'skipped';
      const m = firstLines(ex.pending_message ?? undefined, 2, 200);
      if (m) t.message = m;
    }
    tests.push(t);
  }

  const fileErrors: FileError[] = [];
  const errors: string[] = [];
  const outside = doc.summary?.errors_outside_of_examples_count ?? 0;
  if (outside > 0) {
    for (const msg of doc.messages ?? []) {
      const m = LOAD_ERROR.exec(msg);
      if (m) fileErrors.push({ file: resolveFile(m[1]!, ctx), kind: 'collection', message: firstLines(msg) ?? msg });
      else if (!/^No examples found\.?$/.test(msg.trim())) errors.push(firstLines(msg) ?? msg);
    }
    if (!fileErrors.length && !errors.length) errors.push(`${outside} error(s) occurred outside of examples`);
  }
  return { tests: mergeDuplicates(tests), fileErrors, complete: true, errors };
}
