/**
 * Prompt text. ZeroShotPlus (and LIBRO's samples) follow the SWT-bench paper's Figs. 12–13 with
 * its custom diff format (App. A); the agent prompt follows Fig. 14 (SWE-agent+), adapted to our
 * tools. Issue text and file contents are passed in; secrets are scrubbed by the LLM client.
 */
import type { IssueInput } from './types.js';
import type { FailureSite } from './verify.js';
import type { RetrievedFile } from './retrieval.js';

export function numbered(content: string): string {
  const lines = content.replace(/\n$/, '').split('\n');
  return lines.map((l, i) => `${i + 1} ${l}`).join('\n');
}

export function fileSection(f: { path: string; content: string; truncated?: boolean }): string {
  return `[start of ${f.path}]\n${numbered(f.content)}${f.truncated ? '\n… (file truncated)' : ''}\n[end of ${f.path}]`;
}

export function issueText(issue: IssueInput): string {
  return `${issue.title.trim()}\n\n${issue.body.trim()}`.trim();
}

export const CUSTOM_DIFF_EXPLANATION = `The general format of a diff is as follows.
\`\`\`custom-diff
diff
<path/filename>
< "rewrite" or "insert" >
< rough line number / EOF / BOF >
< insert function that should be added or rewritten >
end diff
< repeat blocks of diff as necessary >
\`\`\`
Insertion can only be done at the end or beginning of the file, indicated by EOF or BOF respectively.

As an example for a diff, consider the following two versions of the same file, once before and once after a change.
The original version of the file was as follows.
[start of demo/test_file.py]
1 def test_euclidean(a, b):
2     assert euclidean(0, 0) == 0
3     assert euclidean(0, 1) == 1
4     assert euclidean(1, 0) == 1
5     assert euclidean(1, 1) == 1
6
7 @pytest.mark.parametrize("a, b, expected", [(0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 1)])
8 def test_gcd(a, b):
9     assert gcd(a, b) == expected
10
[end of demo/test_file.py]

The diff for fix in function euclidean and adds the function gcd is as follows.
This diff changes the first file into the second file.
\`\`\`custom-diff
diff
demo/test_file.py
rewrite
1
def test_euclidean(a, b):
    assert euclidean(0, 0) == 0
    assert euclidean(0, 1) == 1
    assert euclidean(1, 0) == 1
    assert euclidean(1, 1) == 1
    assert euclidean(100, 10) == 10
end diff
diff
demo/test_file.py
insert
EOF
@pytest.mark.parametrize("a, b, expected", [(0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 1), (100, 10, 10)])
def test_lcm(a, b):
    assert lcm(a, b) == expected
end diff
\`\`\`

The new version of the file is as follows.
[start of demo/test_file.py]
1 def test_euclidean(a, b):
2     assert euclidean(0, 0) == 0
3     assert euclidean(0, 1) == 1
4     assert euclidean(1, 0) == 1
5     assert euclidean(1, 1) == 1
6     assert euclidean(100, 10) == 10
7
8 @pytest.mark.parametrize("a, b, expected", [(0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 1)])
9 def test_gcd(a, b):
10     assert gcd(a, b) == expected
11
12 @pytest.mark.parametrize("a, b, expected", [(0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 1), (100, 10, 10)])
13 def test_lcm(a, b):
14     assert lcm(a, b) == expected
15
[end of demo/test_file.py]

As you can see, you need to indicate the approximate line numbers, function name and the path and file name you want to change,
but there can be as many independent blocks of changes as you need. You may also apply changes to several files.
To create a new test file, insert into a path that does not exist yet (with EOF).`;

const JS_NOTE = `For JavaScript/TypeScript, a "function" is a top-level function, a \`describe(...)\` block or a \`test(...)\`/\`it(...)\` call; new test files need their imports at the top (insert them with BOF or include them in the first block of a new file).`;

export interface ZeroShotPlusInput {
  issue: IssueInput;
  sources: RetrievedFile[];
  tests: RetrievedFile[];
  testCommand: string;
  language: string;
  /** `whole-file` asks for one test file in a fence (what small models manage); default `custom-diff` (the paper's). */
  answerFormat?: 'custom-diff' | 'whole-file';
}

const LANGUAGE_NAMES: Record<string, string> = { python: 'Python', javascript: 'JavaScript', typescript: 'TypeScript', go: 'Go' };

