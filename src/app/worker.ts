/**
 * `swt worker`: a process that only runs jobs. It takes them from the queue (Redis with
 * REDIS_URL: any number of workers on any number of machines; else the SQLite queue in
 * SWT_DATA_DIR, shared with `npm start` on the same machine), runs their containers on its own
 * Docker engine (the local one or DOCKER_HOST), and talks to GitHub as the App (APP_ID,
 * PRIVATE_KEY or PRIVATE_KEY_PATH, GHE_HOST). It serves no webhooks; it reports through heartbeats.
 * On SIGTERM its containers are removed and it exits; the jobs it had are resumed by another
 * worker (after BullMQ's lock runs out), or by this one when it restarts.
 */
import { createProbot } from 'probot';
import { envValues, processEnvironment } from '../settings/index.js';
import { SwtError } from '../util/errors.js';
import { octokitClass, swtApp } from './app.js';
import { openServices, type Services, type ServicesOptions } from './services.js';

export interface RunningWorker {
  services: Services;
  stop(): Promise<void>;
}

export async function runWorker(opts: Omit<ServicesOptions, 'role'> = {}): Promise<RunningWorker> {
  const env = opts.env ?? processEnvironment();
  const e = envValues(env);
  if (!e.APP_ID || !(e.PRIVATE_KEY || e.PRIVATE_KEY_PATH)) {
    throw new SwtError('BAD_CONFIG', 'a worker acts as the GitHub App: set APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH)', { hint: '`swt doctor` checks them' });
  }
  const services = await openServices({ ...opts, env, role: 'worker' });
  const Octokit = octokitClass(services.settings.githubThrottle);
  const probot = createProbot({ env, overrides: { log: services.logger.child({ name: 'probot' }), ...(Octokit ? { Octokit } : {}) } });
  await swtApp(services)(probot, { cwd: process.cwd(), addHandler: () => undefined });
  services.logger.info({ worker: services.id, engine: services.engine }, 'worker started');
  return {
    services,
    async stop() {
      await services.close();
    },
  };
}
