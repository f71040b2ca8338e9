/**
 * The project's own test environment: the literal `env:` values its CI workflow
 * (`.github/workflows/*.yml`) gives the step that runs its tests (a time zone, a locale, a feature
 * switch), at workflow, job and step level. Pure.
 */
import { parse as parseYaml } from 'yaml';

export const WORKFLOW_FILE = /^\.github\/workflows\/[^/]+\.ya?ml$/;

/** Names never taken from a workflow: the runner machine's own, and anything that reads like a credential. */
const NEVER = /^(PATH|HOME|PWD|OLDPWD|SHELL|USER|LOGNAME|TMPDIR|HOSTNAME|LD_[A-Z_]*|GITHUB_[A-Z_]*|RUNNER_[A-Z_]*|ACTIONS_[A-Z_]*)$|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE_?KEY|AUTH/i;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface WorkflowEnv {
  /** Variables to set, in the order the workflow gives them (workflow, then job, then step; later wins). */
  env: Record<string, string>;
  /** Where they came from: `.github/workflows/test.yml, job build-and-test, step \`npm run test\``. */
  source: string;
  /** Variables left out, with the reason (an expression, a credential-like name, not a plain value). */
  refused: string[];
}

/**
 * Adds the literal values of an `env:` mapping to `into`. A value holding a `${{ … }}` expression
 * (secrets, matrix, vars: only the CI knows them) is refused, as is a credential-like or runner-owned
 * name and anything not a plain scalar.
 */
function take(envBlock: unknown, into: Record<string, string>, refused: string[]): void {
  if (!envBlock || typeof envBlock !== 'object' || Array.isArray(envBlock)) return;
  for (const [name, value] of Object.entries(envBlock as Record<string, unknown>)) {
    if (!NAME.test(name) || NEVER.test(name)) {
      refused.push(`${name} (not taken from CI: runner's own or credential-like)`);
      delete into[name];
      continue;
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      refused.push(`${name} (not a plain value)`);
      delete into[name];
      continue;
    }
    const text = String(value);
    if (text.includes('${{')) {
      refused.push(`${name} (a \${{ }} expression: only the CI knows its value)`);
      delete into[name];
      continue;
    }
    if (/[\0\r\n]/.test(text)) {
      refused.push(`${name} (spans several lines)`);
      delete into[name];
      continue;
    }
    into[name] = text;
  }
}

const oneLine = (s: string) => s.trim().split('\n')[0].slice(0, 80);

/**
 * The environment of the first step (workflow files in path order, jobs and steps in file order)
 * whose `run` the ecosystem's `isTestStep` says runs the tests; undefined when no workflow has one,
 * or it sets nothing. Unparseable workflows are skipped.
 */
export function workflowTestEnv(workflows: Readonly<Record<string, string>>, isTestStep: (run: string) => boolean): WorkflowEnv | undefined {
  for (const path of Object.keys(workflows).filter((p) => WORKFLOW_FILE.test(p)).sort()) {
    let doc: any;
    try {
      doc = parseYaml(workflows[path]);
    } catch {
      continue;
    }
    if (!doc || typeof doc !== 'object' || !doc.jobs || typeof doc.jobs !== 'object') continue;
    for (const [jobId, job] of Object.entries(doc.jobs as Record<string, any>)) {
      if (!job || typeof job !== 'object' || !Array.isArray(job.steps)) continue;
      for (const step of job.steps) {
        if (!step || typeof step.run !== 'string' || !isTestStep(step.run)) continue;
        const env: Record<string, string> = {};
        const refused: string[] = [];
        take(doc.env, env, refused);
        take(job.env, env, refused);
        take(step.env, env, refused);
        if (Object.keys(env).length === 0) return undefined;
        return { env, source: `${path}, job ${jobId}, step \`${oneLine(step.run)}\``, refused };
      }
    }
  }
  return undefined;
}

/** A workflow step that runs a Node project's tests: its package manager's test script, or a runner itself. */
export function isNodeTestStep(run: string): boolean {
  return (
    /(^|[\s;&|(])(npm|pnpm|yarn|bun)\s+(run\s+|run-script\s+)?(test|t)(\s|$|:|;|&|\|)/m.test(run) ||
    /(^|[\s;&|(])(npm|pnpm|yarn|bun)\s+(run\s+)?test:[\w:-]+/m.test(run) ||
    /(^|[\s;&|(/])(npx\s+|pnpm\s+exec\s+|yarn\s+)?(jest|vitest|mocha|ava|tap|tape|uvu|jasmine)(\s|$)/m.test(run) ||
    /(^|[\s;&|(])node\s+(?:[^;&|\n]*\s)?--test\b/m.test(run)
  );
}
