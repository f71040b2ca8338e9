/**
 * Tool calling as plain text, for models and servers without native tool calls. The model writes
 *
 *   <tool_call>
 *   {"name": "read_file", "arguments": {"path": "src/a.py"}}
 *   </tool_call>
 *
 * (the Hermes/Qwen convention many open models already follow), and tool results come back in a
 * user message as `<tool_result name="…">…</tool_result>`. The parser is lenient: it also accepts
 * fenced ```tool_call / ```json blocks holding `{"name", "arguments"}` with a known tool name.
 */
import type { ChatMessage, ToolSpec } from './llmTypes.js';

export interface ParsedTextCall {
  name: string;
  arguments: Record<string, unknown>;
  rawArguments: string;
  parseError?: string;
}

export function textProtocolInstructions(tools: readonly ToolSpec[]): string {
  const lines = [
    'TOOLS',
    'You act by calling tools. To call a tool, end your reply with one block of exactly this form:',
    '<tool_call>',
    '{"name": "<tool name>", "arguments": {<arguments as JSON>}}',
    '</tool_call>',
    'Call one tool per reply and wait for its result, which comes back as <tool_result name="...">...</tool_result>.',
    'The arguments must be valid JSON (escape newlines in strings as \\n).',
    '',
    'Available tools:',
  ];
  for (const t of tools) {
    lines.push(`- ${t.name}: ${t.description}`);
    lines.push(`  arguments schema: ${JSON.stringify(t.parameters)}`);
  }
  return lines.join('\n');
}

/** Lenient JSON: strips code fences and trailing commas before giving up. */
export function parseJsonLenient(text: string): { value?: unknown; error?: string } {
  let t = text.trim();
  const fence = /^```[\w-]*\s*\n([\s\S]*?)\n?```$/.exec(t);
  if (fence) t = fence[1].trim();
  if (t === '') return { value: {} };
  try {
    return { value: JSON.parse(t) };
  } catch (e1) {
    try {
      return { value: JSON.parse(t.replace(/,\s*([}\]])/g, '$1')) };
    } catch {
      return { error: (e1 as Error).message };
    }
  }
}

/** Parses tool arguments: an object, or an error the agent reports back to the model. */
export function parseToolArguments(raw: string): { args: Record<string, unknown>; error?: string } {
  const r = parseJsonLenient(raw);
  if (r.error !== undefined) return { args: {}, error: `arguments are not valid JSON (${r.error})` };
  if (r.value === null || typeof r.value !== 'object' || Array.isArray(r.value)) {
    return { args: {}, error: 'arguments must be a JSON object' };
  }
  return { args: r.value as Record<string, unknown> };
}

const TAGGED = /<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g;
const FENCED = /```(?:tool_call|tool|json)\s*\n([\s\S]*?)\n?```/g;

function fromObjectText(body: string, known: ReadonlySet<string> | undefined, requireKnown: boolean): ParsedTextCall | undefined {
  const whole = parseJsonLenient(body);
  if (whole.error === undefined && whole.value && typeof whole.value === 'object' && !Array.isArray(whole.value)) {
    const o = whole.value as Record<string, unknown>;
    const name = typeof o.name === 'string' ? o.name : typeof o.tool === 'string' ? o.tool : undefined;
    if (!name || (requireKnown && known && !known.has(name))) return undefined;
    const a = o.arguments ?? o.parameters ?? o.args ?? {};
    if (typeof a === 'string') {
      const p = parseToolArguments(a);
      return { name, arguments: p.args, rawArguments: a, parseError: p.error };
    }
    if (a && typeof a === 'object' && !Array.isArray(a)) return { name, arguments: a as Record<string, unknown>, rawArguments: JSON.stringify(a) };
    return { name, arguments: {}, rawArguments: JSON.stringify(a), parseError: 'arguments must be a JSON object' };
  }
  if (requireKnown) return undefined;
  // Malformed JSON inside an explicit <tool_call>: recover the name so the error can be reported.
  const m = /"name"\s*:\s*"([^"]+)"/.exec(body);
  if (!m) return undefined;
  return { name: m[1], arguments: {}, rawArguments: body, parseError: `tool call is not valid JSON (${whole.error})` };
}

/** Tool calls written as text in a model's reply; [] when there are none. */
export function parseTextToolCalls(content: string, knownTools?: readonly string[]): ParsedTextCall[] {
  const known = knownTools ? new Set(knownTools) : undefined;
  const out: ParsedTextCall[] = [];
  for (const m of content.matchAll(TAGGED)) {
    const c = fromObjectText(m[1], known, false);
    if (c) out.push(c);
  }
  if (out.length) return out;
  for (const m of content.matchAll(FENCED)) {
    const c = fromObjectText(m[1], known, true);
    if (c) out.push(c);
  }
  return out;
}

/** The text before the first tool call: what the model "said". */
export function stripTextToolCalls(content: string): string {
  const i = content.search(/<tool_call>|```(?:tool_call|tool)\b/);
  return (i >= 0 ? content.slice(0, i) : content).trim();
}

/** A conversation in three roles only: what a model without native tool calls reads. */
export type PlainMessage = { role: 'system' | 'user' | 'assistant'; content: string };

/**
 * Our messages as plain text, each string passed through `scrub` (redaction): the tool instructions
 * join the first system message, tool calls become `<tool_call>` blocks in the assistant's text,
 * and tool results gather into one user message of `<tool_result>` blocks.
 */
export function plainTranscript(messages: readonly ChatMessage[], tools: readonly ToolSpec[] | undefined, scrub: (t: string) => string = (t) => t): PlainMessage[] {
  const out: PlainMessage[] = [];
  let msgs = [...messages];
  if (tools?.length) {
    const instr = textProtocolInstructions(tools);
    const firstSystem = msgs.findIndex((m) => m.role === 'system');
    if (firstSystem < 0) out.push({ role: 'system', content: instr });
    msgs = msgs.map((m, i) => (i === firstSystem ? { ...m, content: `${m.content}\n\n${instr}` } : m)) as ChatMessage[];
  }
  let results: string[] = [];
  const flush = () => {
    if (results.length) out.push({ role: 'user', content: results.join('\n\n') });
    results = [];
  };
  for (const m of msgs) {
    if (m.role === 'tool') {
      results.push(`<tool_result name="${m.name}">\n${scrub(m.content)}\n</tool_result>`);
      continue;
    }
    flush();
    if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((c) => `<tool_call>\n${JSON.stringify({ name: c.name, arguments: c.parseError ? c.rawArguments : c.arguments })}\n</tool_call>`);
      out.push({ role: 'assistant', content: scrub([stripTextToolCalls(m.content), ...calls].filter(Boolean).join('\n')) });
    } else out.push({ role: m.role, content: scrub(m.content) });
  }
  flush();
  return out;
}
