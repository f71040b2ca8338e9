/**
 * docs/configuration.md, made from the two schemas: the environment variables from settings/'s
 * table and the `.github/swt.yml` keys from the repository config's zod schema. `npm run
 * docs:config` writes it; test/unit/docsConfiguration.test.ts fails when the file differs. Pure.
 */
import { pathToFileURL } from 'node:url';
import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { repoConfigSchema } from '../config/repoConfig.js';
import { GROUP_TITLES, VARIABLES, type Group, type Variable, type VariableName } from '../settings/index.js';

const INTRO = `# Configuration

<!-- Made by \`npm run docs:config\` from src/settings/variables.ts and src/config/repoConfig.ts (src/cli/configDoc.ts): edit those, not this file. -->

Two places configure swt-bot:

- **the operator's environment** (the machine that runs the App, its workers or the CLI): the
  [environment variables](#environment-variables) below, in one table;
- **a repository's \`.github/swt.yml\`**: the [repository keys](#githubswtyml) below.

A repository can lower what the operator allows, never raise it: \`limits\` stop at the \`SWT_MAX_*\`
ceilings and \`budget\` at \`SWT_BUDGET_*\`. A bad value in either place is refused with its name,
never replaced silently by the default (\`test/unit/settings.test.ts\`, \`test/unit/repoConfig.test.ts\`):
the App, its workers and every \`swt\` command parse the whole environment at start and stop on a bad
value; \`swt doctor\` lists it among its checks. Every variable is read in one module,
\`src/settings/\` (\`test/unit/architecture.test.ts\` finds no other reader of the environment).
`;

const ENV_HEAD = `## Environment variables

"—" means unset by default. A value is trimmed; an empty one counts as unset.

| variable | default | unit | what it does |
|---|---|---|---|
`;

const IN_CONTAINERS = `### Set by swt inside containers (not settings)

swt's own hooks read these in the sandbox; they are listed so that nothing read in \`src/\` goes
unexplained. An operator never sets them.

| variable | read by |
|---|---|
| \`SWT_ROUNDS\` | the round hooks (jest, vitest, mocha, pytest): the plan of the tests to confirm in the run ([harness](../src/harness/README.md)) |
| \`SWT_JAVA_ROUNDS\` | Maven's rounds: the plan (module, report, rounds, tests) for the spy in Maven's JVM and for the runner after it ([harness](../src/harness/README.md)) |
| \`SWT_COV_ROOT\`, \`SWT_COV_TARGETS\`, \`SWT_COV_V8_DIR\`, \`SWT_COV_OUT\` | the coverage preloads (V8, Python \`trace\`): the repository root, the changed files, where counts go |
| \`NODE_OPTIONS\` | the uvu hook removes itself from it before the tests' own child processes start |
`;

const TESTS = `### Tests and benchmarks

| variable | default | what it does |
|---|---|---|
| \`SWT_EXAMPLES_DIR\` | \`../shared/examples\` | the real instances of \`npm run test:examples\` and the benchmarks |
| \`SWT_CHROMIUM\` | \`/usr/bin/chromium\` | the browser of the rendered-report tests |
| \`SWT_FLAKY_ROUNDS\` | 1 | validations in a row in \`pipeline.validateFlaky\` |
| \`SWT_TOOLS_DIR\` | \`~/.cache/swt-bot/tools\` | where \`scripts/dev\` puts Node when the machine's is older |
| \`SWT_BENCH_*\` | — | benchmark knobs, see [bench/README.md](../bench/README.md) |
`;

const REPO_HEAD = `## \`.github/swt.yml\`

Read at the base revision by the CLI, and by the App (and \`swt reproduce|validate <URL>\`) from the
default branch in one place (\`github/config.ts\`), which merges an \`_extends\` chain as Probot's
\`context.config\` does (deep merge, arrays concatenated), so an org-wide \`_extends: .github\` base works. Command-line flags win over it,
and it wins over what swt guesses from the repository's files ([ecosystems](ecosystems.md)). The
schema is \`src/config/repoConfig.ts\` (zod, strict: an unknown key is an error). An invalid file
makes the comment or the check say which key is wrong (\`.github/swt.yml: gate.mode: Invalid option…\`).

\`\`\`yaml
image: node:18                            # base image; built offline when it cannot be pulled
install: npm ci --ignore-scripts          # run while the environment image is built; reaches only the package registries
test_command: npx mocha --exit {files}    # must contain {files}: the files a test patch touches go there
limits: { timeout_seconds: 300, memory_mib: 2048, pids: 512, cpus: 1, disk_mib: 4096, output_kib: 64 }
reruns: 1                                 # extra runs per side (0–5); a test that flips is flaky, never F→P
confirm: 2                                # reruns of each test that moves before it counts (0–5; default 2; 0 = off)
generation: { strategy: ensemble, model: gpt-4o-mini }   # model must be in SWT_LLM_MODELS
\`\`\`

The keys below are read by the App only (the CLI ignores them):

\`\`\`yaml
coverage: false                 # true: add change coverage ΔC to the check and comment (extra runs)
budget: { tokens: 200000, usd: 1, steps: 30, wall_seconds: 600 }   # lowers SWT_BUDGET_*, never raises it
events: { issues: true, pull_requests: true, commands: true }      # which webhooks it acts on
issues:
  auto: true                    # false: only the trigger label or \`/swt reproduce\`
  trigger_label: swt:reproduce
  skip_labels: [question, enhancement, feature, feature request, discussion, duplicate, wontfix, invalid]
  skip_questions: true          # skip titles that read as a question or a feature request
  comment_on_failure: true      # false: when nothing reproduces, only the label
  draft_pr: false               # push the test to a branch and open a draft PR (needs Contents: write); only for issues by writers
labels: { reproduced: reproduced, not_reproduced: not-reproduced }
gate:
  authors: ['*[bot]', Copilot, devin-ai-integration, openhands-agent, OpenHands]   # \`*\` matches any characters
  mode: authors                 # authors: failure for them unless the fix filter passes; all: for everyone; off
_extends: .github               # Probot's org-level base config
\`\`\`

| key | default | what it does |
|---|---|---|
`;

