#!/usr/bin/env node
/**
 * `npm start`: the GitHub App under Probot's `run`, which reads APP_ID, PRIVATE_KEY(_PATH),
 * WEBHOOK_SECRET, GHE_HOST/GHE_PROTOCOL, HOST and PORT — and, with no credentials yet, serves
 * Probot's setup flow that registers the App from app.yml. Jobs live in SWT_DATA_DIR.
 */
import { run } from 'probot';
import { octokitClass, openServices, swtApp } from './app.js';

const services = openServices();
const Octokit = octokitClass();
const server = await run(swtApp(services), Octokit ? { Octokit } : {});

// Docker stops containers with SIGTERM: stop taking webhooks and let the queue settle. A job cut
// short stays in the queue and resumes at the next start; its containers go with this process.
process.once('SIGTERM', () => {
  void (async () => {
    await server.stop().catch(() => undefined);
    await services.close().catch(() => undefined);
    process.exit(0);
  })();
});
