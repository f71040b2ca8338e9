/** The liveness answer of every process that serves HTTP, from the queue port alone. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JobQueue } from '../queue/queue.js';
import { errorLine } from '../util/errors.js';

/** GET /healthz: 200 while the queue answers (within 2 s), with its counts. */
export function healthHandler(services: { queue: JobQueue; engine: 'sqlite' | 'redis'; role: string }) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/healthz') return false;
    void (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const counts = await Promise.race([
          services.queue.counts(),
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the ${services.engine === 'redis' ? 'Redis' : 'SQLite'} queue does not answer`)), 2000))),
        ]);
        const jobs = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', role: services.role, engine: services.engine, jobs }));
      } catch (e) {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'error', error: errorLine(e) }));
      } finally {
        clearTimeout(timer);
      }
    })();
    return true;
  };
}
