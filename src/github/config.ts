/**
 * The one place `.github/swt.yml` is read from GitHub, for the App's jobs and `swt reproduce|validate <URL>`:
 * the default branch's file as `GitHubPort.repoConfig` fetches it (`_extends` merged), validated.
 */
import { YAMLParseError } from 'yaml';
import { appSettings, checkRepoConfig, CONFIG_PATH, type AppSettings, type RepoConfig } from '../config/repoConfig.js';
import { errorLine, isSwtError } from '../util/errors.js';
import type { GitHubPort, RepoRef } from './types.js';

export type ConfigRead = { config: RepoConfig; settings: AppSettings } | { error: string };

/** The repository's config, validated; `{ error }` names the key or the line of a config that cannot be used. Other failures (GitHub down) throw. */
export async function readRepoConfig(gh: Pick<GitHubPort, 'repoConfig'>, r: RepoRef): Promise<ConfigRead> {
  try {
    const config = checkRepoConfig(await gh.repoConfig(r, CONFIG_PATH));
    return { config, settings: appSettings(config) };
  } catch (e) {
    const error = configReadError(e);
    if (error === undefined) throw e;
    return { error };
  }
}

/** The one-line message for a config that cannot be read (bad YAML, a wrong key, a bad `_extends`); undefined for other errors. */
export function configReadError(e: unknown): string | undefined {
  if (isSwtError(e, 'BAD_CONFIG')) return e.message;
  const cause = (e as Error)?.cause;
  if (cause instanceof YAMLParseError) {
    const line = cause.linePos ? `:${cause.linePos[0].line}` : '';
    return `${CONFIG_PATH}${line}: not valid YAML (${errorLine(cause).replace(/:$/, '')})`;
  }
  const message = (e as Error)?.message ?? '';
  if (message.startsWith('[@probot/octokit-plugin-config]')) return `${CONFIG_PATH}: ${message.replace(/^\[[^\]]+\]\s*/, '')}`;
  return undefined;
}
