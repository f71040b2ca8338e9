#!/usr/bin/env node
/**
 * `npm start`: the GitHub App, configured by the environment as Probot's `run` is (APP_ID,
 * PRIVATE_KEY(_PATH), WEBHOOK_SECRET, WEBHOOK_PATH, GHE_HOST/GHE_PROTOCOL, HOST, PORT,
 * WEBHOOK_PROXY_URL, LOG_LEVEL, REDIS_URL) and served by listenApp, as the tests serve it: the
 * webhook receiver takes the place of Probot's webhook middleware. With no credentials yet, Probot's `run` serves
 * its setup flow, which registers the App from app.yml. Jobs live in SWT_DATA_DIR (or Redis).
 */
import { getPrivateKey } from '@probot/get-private-key';
import { createProbot, run } from 'probot';
import { envValues, processEnvironment } from '../settings/index.js';
import { errorLine, isSwtError } from '../util/errors.js';
import { listenApp, octokitClass } from './app.js';
import { openServices } from './services.js';
import { startWebhookProxy, type WebhookProxy } from './webhookProxy.js';

// Probot and its key loader read the environment themselves; swt's own reads go through settings/.
const env = processEnvironment();

function privateKey(): string | null {
  try {
    return getPrivateKey({ env });
  } catch {
    return null;
  }
}

async function serve(): Promise<() => Promise<void>> {
  // Every variable is parsed before anything starts: a bad value stops here, with its name.
  const e = envValues();
  if (!e.APP_ID || !privateKey()) {
    const setup = await run(() => undefined);
    return () => setup.stop();
  }
  const services = await openServices();
  const Octokit = octokitClass(services.settings.githubThrottle);
  const probot = createProbot({ env, overrides: { log: services.logger.child({ name: 'probot' }), ...(Octokit ? { Octokit } : {}) } });
  const path = e.WEBHOOK_PATH;
  const app = await listenApp(services, probot, {
    webhook: { secret: e.WEBHOOK_SECRET ?? '', path },
    port: services.settings.port,
    host: services.settings.host,
  });
  let proxy: WebhookProxy | undefined;
  if (e.WEBHOOK_PROXY_URL) {
    proxy = await startWebhookProxy({ source: e.WEBHOOK_PROXY_URL, target: `${app.url}${path}`, log: services.logger }).catch((e: Error) => {
      services.logger.warn({ err: e.message }, 'WEBHOOK_PROXY_URL: the smee channel is not reachable; webhooks reach only this address');
      return undefined;
    });
  }
  return async () => {
    await proxy?.stop();
    await app.stop();
  };
}

try {
  const stop = await serve();
  // Docker stops containers with SIGTERM: stop taking webhooks and let the queue settle. A job cut
  // short stays in the queue and resumes at the next start; its containers go with this process.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void stop()
        .catch(() => undefined)
        .finally(() => process.exit(0));
    });
  }
} catch (e) {
  process.stderr.write(`swt-bot: error: ${errorLine(e, 2000)}\n`);
  process.exit(isSwtError(e) ? 2 : 1);
}
