/**
 * The webhook receiver: all the web process does for a delivery, in place of Probot's webhook
 * middleware (whose pipeline builds an authenticated Octokit and a Context for every event,
 * though receiving never calls GitHub). It checks the request as @octokit/webhooks does (POST, JSON, the three headers,
 * the HMAC signature), enqueues an event the App acts on under the digest of its signed body (one
 * queue write, which is also the record: a redelivery, or a replay of the same body under another
 * delivery id or event name, adds nothing), and answers. The event job (jobs/event.ts) does the rest.
 *
 * Nothing is buffered before it is known to fit: a body must declare its length (GitHub's do),
 * at most the size GitHub sends, and carry a signature of the right form; the bodies being read at
 * once share a fixed allowance (`bufferBytes`), with a reserve for bodies of GitHub's usual size,
 * caps per client, and room taken back from bodies that arrive too slowly (admission.ts), so
 * unsigned requests can neither grow the process nor keep a delivery out. A body that stops
 * arriving is cut after `idleMs`. The HMAC is computed as the body arrives.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mayLeadToWork, worthDeciding } from '../github/events.js';
import { JOB, repoLimit, type EventPayload } from '../jobs/payloads.js';
import type { JobQueue } from '../queue/queue.js';
import type { Logger } from '../util/logger.js';
import type { Target } from '../github/types.js';
import { DEFAULT_REPO_CONCURRENCY, DEFAULT_WEBHOOK_BUFFER_MIB, DEFAULT_WEBHOOK_LIMITS } from '../settings/index.js';
import { BodyAdmission, clientOf, type Body, type BodyLimits } from './admission.js';

/** Probot's (and @octokit/webhooks') default path. */
export const DEFAULT_WEBHOOK_PATH = '/api/github/webhooks';
/** GitHub caps a webhook payload at 25 MB. */
const MAX_BODY_BYTES = 25 * 1024 * 1024;
/** Bodies read at once, together (SWT_WEBHOOK_BUFFER_MIB; settings/index.ts says why this much). */
const DEFAULT_BUFFER_BYTES = DEFAULT_WEBHOOK_BUFFER_MIB * 1024 * 1024;
/** GitHub gives up after 10 s: answer before it does, truthfully. */
const ANSWER_WITHIN_MS = 9_000;
const HEADERS = ['x-github-event', 'x-hub-signature-256', 'x-github-delivery'] as const;
const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const JSON_TYPE = /^\s*application\/json\s*(?:;|$)/i;

export interface ReceiverOptions {
  /** WEBHOOK_SECRET: the App's webhook secret, never logged. */
  secret: string;
  /** Default /api/github/webhooks (WEBHOOK_PATH). */
  path?: string;
  queue: Pick<JobQueue, 'enqueue'>;
  /** `event.action` names the App acts on; other verified events are answered and dropped. */
  handles: ReadonlySet<string>;
  /** SWT_REPO_CONCURRENCY: heavy jobs of one repository at once (a delivery queued into the heavy lane counts). */
  repoConcurrency?: number;
  log: Logger;
  maxBodyBytes?: number;
  /** What all bodies being read at once may hold (default 40 MiB). */
  bufferBytes?: number;
  /** The reserve, per-client caps and idle cut of bodies being read (admission.ts). */
  limits?: Partial<BodyLimits & { idleMs: number }>;
  answerWithinMs?: number;
}

/**
 * The key a webhook is queued under: the SHA-256 of its signed body. The delivery id and the event
 * name are outside the signature, so a replay under new ones is the same key.
 */
export function eventKey(bodyDigest: string): string {
  return `event:sha256:${bodyDigest}`;
}

/** The object each handled event's payload carries: a signed body sent under another event's name is refused. */
const PAYLOAD_OF: Record<string, string> = { issues: 'issue', issue_comment: 'comment', pull_request: 'pull_request', check_run: 'check_run' };

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

/**
 * The job of a delivery, keyed by its body's digest, so enqueueing it is the dedup. One that may
 * lead to a reproduction or a validation goes straight to the heavy lane (`work`), whose job decides
 * and runs it (one queue trip); the rest to the fast lane (`event`).
 */
export function eventJob(delivery: { id: string; name: string; payload: unknown; target: Target; digest: string }, repoConcurrency = DEFAULT_REPO_CONCURRENCY) {
  const { installationId } = delivery.target;
  const heavy = mayLeadToWork(delivery.name, delivery.payload);
  return {
    kind: heavy ? JOB.work : JOB.event,
    payload: { name: delivery.name, payload: delivery.payload, delivery: delivery.id, target: delivery.target, ...(installationId ? { installationId } : {}) } satisfies EventPayload,
    key: eventKey(delivery.digest),
    ...(heavy ? { limit: repoLimit(delivery.target, repoConcurrency) } : {}),
  };
}

