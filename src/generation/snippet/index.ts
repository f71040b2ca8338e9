/**
 * The `snippet` strategy's test builder, no LLM: reads what the issue claims about its own code
 * (claims.ts), resolves the names it uses through the repository (repoApi.ts) and writes the short
 * test a maintainer would keep (write.ts). When it cannot tell what is wrong, it writes nothing and
 * says why. Pure apart from reading repository files.
 */
import { fileDiff } from '../../patch/canonical.js';
import type { IssueInput } from '../types.js';
import { notABugReport, readClaim, type Claim } from './claims.js';
import { readIssue } from './markdown.js';
import { jsApi, type RepoView } from './repoApi.js';
import { pythonApi } from './repoApiPython.js';
import { loadSnippetSyntax, type CodeLang } from './parser.js';
import { writeJsTest } from './writeJs.js';
import { writePytest } from './writePytest.js';

export type { RepoView } from './repoApi.js';
export type { Claim } from './claims.js';

export interface SnippetTest {
  language: 'python' | 'javascript' | 'typescript';
  kind: 'expected-value' | 'wrong-value' | 'exception';
  path: string;
  content: string;
  /** A git-style unified diff that creates the file. */
  diff: string;
  notes: string[];
  claim: Claim;
}

export type SnippetPlan = { ok: true; test: SnippetTest } | { ok: false; reason: string };

/** Plans the snippet test for a repository; `{ok:false, reason}` when the issue gives nothing certain to build on. */
export async function planSnippetTest(issue: IssueInput, repo: RepoView): Promise<SnippetPlan> {
  await loadSnippetSyntax();
  const lang: CodeLang | undefined = repo.language === 'python' ? 'python' : repo.language === 'javascript' || repo.language === 'typescript' ? 'js' : undefined;
  if (!lang) {
    return {
      ok: false,
      reason: repo.language === 'unknown' ? 'cannot tell the language of the repository\'s tests' : `the snippet strategy has no test writer for ${repo.language} (it writes Python and JavaScript/TypeScript tests)`,
    };
  }
  const notBug = notABugReport(issue.title, issue.body);
  if (notBug) return { ok: false, reason: notBug };
  const claim = readClaim(readIssue(issue.title, issue.body), lang);
  if (!claim.ok) return claim;
  const written = lang === 'python' ? await writePytest(issue.title, claim.claim, await pythonApi(repo)) : await writeJsTest(issue.title, claim.claim, await jsApi(repo), repo.runner);
  if (!written.ok) return written;
  const t = written.test;
  const language = lang === 'python' ? 'python' : /\.tsx?$/.test(t.path) ? 'typescript' : 'javascript';
  return { ok: true, test: { language, kind: t.kind, path: t.path, content: t.content, diff: fileDiff({ path: t.path, before: null, after: t.content }), notes: t.notes, claim: claim.claim } };
}
