/**
 * Real webhook payloads (@octokit/webhooks-examples), a test App key, and signed delivery over
 * HTTP. Free of nock, so tests that talk to real servers can use it.
 */
import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

type AnyPayload = Record<string, any>;

const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as Array<{ name: string; examples: AnyPayload[] }>;

export const SECRET = 'swt-test-webhook-secret';
export const INSTALLATION = 4242;
export const TOKEN = 'ghs_TestInstallationToken0123456789AB';

let key: string | undefined;
/** A fresh RSA key in the PKCS#1 PEM that GitHub hands out. */
export function appKey(): string {
  key ??= generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
  return key;
}

/** A real example payload (deep copy), with the installation set and `patch` merged over it. */
export function example(name: string, action: string, patch: (p: AnyPayload) => void = () => {}, index = 0): AnyPayload {
  const def = examples.find((d) => d.name === name);
  const found = def?.examples.filter((e) => e.action === action)[index];
  if (!found) throw new Error(`no example ${name}.${action}[${index}]`);
  const p = structuredClone(found);
  p.installation = { id: INSTALLATION, node_id: 'MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==' };
  patch(p);
  return p;
}

export function sign(body: string, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** POSTs a signed webhook to the App, as GitHub does. */
export async function deliver(url: string, event: string, payload: unknown, opts: { id?: string; secret?: string } = {}): Promise<{ status: number; id: string; ms: number }> {
  const id = opts.id ?? randomUUID();
  const body = JSON.stringify(payload);
  const started = performance.now();
  const res = await fetch(`${url}/api/github/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': id, 'x-hub-signature-256': sign(body, opts.secret) },
    body,
  });
  await res.text();
  return { status: res.status, id, ms: performance.now() - started };
}

