/**
 * WEBHOOK_PROXY_URL: a smee.io channel (Probot's setup flow proposes one when the machine has no
 * public address) whose deliveries smee-client forwards to the App's webhook path, signatures
 * intact, so the receiver verifies them as it does GitHub's own.
 */
import { SmeeClient } from 'smee-client';
import type { Logger } from '../util/logger.js';

export interface WebhookProxy {
  stop(): Promise<void>;
}

export async function startWebhookProxy(o: { source: string; target: string; log: Logger }): Promise<WebhookProxy> {
  const log = o.log.child({ mod: 'smee' });
  const client = new SmeeClient({
    source: o.source,
    target: o.target,
    // smee-client logs like console: one string per line.
    logger: { info: (m: unknown) => log.info(String(m)), error: (m: unknown) => log.warn(String(m instanceof Error ? m.message : m)) } as never,
    maxConnectionTimeout: 10_000,
  });
  await client.start();
  return { stop: () => client.stop() };
}