interface ReadBody {
  body: Buffer;
  /** Hex SHA-256 of the body. */
  digest: string;
  /** Hex HMAC-SHA256 of the body under the secret. */
  hmac: string;
}

/** Why a body was not read to its end: its client went away, it stalled, or a newcomer took its room. */
class BodyCut extends Error {
  readonly why: 'gone' | 'idle' | 'evicted';
  constructor(why: 'gone' | 'idle' | 'evicted') {
    super(`webhook body not read: ${why}`);
    this.why = why;
  }
}

/**
 * Reads a body of a declared length, hashing as it arrives and counting it on `body`; rejects
 * (BodyCut) when the client goes away, no byte came for `idleMs`, or `signal` aborts (eviction).
 */
function readBody(req: IncomingMessage, secret: string, body: Body, idleMs: number, signal: AbortSignal): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const hash = createHash('sha256');
    const hmac = createHmac('sha256', secret);
    let idle: NodeJS.Timeout | undefined;
    const onData = (c: Buffer) => {
      hash.update(c);
      hmac.update(c);
      chunks.push(c);
      body.received += c.length;
      idle?.refresh();
    };
    const stop = (e: BodyCut) => {
      clearTimeout(idle);
      req.off('data', onData);
      signal.removeEventListener('abort', onAbort);
      reject(e);
    };
    const onAbort = () => stop(new BodyCut('evicted'));
    idle = setTimeout(() => stop(new BodyCut('idle')), idleMs);
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('data', onData);
    req.once('end', () => {
      clearTimeout(idle);
      signal.removeEventListener('abort', onAbort);
      resolve({ body: Buffer.concat(chunks), digest: hash.digest('hex'), hmac: hmac.digest('hex') });
    });
    req.once('error', () => stop(new BodyCut('gone')));
    req.once('close', () => {
      if (!req.complete) stop(new BodyCut('gone'));
    });
  });
}

function signatureMatches(header: string, hmacHex: string): boolean {
  const m = SIGNATURE.exec(header.trim());
  if (!m) return false;
  return timingSafeEqual(Buffer.from(m[1]!.toLowerCase(), 'hex'), Buffer.from(hmacHex, 'hex'));
}

/** Answers without reading the body, and closes the connection (Node drops the socket once the answer is out). */
function refuse(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}): void {
  res.setHeader('connection', 'close');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  answer(res, status, { error });
}

/**
 * Queues the webhook and answers 200, or 503 when the queue has not taken it within `within` ms:
 * GitHub shows that failure, so it can be redelivered.
 */
async function enqueueInTime(
  o: ReceiverOptions,
  res: ServerResponse,
  ev: Delivery,
  within: number,
): Promise<void> {
  const { id, name, action } = ev;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), within)));
  const queued = o.queue.enqueue<EventPayload>(eventJob({ id, name, payload: ev.payload, target: ev.target, digest: ev.digest }, o.repoConcurrency));
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
}

/** Default limits of the bodies read at once (settings/index.ts reads the operator's). */
export const DEFAULT_BODY_LIMITS: BodyLimits & { idleMs: number } = { ...DEFAULT_WEBHOOK_LIMITS, bufferBytes: DEFAULT_BUFFER_BYTES };

/** Refuses a request that the headers already condemn, before a byte of its body is held; true when refused. */
function refusedOnHeaders(o: ReceiverOptions, req: IncomingMessage, res: ServerResponse, max: number): boolean {
  const missing = HEADERS.filter((h) => typeof req.headers[h] !== 'string');
  if (missing.length) return (refuse(res, 400, `Required headers missing: ${missing.join(', ')}`), true);
  if (!SIGNATURE.test((req.headers['x-hub-signature-256'] as string).trim())) return (refuse(res, 400, 'signature does not match event payload and secret'), true);
  const declared = req.headers['content-length'];
  if (declared === undefined || !/^\d+$/.test(declared)) return (refuse(res, 411, 'a webhook must declare its Content-Length'), true);
  if (Number(declared) > max) return (refuse(res, 413, `payload larger than ${max} bytes`), true);
  return false;
}

/**
 * Admits a body (admission.ts decides: pool, reserve, per-client caps, eviction) and reads it; or
 * answers why not: 503 when there is no room or a newcomer took its room, 408 when it stalled.
 * Undefined when it was not read (answered, or the client is gone).
 */