/** How a prompt names the language of the repository's tests (`go` → Go). */
function languageName(language: string): string {
  return LANGUAGE_NAMES[language] ?? language.charAt(0).toUpperCase() + language.slice(1);
}

/**
 * For a small model: the same issue and files, without line numbers (small models copy them into
 * their answer) and without the custom diff format, asking for one whole new test file.
 */
export function wholeFilePrompt(input: ZeroShotPlusInput): string {
  const files = [...input.sources, ...input.tests].map((f) => `[start of ${f.path}]\n${f.content.replace(/\n$/, '')}${f.truncated ? '\n… (file truncated)' : ''}\n[end of ${f.path}]`).join('\n');
  const lang = input.language !== 'unknown' ? ` in ${languageName(input.language)}` : '';
  return `<issue>
${issueText(input.issue)}
</issue>

Relevant files of the repository:
<code>
${files}
</code>

Write one new test file${lang} that reproduces the issue above. Its test must fail on the current code because of the issue (an assertion, or the exception the issue reports; not an import error) and pass once the issue is fixed. Tests are run with \`${input.testCommand}\`. Import only what the test uses. Do not fix the code. The file is new, not one of the files above: put only your new test in it, not a copy of the tests above.

Answer with the new file's path on one line, then one fenced code block holding the file's whole code (its imports and its test). Nothing else.`;
}

/** Closes the prompt asked afresh after an answer ran into the answer limit (zeroShotPlus.ts). */
export const AFTER_CUT_NOTE =
  'An earlier answer to this ran into the answer limit: it copied the tests above, or wrote the same check again and again. Write only the new test, with one or two checks of what the issue reports; the existing test files are shown by their first lines only, for their imports and style.';

/** The ZeroShotPlus prompt (paper Figs. 12–13), as one user message. */
export function zeroShotPlusPrompt(input: ZeroShotPlusInput): string {
  if (input.answerFormat === 'whole-file') return wholeFilePrompt(input);
  const files = [...input.sources, ...input.tests].map(fileSection).join('\n');
  return `The following text contains a user issue (in <issue/> brackets) posted at a repository. Further, you are provided with file contents of several files in the repository that contain relevant code (in <code> brackets). It may be necessary to use code from third party dependencies or files not contained in the attached documents however. Your task is to identify the issue and implement a test case that verifies a proposed solution to this issue. More details at the end of this text.

<issue>
${issueText(input.issue)}
</issue>

<code>
${files}
</code>

Please generate test cases that check whether an implemented solution
resolves the issue of the user (at the top, within <issue/> brackets).
The test cases must fail on the current code because of the issue (an assertion or the exception the issue reports, not an import error) and pass once the issue is fixed.
Tests are ${input.language !== 'unknown' ? `written in ${languageName(input.language)} and ` : ''}run with \`${input.testCommand}\`.
Present the test cases as a diff (custom format, explained below).

${CUSTOM_DIFF_EXPLANATION}
${input.language === 'javascript' || input.language === 'typescript' ? `\n${JS_NOTE}\n` : ''}
Apply as much reasoning as you please and see necessary. The format of the solution is fixed and has to follow the custom diff format.
Make sure to implement only test cases and don't try to fix the issue itself.`;
}

/** LIBRO's relevance question (App. B): does this failure show the issue? */
export function libroJudgePrompt(issue: IssueInput, test: string, failure: string): string {
  return `A test was written to reproduce the following issue. It fails on the current code.

<issue>
${issueText(issue)}
</issue>

<test>
${test}
</test>

<failure>
${failure}
</failure>

Does this failure show the problem the issue describes (the same wrong behaviour or the same error), rather than an unrelated failure or a mistake in the test?
Answer YES or NO on the first line, then give one sentence of justification.`;
}

export const AGENT_SYSTEM_PROMPT = `You are an autonomous software engineer working in a repository checked out at the commit where a user reported an issue.
Your task is to create unit tests that cover the issue: tests that fail in the current state of the repository because of the issue, and will pass when the issue has been resolved.
You work through tools (listed below). Call one tool at a time and wait for its result.
You cannot fix the code and must not try: only create or edit test files.`;