type RepoKey = keyof typeof repoConfigSchema.shape;

/** One row per top-level key (a key the schema gains is a type error here until it has one); nested keys are read from the schema. */
const REPO_KEYS: Record<RepoKey, [dflt: string, doc: string]> = {
  _extends: ['—', 'an org-level base config merged in (deep merge, as Probot does)'],
  image: ['by ecosystem', 'base image'],
  install: ['by ecosystem', 'dependency install command'],
  dependencies_as_of: ['`auto`', '`auto`, `base` or `today`, as `SWT_DEPENDENCIES_AS_OF`; `swt validate --dependencies-as-of` wins'],
  test_command: ['by runner', 'test command with `{files}`'],
  limits: ['the ceilings', 'lowered to `SWT_MAX_*` when above, and the output says so (`limit capped: … asked for timeout 36000 s capped at 1800 s (SWT_MAX_TIMEOUT_SECONDS)`; `limitsCapped` in JSON; `validate.ceilings`)'],
  reruns: ['0', 'extra runs of every test per side'],
  confirm: ['2', 'reruns of each test that moves ([confirmation](../src/harness/README.md#confirming-the-tests-that-move))'],
  generation: ['`ensemble` with an LLM, else `snippet`', 'the strategy (`snippet`, `zero-shot-plus`, `libro`, `agent`, `ensemble`) and the model'],
  coverage: ['`false`', 'ΔC of the reproducing tests on fix PRs (`📏 change coverage ΔC 75.0%: …`; `test/app/e2e.test.ts`)'],
  budget: ['`SWT_BUDGET_*`', 'per issue'],
  events: ['all `true`', 'which webhooks the App acts on'],
  issues: ['as above', 'which issues the App reproduces, and what it posts'],
  labels: ['`reproduced`, `not-reproduced`', 'the labels the App sets'],
  gate: ['as above', '[the gate](app.md#gate)'],
};

/** The keys of an object schema under its optional wrapper, or none. */
function nestedKeys(schema: z.ZodType): string[] {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  return inner instanceof z.ZodObject ? Object.keys(inner.shape) : [];
}

const cell = (s: string | undefined) => (s ?? '—').replace(/\|/g, '\\|');

/** The default as a person reads it: the table's words, else what the schema gives for an unset variable. */
export function shownDefault(v: Variable): string | undefined {
  if (v.default !== undefined) return v.default;
  const r = v.schema.safeParse(undefined);
  const value = r.success ? r.data : undefined;
  return typeof value === 'number' ? String(value) : typeof value === 'string' ? `\`${value}\`` : undefined;
}

function variableRows(): string {
  const byGroup = new Map<Group, VariableName[]>();
  for (const name of Object.keys(VARIABLES) as VariableName[]) {
    const g = (VARIABLES[name] as Variable).group;
    byGroup.set(g, [...(byGroup.get(g) ?? []), name]);
  }
  const rows: string[] = [];
  for (const [group, names] of byGroup) {
    rows.push(`| **${GROUP_TITLES[group]}** | | | |`);
    for (const name of names) {
      const v = VARIABLES[name] as Variable;
      const doc = v.readBy ? `${v.doc} (read by ${v.readBy})` : v.doc;
      rows.push(`| \`${name}\` | ${cell(shownDefault(v))} | ${cell(v.unit)} | ${cell(doc)} |`);
    }
  }
  return rows.join('\n') + '\n';
}

function repoKeyRows(): string {
  const shape = repoConfigSchema.shape as Record<RepoKey, z.ZodType>;
  return (Object.keys(REPO_KEYS) as RepoKey[])
    .map((key) => {
      const [dflt, doc] = REPO_KEYS[key];
      const nested = nestedKeys(shape[key]);
      const what = nested.length ? `${nested.map((k) => `\`${k}\``).join(', ')}: ${doc}` : doc;
      return `| \`${key}\` | ${cell(dflt)} | ${cell(what)} |`;
    })
    .join('\n') + '\n';
}

/** The whole page. */
export function configurationDoc(): string {
  return [INTRO, ENV_HEAD + variableRows(), IN_CONTAINERS, TESTS, REPO_HEAD + repoKeyRows()].join('\n');
}

// `node dist/cli/configDoc.js [file]`: print the page, or write it to the file.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2];
  if (out) writeFileSync(out, configurationDoc());
  else process.stdout.write(configurationDoc());
}
