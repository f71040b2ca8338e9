/**
 * The App's HTTP server: its handlers (webhook receiver, health, status page, metrics) in the order
 * added, then 404, under the operator's limits. Unlike Probot's `createNodeMiddleware`, it mounts no
 * webhook middleware of Probot's: the receiver answers every delivery, so Probot's would be built and never reached.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApplicationFunctionOptions } from 'probot';
import type { Settings } from '../settings/index.js';
import { SwtError } from '../util/errors.js';
import type { Logger } from '../util/logger.js';

export type Handler = Parameters<ApplicationFunctionOptions['addHandler']>[0];

/** The handlers tried in turn; an error is a 500 (or the end of an answer begun), logged. */
export function chain(handlers: Handler[], log: Logger): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      for (const h of handlers) if (await h(req, res)) return;
      if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    } catch (e) {
      log.error({ err: (e as Error).message, url: req.url?.split('?')[0] }, 'request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
      else res.end();
    }
  };
}

export interface Listening {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves `handle` on host:port (0: any free one). Node's defaults (5 min per request, no cap on connections) would let slow clients hold the process. */
export async function listen(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>, limits: Settings['http'], at: { port: number; host: string }): Promise<Listening> {
  const server: Server = createServer({ headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: 1000 });
  server.maxConnections = limits.maxConnections;
  server.on('request', (req, res) => void handle(req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at.port, at.host, () => resolve());
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new SwtError('BAD_CONFIG', `port ${at.port} on ${at.host} is in use: set PORT to another one`);
    throw e;
  }
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${at.host.includes(':') ? `[${at.host}]` : at.host}:${port}`,
    port,
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
    },
  };
}
