/**
 * Issues a pull request says it closes, read from its body with GitHub's closing keywords
 * (`fixes #12`, `Closes owner/repo#12`, `resolves https://host/owner/repo/issues/12`). Pure.
 * Only issues of the same repository count: a PR cannot be checked against another repository's tests.
 */
const KEYWORDS = 'close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved';
const REF = String.raw`(?:([\w.-]+)\/([\w.-]+))?#(\d+)|https?:\/\/[^\s/]+\/([\w.-]+)\/([\w.-]+)\/issues\/(\d+)`;
const PATTERN = new RegExp(String.raw`(?:^|[^\w])(?:${KEYWORDS}):?\s+(?:${REF})`, 'gi');

export function closingIssueNumbers(body: string | null | undefined, owner: string, repo: string): number[] {
  if (!body) return [];
  // Code blocks are examples, not links.
  const text = body.replace(/```[\s\S]*?```/g, ' ').replace(/`[^`\n]*`/g, ' ');
  const out = new Set<number>();
  for (const m of text.matchAll(PATTERN)) {
    const [o, r, n] = m[3] ? [m[1], m[2], m[3]] : [m[4], m[5], m[6]];
    if (o && (o.toLowerCase() !== owner.toLowerCase() || r!.toLowerCase() !== repo.toLowerCase())) continue;
    out.add(Number(n));
  }
  return [...out].sort((a, b) => a - b);
}
