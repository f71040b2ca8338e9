/**
 * The webhook receiver: all the web process does for a delivery, ahead of Probot's own pipeline
 * (which builds an authenticated Octokit and a Context for every event, though receiving never
 * calls GitHub). It checks the request as @octokit/webhooks does (POST, JSON, the three headers,
 * the HMAC signature), enqueues an event the App acts on under its delivery id (one queue write,
 * which is also the record: a redelivery adds nothing), and answers. Workers build the Context.
 */
import { verify } from '@octokit/webhooks-methods';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { JOB, type EventPayload, type Target } from '../jobs/payloads.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Logger } from '../util/logger.js';

/** Probot's (and @octokit/webhooks') default path. */
export const DEFAULT_WEBHOOK_PATH = '/api/github/webhooks';
/** GitHub caps a webhook payload at 25 MB. */
const MAX_BODY_BYTES = 25 * 1024 * 1024;
/** GitHub gives up after 10 s: answer before it does, truthfully. */
const ANSWER_WITHIN_MS = 9_000;
const HEADERS = ['x-github-event', 'x-hub-signature-256', 'x-github-delivery'] as const;
const JSON_TYPE = /^\s*application\/json\s*(?:;|$)/i;

export interface ReceiverOptions {
  /** WEBHOOK_SECRET: the App's webhook secret, never logged. */
  secret: string;
  /** Default /api/github/webhooks (WEBHOOK_PATH). */
  path?: string;
  queue: Pick<JobQueue, 'enqueue'>;
  /** `event.action` names the App acts on; other verified events are answered and dropped. */
  handles: ReadonlySet<string>;
  log: Logger;
  maxBodyBytes?: number;
  answerWithinMs?: number;
}

/** A Node request handler: true when it answered (the webhook path), false to let others try. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

const trimSlashes = (p: string) => p.replace(/\/+$/, '') || '/';

function answer(res: ServerResponse, status: number, body: string | { error: string }): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** The repository a payload is about, or undefined when it names none. */
export function targetOfPayload(payload: unknown): Target | undefined {
  const p = payload as { repository?: { owner?: { login?: string }; name?: string }; installation?: { id?: number } };
  const owner = p?.repository?.owner?.login;
  const repo = p?.repository?.name;
  if (typeof owner !== 'string' || typeof repo !== 'string') return undefined;
  return { owner, repo, installationId: typeof p.installation?.id === 'number' ? p.installation.id : undefined };
}

/** The event job of a delivery: keyed by its delivery id, so enqueueing it is the dedup. */
export function eventJob(delivery: { id: string; name: string; payload: unknown; target: Target }) {
  const { installationId } = delivery.target;
  return {
    kind: JOB.event,
    payload: { name: delivery.name, payload: delivery.payload, delivery: delivery.id, target: delivery.target, ...(installationId ? { installationId } : {}) } satisfies EventPayload,
    key: `event:${delivery.id}`,
  };
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        // Stop buffering; the answer closes the connection.
        req.removeAllListeners('data');
        req.pause();
        resolve('too-large');
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

export function webhookReceiver(o: ReceiverOptions): RequestHandler {
  if (!o.secret) throw new Error('the webhook receiver needs the App\'s webhook secret (WEBHOOK_SECRET)');
  const path = trimSlashes(o.path ?? DEFAULT_WEBHOOK_PATH);
  const max = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const within = o.answerWithinMs ?? ANSWER_WITHIN_MS;

  const receive = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') return answer(res, 404, { error: `Unknown route: ${req.method} ${path}` });
    if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) return answer(res, 415, { error: 'Unsupported "Content-Type" header value. Must be "application/json"' });
    const missing = HEADERS.filter((h) => typeof req.headers[h] !== 'string');
    if (missing.length) return answer(res, 400, { error: `Required headers missing: ${missing.join(', ')}` });
    const name = req.headers['x-github-event'] as string;
    const id = req.headers['x-github-delivery'] as string;
    const body = await readBody(req, max);
    if (body === 'too-large') {
      res.setHeader('connection', 'close');
      return answer(res, 413, { error: `payload larger than ${max} bytes` });
    }
    const text = body.toString('utf8');
    const signature = req.headers['x-hub-signature-256'] as string;
    if (!text || !signature || !(await verify(o.secret, text, signature))) {
      o.log.warn({ delivery: id, event: name }, 'webhook signature does not match: not from this App (or WEBHOOK_SECRET differs)');
      return answer(res, 400, { error: 'signature does not match event payload and secret' });
    }
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return answer(res, 400, { error: 'payload is not valid JSON' });
    }
    const action = (payload as { action?: unknown })?.action;
    if (!o.handles.has(`${name}.${String(action)}`)) {
      o.log.debug({ delivery: id, event: name, action }, 'webhook not acted on');
      return answer(res, 200, 'ok\n');
    }
    const target = targetOfPayload(payload);
    if (!target) return answer(res, 400, { error: `${name}.${String(action)} payload names no repository` });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), within)));
    const queued = o.queue.enqueue<EventPayload>(eventJob({ id, name, payload, target }));
    try {
      const r = await Promise.race([queued, late]);
      if (r === 'late') {
        // Not recorded yet: a failure GitHub shows, so it can be redelivered (a no-op if the write lands after all).
        o.log.error({ delivery: id, event: name }, `the queue did not take the webhook within ${within} ms`);
        queued.catch((e: Error) => o.log.error({ delivery: id, err: e.message }, 'queueing a webhook failed after its answer'));
        return answer(res, 503, { error: 'the queue is not answering; redeliver later' });
      }
      // One line per delivery: the delivery id and the job id, which the workers' lines carry too.
      o.log.info({ delivery: id, event: `${name}.${String(action)}`, job: r.id }, r.created ? 'webhook queued' : 'redelivery of a queued webhook: ignored');
      answer(res, 200, 'ok\n');
    } catch (e) {
      o.log.error({ delivery: id, event: name, err: (e as Error).message }, 'queueing a webhook failed');
      answer(res, 500, { error: 'the webhook could not be queued; redeliver later' });
    } finally {
      clearTimeout(timer);
    }
  };

  return (req, res) => {
    let pathname: string;
    try {
      pathname = trimSlashes(new URL(req.url ?? '/', 'http://localhost').pathname);
    } catch {
      return false;
    }
    if (pathname !== path) return false;
    receive(req, res).catch((e: Error) => {
      o.log.error({ err: e.message }, 'webhook receiver failed');
      if (!res.headersSent) answer(res, 500, { error: 'internal error' });
    });
    return true;
  };
}
