import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { errorLine, SwtError } from '../util/errors.js';

/** Where a repository configures swt-bot (github/config.ts reads it from GitHub, `_extends` merged as Probot's `context.config` merges). */
export const CONFIG_PATH = '.github/swt.yml';

const positive = z.number().positive();
const labelName = z.string().min(1).max(50);

export const repoConfigSchema = z
  .object({
    /** An org-level base config (Probot's `context.config` merges it; read here so the file stays valid). */
    _extends: z.string().optional(),
    /** Base image, e.g. `node:18`, `python:3.11`. */
    image: z.string().min(1).optional(),
    /** Dependency install command, run while the environment image is built; reaches only the package registries. */
    install: z.string().optional(),
    /**
     * Which registry state the default install resolves unpinned dependencies against: `auto` (the
     * base commit's date when it is older than 30 days), `base` (always its date), `today`.
     */
    dependencies_as_of: z.enum(['auto', 'base', 'today']).optional(),
    /** Test command with `{files}`. */
    test_command: z.string().includes('{files}', { message: 'must contain {files}' }).optional(),
    /** Per test run; lowered by the operator's ceilings (SWT_MAX_*), never raised past them. */
    limits: z
      .object({
        timeout_seconds: positive,
        memory_mib: positive,
        pids: z.number().int().positive(),
        cpus: positive,
        disk_mib: positive,
        output_kib: positive,
      })
      .partial()
      .strict()
      .optional(),
    /** Extra runs per side, to catch flaky tests. */
    reruns: z.number().int().min(0).max(5).optional(),
    /** Reruns of each test that moved (not P2P) on both sides before it counts; 0 turns confirmation off (default 2). */
    confirm: z.number().int().min(0).max(5).optional(),
    generation: z
      .object({
        strategy: z.enum(['snippet', 'zero-shot-plus', 'libro', 'agent', 'ensemble']),
        model: z.string().min(1),
      })
      .partial()
      .strict()
      .optional(),
    // The keys below are read by the GitHub App only (the CLI ignores them).
    /** Also measure change coverage ΔC of the reproducing tests on fix PRs (extra runs; off by default). */
    coverage: z.boolean().optional(),
    /** Spending per issue; the operator's SWT_BUDGET_* are ceilings a repository cannot raise. */
    budget: z
      .object({ tokens: z.number().int().positive(), usd: positive, steps: z.number().int().positive(), wall_seconds: positive })
      .partial()
      .strict()
      .optional(),
    /** Which webhooks the App acts on. */
    events: z.object({ issues: z.boolean(), pull_requests: z.boolean(), commands: z.boolean() }).partial().strict().optional(),
    issues: z
      .object({
        /** React to issues being opened or reopened; false: only the trigger label or `/swt reproduce`. */
        auto: z.boolean(),
        trigger_label: labelName,
        /** Issues with one of these labels are skipped (questions, feature requests, …). */
        skip_labels: z.array(labelName),
        /** Skip issues whose title reads as a question or a feature request. */
        skip_questions: z.boolean(),
        /** false: when nothing reproduces, post no comment, only the label. */
        comment_on_failure: z.boolean(),
        /** Push the reproducing test to a branch and open a draft PR (needs Contents: write). */
        draft_pr: z.boolean(),
      })
      .partial()
      .strict()
      .optional(),
    labels: z.object({ reproduced: labelName, not_reproduced: labelName }).partial().strict().optional(),
    gate: z
      .object({
        /** Logins whose PRs fail the check unless the fix filter passes; `*` matches any characters. */
        authors: z.array(z.string().min(1)),
        /** `authors`: failure for those authors only; `all`: for everyone; `off`: never. */
        mode: z.enum(['authors', 'all', 'off']),
      })
      .partial()
      .strict()
      .optional(),
  })
  .strict();

export type RepoConfig = z.infer<typeof repoConfigSchema>;

/** Parses `.github/swt.yml`; a broken file is an error that names the file, line or field. Pure. */
export function parseRepoConfig(text: string, source = CONFIG_PATH): RepoConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (e) {
    const where = e instanceof YAMLParseError && e.linePos ? `:${e.linePos[0].line}` : '';
    throw new SwtError('BAD_CONFIG', `${source}${where}: not valid YAML (${errorLine(e)})`);
  }
  return checkRepoConfig(raw, source);
}

/**
 * Validates an already parsed config (the App gets one through github/config.ts, with
 * `_extends` resolved). The error names the first wrong key, e.g. `gate.mode: Invalid option…`. Pure.
 */
export function checkRepoConfig(raw: unknown, source = CONFIG_PATH): RepoConfig {
  const parsed = repoConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.map(String);
    // An unknown key is named by its full path, not only its parent's.
    if (issue.code === 'unrecognized_keys') {
      throw new SwtError('BAD_CONFIG', `${source}: ${[...path, issue.keys[0]].join('.')}: unknown key`);
    }
    throw new SwtError('BAD_CONFIG', `${source}: ${path.join('.') || 'top level'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The App's settings with every default filled in. */
export interface AppSettings {
  events: { issues: boolean; pull_requests: boolean; commands: boolean };
  issues: { auto: boolean; trigger_label: string; skip_labels: string[]; skip_questions: boolean; comment_on_failure: boolean; draft_pr: boolean };
  labels: { reproduced: string; not_reproduced: string };
  gate: { authors: string[]; mode: 'authors' | 'all' | 'off' };
}

export const DEFAULT_APP_SETTINGS: AppSettings = {
  events: { issues: true, pull_requests: true, commands: true },
  issues: {
    auto: true,
    trigger_label: 'swt:reproduce',
    skip_labels: ['question', 'enhancement', 'feature', 'feature request', 'discussion', 'duplicate', 'wontfix', 'invalid'],
    skip_questions: true,
    comment_on_failure: true,
    draft_pr: false,
  },
  labels: { reproduced: 'reproduced', not_reproduced: 'not-reproduced' },
  // Bot accounts and coding agents whose fixes must prove themselves.
  gate: { authors: ['*[bot]', 'Copilot', 'devin-ai-integration', 'openhands-agent', 'OpenHands'], mode: 'authors' },
};

/** Defaults for what the config leaves out. Pure. */
export function appSettings(config: RepoConfig): AppSettings {
  const d = DEFAULT_APP_SETTINGS;
  return {
    events: { ...d.events, ...config.events },
    issues: { ...d.issues, ...config.issues },
    labels: { ...d.labels, ...config.labels },
    gate: { ...d.gate, ...config.gate },
  };
}
