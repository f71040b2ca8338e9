/**
 * What a webhook's payload alone tells, for the receiver (which must stay small: no Markdown
 * parser, no pipeline code, so this module imports nothing) and the event job. Pure.
 */

/** A `/swt …` line anywhere in a comment; decide.ts `parseCommand` then asks whether a reader sees it. */
export const COMMAND_LINE = /^[ \t]*\/swt(?:[ \t]+([\w-]+)(?:[ \t]+(\S+))?)?[ \t]*$/im;

export function isBotAccount(user: { login: string; type: string }): boolean {
  return user.type === 'Bot' || /\[bot\]$/i.test(user.login);
}

/**
 * Whether a handled event can lead anywhere (the receiver asks before it queues, so most comments
 * cost no job and no API call): a comment with no `/swt` line, or by a bot, and a PR edit that
 * left the description alone, cannot.
 */
export function worthDeciding(name: string, payload: unknown): boolean {
  const p = payload as { action?: string; comment?: { body?: string | null; user?: { login: string; type: string } }; changes?: { body?: unknown } };
  if (name === 'issue_comment') return Boolean(p.comment?.user && !isBotAccount(p.comment.user) && COMMAND_LINE.test(p.comment.body ?? ''));
  // A title edit changes nothing we check; a body edit may link other issues.
  if (name === 'pull_request' && p.action === 'edited') return Boolean(p.changes?.body);
  return true;
}

/**
 * Whether a delivery may lead to heavy work (a reproduction or a validation), from its payload
 * alone: the receiver queues it straight into the heavy lane, where one job decides, says
 * "started" and runs the work (one queue trip); help, stats and a closed PR go to the fast lane.
 * A wrong guess costs a little latency, not a wrong answer: either lane decides the same way.
 */
export function mayLeadToWork(name: string, payload: unknown): boolean {
  const p = payload as { action?: string; comment?: { body?: string | null } };
  if (name === 'issue_comment') return /^(?:validate|reproduce)$/i.test(COMMAND_LINE.exec(p.comment?.body ?? '')?.[1] ?? '');
  if (name === 'pull_request') return p.action !== 'closed';
  return name === 'issues' || name === 'check_run';
}
