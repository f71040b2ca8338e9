/**
 * bench:load's sender, in a process of its own so that nothing else on its event loop (the fake
 * GitHub answering the workers) delays the clock. It stands in for GitHub, whose cost is not the
 * web process's: bodies are signed before the clock starts, and each delivery is one POST on a
 * connection of its own (as GitHub's deliveries come) through node:http, which costs a fraction
 * of fetch's CPU. Prints one JSON line: each delivery's status and time to the answer, and the
 * CPU time the sender itself used while sending.
 * argv: <deliveries.json> <url> <burst size> <gap ms>; WEBHOOK_SECRET in the environment.
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';

interface Delivery {
  id: string;
  event: string;
  body: string;
}

interface Signed {
  id: string;
  body: Buffer;
  headers: Record<string, string | number>;
}

const agent = new Agent({ keepAlive: false });

function post(url: URL, d: Signed): Promise<{ id: string; status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: 'POST', headers: d.headers, agent }, (res) => {
      res.resume();
      res.once('end', () => resolve({ id: d.id, status: res.statusCode ?? 0, ms: performance.now() - started }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(d.body);
  });
}

async function main(): Promise<void> {
  const [file, url, burstText, gapText] = process.argv.slice(2);
  const deliveries = JSON.parse(await readFile(file!, 'utf8')) as Delivery[];
  const burst = Number(burstText);
  const gap = Number(gapText);
  const secret = process.env.WEBHOOK_SECRET ?? '';
  const target = new URL('/api/github/webhooks', url);
  const signed: Signed[] = deliveries.map((d) => {
    const body = Buffer.from(d.body);
    return {
      id: d.id,
      body,
      headers: {
        'content-type': 'application/json',
        'content-length': body.length,
        'x-github-event': d.event,
        'x-github-delivery': d.id,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
        'user-agent': 'GitHub-Hookshot/bench',
      },
    };
  });
  const out: Array<{ id: string; status: number; ms: number }> = [];
  const before = process.cpuUsage();
  for (let i = 0; i < signed.length; i += burst) {
    out.push(...(await Promise.all(signed.slice(i, i + burst).map((d) => post(target, d)))));
    await new Promise((r) => setTimeout(r, gap));
  }
  const cpu = process.cpuUsage(before);
  process.stdout.write(`${JSON.stringify({ answers: out, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
}

main().catch((e) => {
  process.stderr.write(`load client failed: ${(e as Error).message}\n`);
  process.exit(1);
});
