/**
 * The agent's tools (SWE-agent+ style ACI, adapted): they execute inside the sandbox session on
 * the repository at base. Paths are confined to the repository; writes only to test files;
 * every output is trimmed and scrubbed of secrets before the model sees it.
 */
import type { RunResult } from '../results/types.js';
import { applyModelPatchToFiles } from '../patch/index.js';
import type { SandboxSession } from '../sandbox/types.js';
import { redact } from '../util/secrets.js';
import { isTestFile, isTestPath } from '../harness/testFiles.js';
import { tryConfineRepoPath } from '../util/repoPath.js';
import { shellQuote as shq } from '../util/shell.js';
import type { ToolCall, ToolSpec } from './llmTypes.js';
import type { IssueInput, Workbench } from './types.js';
import { classifyFailure, reportedFailure } from './verify.js';
import { testPartOf } from './candidate.js';

export const AGENT_TOOLS: ToolSpec[] = [
  {
    name: 'list_files',
    description: 'List files and directories under a directory of the repository (default: the root), to a depth (default 2).',
    parameters: { type: 'object', properties: { path: { type: 'string' }, depth: { type: 'integer', minimum: 1, maximum: 6 } } },
  },
  {
    name: 'find_files',
    description: 'Find files whose name matches a shell glob (e.g. "*parse*.py"), under a directory (default: the root).',
    parameters: { type: 'object', properties: { pattern: { type: 'string' }, path: { type: 'string' } }, required: ['pattern'] },
  },
  {
    name: 'grep',
    description: 'Search file contents for an extended regular expression; returns file:line:text matches (at most 100).',
    parameters: {
      type: 'object',
      properties: { pattern: { type: 'string' }, path: { type: 'string', description: 'file or directory, default the root' }, include: { type: 'string', description: 'glob of file names, e.g. "*.py"' } },
      required: ['pattern'],
    },
  },
  {
    name: 'read_file',
    description: 'Read lines of a file, numbered (default lines 1-200; at most 400 lines per call).',
    parameters: { type: 'object', properties: { path: { type: 'string' }, start_line: { type: 'integer', minimum: 1 }, end_line: { type: 'integer', minimum: 1 } }, required: ['path'] },
  },
  {
    name: 'write_file',
    description: 'Create or replace a whole test file with the given content.',
    parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  },
  {
    name: 'edit_file',
    description: 'In a test file, replace one exact occurrence of old_text with new_text.',
    parameters: { type: 'object', properties: { path: { type: 'string' }, old_text: { type: 'string' }, new_text: { type: 'string' } }, required: ['path', 'old_text', 'new_text'] },
  },
  {
    name: 'apply_custom_diff',
    description:
      'Edit test files with the custom diff format: blocks of "diff\\n<path>\\n<rewrite|insert>\\n<line number|EOF|BOF>\\n<whole function>\\nend diff" (a unified diff is accepted too).',
    parameters: { type: 'object', properties: { diff: { type: 'string' } }, required: ['diff'] },
  },
  {
    name: 'run_tests',
    description: "Run the named test files (only those) on the repository with your changes, and report each test's outcome, why it failed, and the trimmed output.",
    parameters: { type: 'object', properties: { files: { type: 'array', items: { type: 'string' }, minItems: 1 } }, required: ['files'] },
  },
  {
    name: 'submit',
    description: 'Submit the test files you wrote. They are then verified: they must fail on the current code because of the issue.',
    parameters: { type: 'object', properties: {} },
  },
];

export const AGENT_TOOL_NAMES = AGENT_TOOLS.map((t) => t.name);

/** Keeps the head and the tail of long text, saying how much was cut. */
export function trimOutput(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.floor(maxChars * 0.4);
  const tail = maxChars - head;
  return `${text.slice(0, head)}\n[… ${text.length - maxChars} characters elided …]\n${text.slice(text.length - tail)}`;
}

const PRUNE = `\\( -name .git -o -name node_modules -o -name __pycache__ -o -name .venv -o -name .tox -o -name dist -o -name build -o -name .pytest_cache \\) -prune -o`;

export interface AgentToolContext {
  session: SandboxSession;
  workbench: Workbench;
  issue: IssueInput;
  secrets: string[];
  maxOutputChars: number;
}

export interface ToolOutcome {
  output: string;
  submitted?: boolean;
  /** Files the call changed. */
  wrote?: string[];
}