async function admitAndRead(o: ReceiverOptions, admission: BodyAdmission, idleMs: number, req: IncomingMessage, res: ServerResponse): Promise<ReadBody | undefined> {
  const id = req.headers['x-github-delivery'] as string;
  const length = Number(req.headers['content-length']);
  const client = clientOf(req.socket.remoteAddress);
  const abort = new AbortController();
  const body = admission.admit(client, length, () => abort.abort());
  if (typeof body === 'string') {
    const reserved = admission.reserved;
    o.log.warn({ delivery: id, client, bytes: length, reserved }, body === 'client' ? 'webhook refused: this client already has its share of bodies in flight' : "webhook refused: the bodies being read already hold the receiver's allowance");
    refuse(res, 503, 'too many webhook bodies are being received; redeliver later', { 'retry-after': '10' });
    return undefined;
  }
  try {
    return await readBody(req, o.secret, body, idleMs, abort.signal);
  } catch (e) {
    const why = (e as BodyCut).why;
    if (why === 'gone') return undefined; // nothing to answer
    o.log.warn({ delivery: id, client, bytes: length, received: body.received }, why === 'idle' ? `webhook body stalled for ${idleMs} ms: cut` : 'webhook body too slow: its room went to another request');
    refuse(res, why === 'idle' ? 408 : 503, why === 'idle' ? 'the body stopped arriving' : 'the body arrived too slowly; redeliver later');
    // It may never stop sending: the socket goes once the answer is out.
    res.once('finish', () => req.socket.destroy());
    return undefined;
  } finally {
    admission.release(body);
  }
}

/** A delivery to act on: its event, verified payload and target. */
interface Delivery {
  id: string;
  name: string;
  action: unknown;
  payload: unknown;
  target: Target;
  digest: string;
}

/** What a read body says: the delivery to queue, or the answer that refuses (4xx) or ignores (200) it. */
function deliveryOf(o: ReceiverOptions, req: IncomingMessage, read: ReadBody): Delivery | { status: number; body: string | { error: string } } {
  const name = req.headers['x-github-event'] as string;
  const id = req.headers['x-github-delivery'] as string;
  if (read.body.length === 0 || !signatureMatches(req.headers['x-hub-signature-256'] as string, read.hmac)) {
    o.log.warn({ delivery: id, event: name }, 'webhook signature does not match: not from this App (or WEBHOOK_SECRET differs)');
    return { status: 400, body: { error: 'signature does not match event payload and secret' } };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(read.body.toString('utf8'));
  } catch {
    return { status: 400, body: { error: 'payload is not valid JSON' } };
  }
  const action = (payload as { action?: unknown })?.action;
  if (!o.handles.has(`${name}.${String(action)}`)) {
    o.log.debug({ delivery: id, event: name, action }, 'webhook not acted on');
    return { status: 200, body: 'ok\n' };
  }
  const carried = PAYLOAD_OF[name];
  if (carried && typeof (payload as Record<string, unknown>)[carried] !== 'object') {
    o.log.warn({ delivery: id, event: name }, `a signed body sent as ${name} carries no ${carried}: another event's body, refused`);
    return { status: 400, body: { error: `a ${name} payload carries ${carried}` } };
  }
  const target = targetOfPayload(payload);
  if (!target) return { status: 400, body: { error: `${name}.${String(action)} payload names no repository` } };
  if (!worthDeciding(name, payload)) {
    o.log.debug({ delivery: id, event: name, action }, 'webhook leads nowhere (a comment with no command, a title edit)');
    return { status: 200, body: 'ok\n' };
  }
  return { id, name, action, payload, target, digest: read.digest };
}

export function webhookReceiver(o: ReceiverOptions): RequestHandler {
  if (!o.secret) throw new Error('the webhook receiver needs the App\'s webhook secret (WEBHOOK_SECRET)');
  const path = trimSlashes(o.path ?? DEFAULT_WEBHOOK_PATH);
  const max = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const { idleMs, ...limits } = { ...DEFAULT_BODY_LIMITS, ...(o.bufferBytes ? { bufferBytes: o.bufferBytes } : {}), ...o.limits };
  const admission = new BodyAdmission(limits);
  const within = o.answerWithinMs ?? ANSWER_WITHIN_MS;

  const receive = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') return refuse(res, 404, `Unknown route: ${req.method} ${path}`);
    if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) return refuse(res, 415, 'Unsupported "Content-Type" header value. Must be "application/json"');
    if (refusedOnHeaders(o, req, res, max)) return;
    const read = await admitAndRead(o, admission, idleMs, req, res);
    if (!read) return;
    const delivery = deliveryOf(o, req, read);
    if ('status' in delivery) return answer(res, delivery.status, delivery.body);
    await enqueueInTime(o, res, delivery, within);
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
