import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { SwtError } from '../util/errors.js';

/** Where a repository configures swt-bot, as Probot's `context.config` reads it. */
export const CONFIG_PATH = '.github/swt.yml';

const positive = z.number().positive();

export const repoConfigSchema = z
  .object({
    /** Base image, e.g. `node:18`, `python:3.11`. */
    image: z.string().min(1).optional(),
    /** Dependency install command, run while the environment image is built; reaches only the package registries. */
    install: z.string().optional(),
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
    generation: z
      .object({
        strategy: z.enum(['snippet', 'zero-shot-plus', 'libro', 'agent', 'ensemble']),
        model: z.string().min(1),
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
    throw new SwtError('BAD_CONFIG', `${source}${where}: not valid YAML (${(e as Error).message.split('\n')[0]})`);
  }
  const parsed = repoConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SwtError('BAD_CONFIG', `${source}: ${issue.path.join('.') || 'top level'}: ${issue.message}`);
  }
  return parsed.data;
}
