import { z } from 'zod';
import { SwtError } from '../util/errors.js';

/** SWE-bench lists arrive either as JSON arrays or as JSON-encoded strings of arrays. */
const testList = z.union([z.array(z.string()), z.string()]).transform((v, ctx) => {
  if (Array.isArray(v)) return v;
  if (v.trim() === '') return [];
  try {
    const parsed = JSON.parse(v);
    if (Array.isArray(parsed) && parsed.every((x) => typeof x === 'string')) return parsed as string[];
  } catch {
    // some dumps use Python's repr with single quotes
    try {
      const parsed = JSON.parse(v.replace(/'/g, '"'));
      if (Array.isArray(parsed)) return parsed.map(String);
    } catch {
      /* fall through */
    }
  }
  ctx.addIssue({ code: 'custom', message: 'expected a list of test names or a JSON string of one' });
  return z.NEVER;
});

export const instanceSchema = z.object({
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'expected owner/name'),
  base_commit: z.string().min(4),
  patch: z.string().default(''),
  test_patch: z.string().default(''),
  problem_statement: z.string().default(''),
  FAIL_TO_PASS: testList.default([]),
  PASS_TO_PASS: testList.default([]),
  image: z.string().optional(),
  install: z.string().optional(),
  test_cmd: z.string().optional(),
  fix_commit: z.union([z.string(), z.array(z.string())]).optional(),
  incorrect_patch: z.string().optional(),
});
export type Instance = z.infer<typeof instanceSchema>;

export const predictionSchema = z.object({
  instance_id: z.string().min(1),
  model_patch: z.string().nullable().transform((v) => v ?? ''),
  model_name_or_path: z.string().optional(),
});
export type Prediction = z.infer<typeof predictionSchema>;

/** Parses JSONL; a broken line is an error naming the file and line, never silently dropped. */
export function parseJsonl<T>(text: string, schema: z.ZodType<T>, source: string): T[] {
  const out: T[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      throw new SwtError('BAD_INPUT', `${source}:${i + 1}: not valid JSON (${(e as Error).message})`);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SwtError('BAD_INPUT', `${source}:${i + 1}: ${issue.path.join('.') || 'line'}: ${issue.message}`);
    }
    out.push(parsed.data);
  });
  return out;
}

export function parseInstances(text: string, source = 'instances'): Instance[] {
  const instances = parseJsonl(text, instanceSchema, source);
  const seen = new Set<string>();
  for (const inst of instances) {
    if (seen.has(inst.instance_id)) throw new SwtError('BAD_INPUT', `${source}: duplicate instance_id ${inst.instance_id}`);
    seen.add(inst.instance_id);
  }
  return instances;
}

/**
 * SWT-bench / SWE-bench predictions (`instance_id`, `model_name_or_path`, `model_patch`), as they
 * are shipped: JSONL, a JSON array of the same objects, or a JSON object keyed by instance_id.
 */
export function parsePredictions(text: string, source = 'predictions'): Map<string, Prediction> {
  const rows = /^\s*[[{]/.test(text) && !looksLikeJsonl(text) ? parseJsonDocument(text, source) : parseJsonl(text, predictionSchema, source);
  const out = new Map<string, Prediction>();
  for (const p of rows) {
    if (out.has(p.instance_id)) throw new SwtError('BAD_INPUT', `${source}: two predictions for ${p.instance_id}`);
    out.set(p.instance_id, p);
  }
  return out;
}

/** A first line that is a whole JSON object: JSONL (a one-line JSON document is read the same way). */
function looksLikeJsonl(text: string): boolean {
  const first = text.trimStart().split(/\r?\n/, 1)[0]!;
  try {
    const v = JSON.parse(first);
    return v !== null && typeof v === 'object' && !Array.isArray(v) && 'instance_id' in v;
  } catch {
    return false;
  }
}

function parseJsonDocument(text: string, source: string): Prediction[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new SwtError('BAD_INPUT', `${source}: not valid JSON or JSONL (${(e as Error).message})`);
  }
  const items: Array<[string, unknown]> = Array.isArray(raw)
    ? raw.map((v, i) => [`[${i}]`, v])
    : Object.entries(raw as Record<string, unknown>).map(([id, v]) => [id, v && typeof v === 'object' && !('instance_id' in v) ? { ...v, instance_id: id } : v]);
  return items.map(([where, v]) => {
    const parsed = predictionSchema.safeParse(v);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SwtError('BAD_INPUT', `${source}${where.startsWith('[') ? where : `.${where}`}: ${issue.path.join('.') || 'entry'}: ${issue.message}`);
    }
    return parsed.data;
  });
}

/** `<repos>/<owner>__<name>`, the SWE-bench layout. */
export function repoDirName(repo: string): string {
  return repo.replace('/', '__');
}