export function agentInstructions(issue: IssueInput, testCommand: string): string {
  return `We have received the following issue within our repository. Here's the issue text:
ISSUE:
${issueText(issue)}

INSTRUCTIONS:
Now, you're going to create unit tests that cover the issue.
In other words, you should write unit tests that fail in the current state of the repository but will pass when the issue has been resolved. Essentially, you'll want to write a unit test that reproduces the described issue.
Use the tools to explore the repository, write the test and run it. When you're satisfied with the test you've written, call submit.
The repository's tests are run with \`${testCommand}\`; the run_tests tool runs the files you name that way and reports each test's outcome.

NOTE ABOUT EDITING: Indentation really matters! When editing a file, make sure to insert appropriate indentation before each line. write_file replaces a whole file; edit_file replaces one exact snippet; apply_custom_diff takes the custom diff format (insert/rewrite whole functions).

IMPORTANT TIPS:
1. Always start by trying to replicate the bug that the issue discusses. If the issue includes code for reproducing the bug, reimplement it as a test.
2. If a tool call fails, do something different: a call that did not work once will not work the second time unless you change it.
3. Read only the parts of files you need (read_file takes a line range); grep and find_files locate code quickly.
4. Put the test where the repository keeps its tests, following their style (a new file such as tests/test_issue_repro.py is fine).
5. Always check the code after an edit (read it back) to make sure it is what you wanted.
6. After having written your tests and before submitting, run them with run_tests and check that they *fail* as expected because of the issue: an assertion failure or the exception the issue reports. A failure caused by an import error, a syntax error or a wrong name in your test does not count. If the tests pass, or fail for another reason, revisit them.
7. Do not write tests that pass on the current code only: the test must expose the issue.`;
}

/**
 * The stand-in fix (fixCheck.ts): the model fixes the code so that the reproducing test passes.
 * Whole functions in the custom diff format's `rewrite` blocks: short enough for a small model's
 * answer, and placed by name, so line numbers may be rough. With a `site` (the function the failure
 * passes through, or for a plain assertion the function the test calls), only that function, in a plain code block: small models copy a format's
 * placeholder (Qwen2.5-Coder 1.5B answered `(the corrected function, whole)`) but rewrite code they see.
 */
export function standInFixPrompt(issue: IssueInput, testPatch: string, failure: string, sources: Array<{ path: string; content: string; truncated?: boolean }>, site?: FixSite): string {
  const files = sources.map((f) => `[start of ${f.path}]\n${f.content.replace(/\n$/, '')}${f.truncated ? '\n… (file truncated)' : ''}\n[end of ${f.path}]`).join('\n');
  if (site) {
    return `${fixContext(issue, files, testPatch, failure)}

${site.via === 'call' ? 'The test calls' : 'The failure passes through'} \`${site.name}\` of ${site.path} (line ${site.line}):
\`\`\`
${site.code}
\`\`\`

Fix the issue there, so that the test passes: write \`${site.name}\` again, corrected, the whole ${site.kind} (its real code, every line), in one fenced code block, and nothing else. Do not change the test.`;
  }
  // The example names a real source file: small models copy a placeholder path (even a test's) verbatim.
  const example = sources[0]?.path ?? 'src/module.py';
  const line = Math.max(1, (sources[0]?.content.split('\n').findIndex((l) => /^\s*(export\s+)?(async\s+)?(def|function|func|class)\b/.test(l)) ?? 0) + 1);
  return `${fixContext(issue, files, testPatch, failure)}

Fix the issue in the source code, so that the test passes. Do not change the test or any test file. For each function you change, write one block: the source file's path, the word rewrite, the function's line number, then the whole corrected function (its real code, every line), then end diff. For example, a change to a function of ${example} is written as:
\`\`\`custom-diff
diff
${example}
rewrite
${line}
(the corrected function, whole)
end diff
\`\`\`
Answer with these blocks only.`;
}

/** The issue, the code, the test and its failure: what every stand-in fix prompt starts with. */
function fixContext(issue: IssueInput, files: string, testPatch: string, failure: string): string {
  return `<issue>
${issueText(issue)}
</issue>

Source files of the repository:
<code>
${files}
</code>

This test reproduces the issue: it fails on the current code.
<test>
${testPatch}
</test>

<failure>
${failure}
</failure>`;
}

/** A function the failure passes through, or the test calls (fixCheck.ts): the stand-in fix rewrites it alone, placed by name. */
export interface FixSite extends FailureSite {
  /** `trace`: the failure's trace names it; `call`: a plain assertion's test calls it. */
  via: 'trace' | 'call';
  name: string;
  kind: 'function' | 'method';
  code: string;
}
