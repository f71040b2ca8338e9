/**
 * bench:load's sender, in a process of its own so that nothing else on its event loop (the fake
 * GitHub answering the workers) delays the clock: signs and POSTs prepared webhook deliveries in
 * bursts, and prints one JSON line with each delivery's status and time to the answer.
 * argv: <deliveries.json> <url> <burst size> <gap ms>; WEBHOOK_SECRET in the environment.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';

interface Delivery {
  id: string;
  event: string;
  body: string;
}

async function main(): Promise<void> {
  const [file, url, burstText, gapText] = process.argv.slice(2);
  const deliveries = JSON.parse(await readFile(file!, 'utf8')) as Delivery[];
  const burst = Number(burstText);
  const gap = Number(gapText);
  const secret = process.env.WEBHOOK_SECRET ?? '';
  const out: Array<{ id: string; status: number; ms: number }> = [];
  for (let i = 0; i < deliveries.length; i += burst) {
    const sent = deliveries.slice(i, i + burst).map(async (d) => {
      const signature = `sha256=${createHmac('sha256', secret).update(d.body).digest('hex')}`;
      const started = performance.now();
      const res = await fetch(`${url}/api/github/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': d.event, 'x-github-delivery': d.id, 'x-hub-signature-256': signature, 'user-agent': 'GitHub-Hookshot/bench' },
        body: d.body,
      });
      await res.text();
      return { id: d.id, status: res.status, ms: performance.now() - started };
    });
    out.push(...(await Promise.all(sent)));
    await new Promise((r) => setTimeout(r, gap));
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((e) => {
  process.stderr.write(`load client failed: ${(e as Error).message}\n`);
  process.exit(1);
});
