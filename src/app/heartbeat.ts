/** A worker's heartbeat: what this process tells the others every few seconds (the status page reads it). */
import { hostname } from 'node:os';
import { errorLine } from '../util/errors.js';
import { startHeartbeat, type WorkerReport } from '../web/heartbeat.js';
import type { Services } from './services.js';

/** This worker's report: its lanes, its Docker engine, what eviction removed, its metrics (Redis only). */
async function workerReport(services: Services, kinds: string[], startedAt: number, host: () => Promise<WorkerReport['docker']>): Promise<WorkerReport> {
  const report = await host().catch((e: unknown) => ({ error: `Docker engine: ${errorLine(e)}` }));
  if (!('error' in report) && report.freeDiskBytes !== null) services.metrics.freeDiskBytes.set({ worker: services.id }, report.freeDiskBytes);
  return {
    id: services.id,
    host: hostname(),
    pid: process.pid,
    role: services.role,
    kinds,
    startedAt,
    seenAt: Date.now(),
    docker: report,
    // Each worker keeps its engine's environment images under SWT_ENV_CACHE_GB between builds too.
    evicted: services.sandbox.evictEnvironments ? (await services.sandbox.evictEnvironments().catch(() => ({ removed: [] }))).removed : [],
    metrics: services.engine === 'redis' ? await services.metrics.registry.getMetricsAsJSON() : undefined,
  };
}

/** Beats until the services close. The Docker client is loaded here, by the roles that run containers only. */
export async function beatAsWorker(services: Services, lanes: string[]): Promise<void> {
  const startedAt = Date.now();
  const { connectDocker } = await import('../sandbox/index.js');
  const { dockerHostReport } = await import('../web/dockerHost.js');
  // One client for every beat: the engine's disk usage (seconds of I/O) is remembered per client.
  const docker = connectDocker();
  const beat = startHeartbeat({
    heartbeats: services.heartbeats,
    intervalMs: services.options.heartbeatMs ?? services.settings.heartbeatMs,
    collect: () => workerReport(services, lanes, startedAt, () => dockerHostReport(docker)),
    onError: (e) => services.logger.warn({ err: (e as Error).message }, 'heartbeat failed'),
  });
  services.onClose(beat.stop);
}