class ToolError extends Error {}

function str(args: Record<string, unknown>, key: string, required = true): string | undefined {
  const v = args[key];
  if (v === undefined || v === null || v === '') {
    if (required) throw new ToolError(`missing argument "${key}"`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ToolError(`argument "${key}" must be a string`);
  return v;
}

function int(args: Record<string, unknown>, key: string): number | undefined {
  const v = args[key];
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new ToolError(`argument "${key}" must be an integer`);
  return Math.floor(n);
}

function repoPath(p: string | undefined, fallback = '.'): string {
  const c = tryConfineRepoPath(p ?? fallback, { directory: true });
  if (c === undefined) throw new ToolError(`path outside the repository: ${p}`);
  return c;
}

function writablePath(p: string | undefined): string {
  const c = repoPath(p);
  if (c === '.' || !isTestPath(c)) {
    throw new ToolError(`only test files may be written (e.g. tests/test_*.py, *_test.py, *.test.js, files under a tests/ directory); "${c}" is not one. Do not modify the code under test.`);
  }
  return c;
}

async function readOrNull(session: SandboxSession, path: string): Promise<string | null> {
  try {
    return await session.readFile(path);
  } catch {
    return null;
  }
}

/** Human-readable results of a parsed run, with the verification's view of each failure. */
export function formatRun(run: RunResult, issue: IssueInput, maxChars: number): string {
  const facts = reportedFailure(issue);
  const lines: string[] = [];
  const failed = run.tests.filter((t) => t.outcome === 'failed');
  const passed = run.tests.filter((t) => t.outcome === 'passed');
  lines.push(`${run.tests.length} test(s): ${passed.length} passed, ${failed.length} failed, ${run.tests.length - passed.length - failed.length} skipped${run.timedOut ? '; the run TIMED OUT' : ''}; exit code ${run.exitCode}`);
  for (const fe of run.fileErrors) {
    lines.push(`FILE ERROR ${fe.file} (${fe.kind}): ${fe.message.split('\n').slice(0, 6).join('\n  ')}`);
  }
  for (const t of run.tests) {
    if (t.outcome !== 'failed') {
      lines.push(`${t.outcome.toUpperCase()} ${t.id}`);
      continue;
    }
    const c = classifyFailure(t, facts);
    const verdict =
      c.kind === 'assertion' ? 'assertion failure: counts as reproducing if it is about the issue'
      : c.kind === 'issue-exception' ? `raises ${c.exception}, an exception the issue reports: counts as reproducing`
      : c.kind === 'own-error' ? `the test's own ${c.exception ?? 'error'}: does NOT count; fix the test`
      : c.kind === 'timeout' ? 'timed out'
      : `raises ${c.exception ?? 'an exception'} the issue does not mention: does not count`;
    lines.push(`FAILED ${t.id} [${verdict}]\n  ${(t.message ?? '').split('\n').slice(0, 8).join('\n  ')}`);
  }
  const summary = lines.join('\n');
  const room = Math.max(1000, maxChars - summary.length - 40);
  return `${summary}\n--- output (trimmed) ---\n${trimOutput(run.output.trim(), room)}`;
}

async function listFiles(ctx: AgentToolContext, args: Record<string, unknown>): Promise<string> {
  const path = repoPath(str(args, 'path', false));
  const depth = Math.min(6, Math.max(1, int(args, 'depth') ?? 2));
  const r = await ctx.session.exec(`find ${shq(path)} -mindepth 1 -maxdepth ${depth} ${PRUNE} \\( -type d -printf '%p/\\n' -o -print \\) | sed 's#^\\./##' | sort | head -n 400`, { timeoutMs: 30_000 });
  const out = r.output.trim();
  return out ? out : r.exitCode === 0 ? '(empty)' : `error: ${out || 'no such directory'}`;
}

async function findFiles(ctx: AgentToolContext, args: Record<string, unknown>): Promise<string> {
  const pattern = str(args, 'pattern')!;
  const path = repoPath(str(args, 'path', false));
  const r = await ctx.session.exec(`find ${shq(path)} ${PRUNE} -type f -name ${shq(pattern)} -print | sed 's#^\\./##' | sort | head -n 200`, { timeoutMs: 30_000 });
  return r.output.trim() || `no file matches ${pattern}`;
}

async function grep(ctx: AgentToolContext, args: Record<string, unknown>): Promise<string> {
  const pattern = str(args, 'pattern')!;
  const path = repoPath(str(args, 'path', false));
  const include = str(args, 'include', false);
  const r = await ctx.session.exec(
    `grep -rnIE --exclude-dir=.git --exclude-dir=node_modules --exclude-dir=__pycache__ --exclude-dir=.venv ${include ? `--include=${shq(include)} ` : ''}-e ${shq(pattern)} ${shq(path)} | sed 's#^\\./##' | cut -c1-300 | head -n 100`,
    { timeoutMs: 30_000 },
  );
  return r.output.trim() || `no match for /${pattern}/`;
}

/** What read_file takes from a file: its first 1 MiB (a line range past it is not shown). */
export const READ_FILE_MAX_BYTES = 1024 ** 2;

async function readFileTool(ctx: AgentToolContext, args: Record<string, unknown>): Promise<string> {
  const path = repoPath(str(args, 'path'));
  const head = await ctx.session.readFileHead(path, READ_FILE_MAX_BYTES).catch(() => null);
  if (head === null) throw new ToolError(`no such file: ${path}`);
  const lines = head.text.split('\n');
  // A cut file's last line is partial: left out.
  if (head.cut || lines[lines.length - 1] === '') lines.pop();
  const cutNote = head.cut ? `; the file is ${head.bytes} bytes, only its first ${READ_FILE_MAX_BYTES / 1024 ** 2} MiB (${lines.length} lines) was read: the rest is cut` : '';
  const start = Math.max(1, int(args, 'start_line') ?? 1);
  let end = Math.min(lines.length, int(args, 'end_line') ?? start + 199);
  if (end - start + 1 > 400) end = start + 399;
  if (start > lines.length) return `${path} has ${lines.length} lines; line ${start} is past the end${cutNote}`;
  const body = lines
    .slice(start - 1, end)
    .map((l, i) => `${start + i} ${l.length > 500 ? l.slice(0, 500) + ' …' : l}`)
    .join('\n');
  return `[${path}, lines ${start}-${end} of ${head.cut ? 'at least ' : ''}${lines.length}${cutNote}]\n${body}`;
}

async function writeFileTool(ctx: AgentToolContext, args: Record<string, unknown>): Promise<ToolOutcome> {
  const path = writablePath(str(args, 'path'));
  const content = typeof args.content === 'string' ? args.content : undefined;
  if (content === undefined) throw new ToolError('missing argument "content"');
  await ctx.session.writeFile(path, content.endsWith('\n') ? content : content + '\n');
  return { output: `wrote ${path} (${content.split('\n').length} lines)`, wrote: [path] };
}

async function editFileTool(ctx: AgentToolContext, args: Record<string, unknown>): Promise<ToolOutcome> {
  const path = writablePath(str(args, 'path'));
  const oldText = typeof args.old_text === 'string' ? args.old_text : undefined;
  const newText = typeof args.new_text === 'string' ? args.new_text : undefined;
  if (!oldText || newText === undefined) throw new ToolError('edit_file needs old_text (non-empty) and new_text');
  const text = await readOrNull(ctx.session, path);
  if (text === null) throw new ToolError(`no such file: ${path} (use write_file to create it)`);
  const count = text.split(oldText).length - 1;
  if (count === 0) throw new ToolError(`old_text does not occur in ${path}; read the file and copy the text exactly`);
  if (count > 1) throw new ToolError(`old_text occurs ${count} times in ${path}; include more context so it is unique`);
  await ctx.session.writeFile(path, text.replace(oldText, () => newText));
  return { output: `edited ${path}`, wrote: [path] };
}

/**
 * The custom diff (or a unified diff) is applied by the patch layer to the session's current
 * files, so it can follow earlier edits; the results are written back into the session.
 */
async function applyCustomDiffTool(ctx: AgentToolContext, args: Record<string, unknown>): Promise<ToolOutcome> {
  const text = str(args, 'diff')!;
  const cache = new Map<string, string | null>();
  let app: Awaited<ReturnType<typeof applyModelPatchToFiles>> | undefined;
  // The applier reads synchronously: read what it asks for from the session, then apply again.
  for (let round = 0; round < 4; round++) {
    const missing = new Set<string>();
    const attempt = await applyModelPatchToFiles(
      text,
      (p) => {
        if (cache.has(p)) return cache.get(p)!;
        missing.add(p);
        return null;
      },
      { checkPath: (p) => void writablePath(p) },
    );
    if (!missing.size) {
      app = attempt;
      break;
    }
    for (const p of missing) cache.set(p, tryConfineRepoPath(p) === undefined ? null : await readOrNull(ctx.session, tryConfineRepoPath(p)!));
  }
  if (!app) throw new ToolError('the diff touches too many files');
  if (!app.applied) throw new ToolError(`the diff does not apply: ${app.errors.join('; ') || 'unknown reason'}`);
  const wrote: string[] = [];
  for (const c of app.changes) {
    const path = writablePath(c.path);
    if (c.after === null) throw new ToolError(`the diff deletes ${path}; deleting files is not allowed`);
    await ctx.session.writeFile(path, c.after);
    wrote.push(path);
  }
  const warn = app.warnings.length ? `\nwarnings: ${app.warnings.join('; ')}` : '';
  return { output: `applied to ${wrote.join(', ')}${warn}\n${trimOutput(app.diff, 4000)}`, wrote };
}

async function runTestsTool(ctx: AgentToolContext, args: Record<string, unknown>): Promise<string> {
  const raw = args.files;
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(/[\s,]+/).filter(Boolean) : undefined;
  if (!list?.length || list.some((f) => typeof f !== 'string')) throw new ToolError('files must be a non-empty list of test file paths');
  const files = (list as string[]).map((f) => repoPath(f.split('::')[0]));
  for (const f of files) if ((await readOrNull(ctx.session, f)) === null) throw new ToolError(`no such file: ${f}`);
  // Files the agent wrote run exactly as verification will run them: on base plus the test patch.
  const { files: patched } = testPartOf(await ctx.session.diff());
  const patchedPaths = patched.filter((f) => isTestFile(f.path)).map((f) => f.path);
  if (files.every((f) => patchedPaths.includes(f))) {
    const restricted = patched.filter((f) => files.includes(f.path) || !isTestFile(f.path));
    const run = await ctx.workbench.runTests(restricted.map((f) => f.text).join(''));
    return formatRun(run, ctx.issue, ctx.maxOutputChars);
  }
  const cmd = ctx.workbench.testCommand.includes('{files}') ? ctx.workbench.testCommand.replace('{files}', files.map(shq).join(' ')) : `${ctx.workbench.testCommand} ${files.map(shq).join(' ')}`;
  const r = await ctx.session.exec(cmd, { timeoutMs: 300_000 });
  return `exit code ${r.exitCode}${r.timedOut ? ' (TIMED OUT)' : ''}\n${trimOutput(r.output.trim(), ctx.maxOutputChars)}`;
}

type ToolRunner = (ctx: AgentToolContext, args: Record<string, unknown>) => Promise<ToolOutcome>;
const output = (read: (ctx: AgentToolContext, args: Record<string, unknown>) => Promise<string>): ToolRunner => async (ctx, args) => ({ output: await read(ctx, args) });

/** Each tool by name; those that only read answer with their output. */
const TOOL_RUNNERS: Record<string, ToolRunner> = {
  list_files: output(listFiles),
  find_files: output(findFiles),
  grep: output(grep),
  read_file: output(readFileTool),
  write_file: writeFileTool,
  edit_file: editFileTool,
  apply_custom_diff: applyCustomDiffTool,
  run_tests: output(runTestsTool),
  submit: async () => ({ output: 'submitted', submitted: true }),
};

/** Runs one tool call; never throws for the model's mistakes (they come back as the result). */
export async function executeTool(call: ToolCall, ctx: AgentToolContext): Promise<ToolOutcome> {
  let outcome: ToolOutcome;
  try {
    if (call.parseError) throw new ToolError(`${call.parseError}. Call ${call.name} again with a valid JSON object of arguments.`);
    const tool = Object.hasOwn(TOOL_RUNNERS, call.name) ? TOOL_RUNNERS[call.name] : undefined;
    if (!tool) throw new ToolError(`unknown tool "${call.name}"; the tools are: ${AGENT_TOOL_NAMES.join(', ')}`);
    outcome = await tool(ctx, call.arguments);
  } catch (e) {
    if (e instanceof ToolError) outcome = { output: `error: ${e.message}` };
    else outcome = { output: `error: the tool failed: ${(e as Error).message ?? String(e)}` };
  }
  return { ...outcome, output: redact(trimOutput(outcome.output, ctx.maxOutputChars), ctx.secrets) };
}
