/**
 * Git's smart HTTP protocol for the fake GitHub: requests under `/<owner>/<repo>.git/` are handed
 * to `git http-backend` (CGI), which serves real bare repositories from a directory. Only
 * fetching is offered, and only with a token the fake issued (Basic auth, as git sends it).
 */
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gitBaseEnv } from '../repo/gitExec.js';

export interface GitHttpOptions {
  /** Directory holding `<owner>/<repo>.git` bare repositories. */
  projectRoot: string;
  /** Is this token allowed to read the repository? */
  authorize(token: string | null, owner: string, repo: string): boolean;
}

const ROUTE = /^\/([\w.-]+)\/([\w.-]+?)\.git(\/(?:info\/refs|git-upload-pack))$/;

/** Handles the request when it is a git fetch; false when the path is not one. */
export function handleGitHttp(req: IncomingMessage, res: ServerResponse, opts: GitHttpOptions): boolean {
  const url = new URL(req.url ?? '/', 'http://fake');
  const m = ROUTE.exec(url.pathname);
  if (!m) return false;
  const [, owner, repo, rest] = m as unknown as [string, string, string, string];
  if (rest === '/info/refs' && url.searchParams.get('service') !== 'git-upload-pack') {
    res.writeHead(403, { 'content-type': 'text/plain' }).end('only fetching is served\n');
    return true;
  }
  if (!opts.authorize(basicPassword(req.headers.authorization), owner, repo)) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="fake GitHub"', 'content-type': 'text/plain' }).end('bad credentials\n');
    return true;
  }
  const cgi = spawn('git', ['http-backend'], { env: cgiEnv(req, url, opts.projectRoot, `/${owner}/${repo}.git${rest}`), stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(cgi.stdin);
  cgi.stdin.on('error', () => {});
  let head: Buffer | undefined = Buffer.alloc(0);
  let stderr = '';
  cgi.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (!head) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const cgiHead = cgiHeaders(head);
    if (!cgiHead) return;
    head = undefined;
    res.writeHead(cgiHead.status, cgiHead.headers);
    res.write(cgiHead.body);
  });
  cgi.on('close', (code) => {
    if (head) res.writeHead(500, { 'content-type': 'text/plain' }).end(`git http-backend failed (${code}): ${stderr}`);
    else res.end();
  });
  return true;
}

function basicPassword(header: string | undefined): string | null {
  const m = /^Basic\s+(.+)$/i.exec(header ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? null : decoded.slice(i + 1);
}

/** The CGI environment of `git http-backend` for one request. */
function cgiEnv(req: IncomingMessage, url: URL, projectRoot: string, pathInfo: string): NodeJS.ProcessEnv {
  return {
    ...gitBaseEnv(),
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: pathInfo,
    QUERY_STRING: url.search.slice(1),
    REQUEST_METHOD: req.method ?? 'GET',
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_USER: 'x-access-token',
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
    HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
  };
}

/** The CGI's header block (a `Status:` line becomes the status) and the body after it; undefined until the block has ended. */
function cgiHeaders(head: Buffer): { status: number; headers: Record<string, string>; body: Buffer } | undefined {
  const end = head.indexOf('\r\n\r\n');
  const cut = end >= 0 ? end : head.indexOf('\n\n');
  if (cut < 0) return undefined;
  let status = 200;
  const headers: Record<string, string> = {};
  for (const l of head.subarray(0, cut).toString('utf8').split(/\r?\n/)) {
    const i = l.indexOf(':');
    if (i < 0) continue;
    const k = l.slice(0, i).trim();
    const v = l.slice(i + 1).trim();
    if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10);
    else headers[k] = v;
  }
  return { status, headers, body: head.subarray(cut + (end >= 0 ? 4 : 2)) };
}
