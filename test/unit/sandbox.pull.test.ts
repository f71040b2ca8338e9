import { Readable } from 'node:stream';
import Docker from 'dockerode';
import { tryPull } from '../../src/sandbox/images/baseImages.js';
import { createLogger } from '../../src/util/logger.js';

// The pull timeout is about silence, not duration: a slow pull that makes progress finishes,
// a silent one is abandoned after idleMs. A fake engine stands in for the registry.

const log = createLogger({ level: 'silent' });

function fakeDocker(opts: { events: number; everyMs: number }): { docker: Docker; aborted: () => boolean; pulls: () => number } {
  const docker = new Docker({ socketPath: '/nonexistent/docker.sock' });
  let pulled = false;
  let aborted = false;
  let pulls = 0;
  Object.assign(docker, {
    getImage: () => ({
      inspect: async () => {
        if (pulled) return { Id: 'sha256:fake' };
        throw Object.assign(new Error('no such image'), { statusCode: 404 });
      },
    }),
    pull: async (_ref: string, o: { abortSignal: AbortSignal }) => {
      pulls++;
      let n = 0;
      const stream = new Readable({ read() {} });
      const timer = setInterval(() => {
        if (n++ < opts.events) {
          stream.push(JSON.stringify({ status: 'Downloading', id: 'layer', progress: `${n}` }) + '\n');
        } else {
          clearInterval(timer);
          pulled = true;
          stream.push(null);
        }
      }, opts.everyMs);
      o.abortSignal.addEventListener('abort', () => {
        aborted = true;
        clearInterval(timer);
        stream.destroy();
      });
      return stream;
    },
  });
  return { docker, aborted: () => aborted, pulls: () => pulls };
}

describe('docker pull with an inactivity timeout', () => {
  it('lets a pull that keeps making progress finish, even past the timeout', async () => {
    const { docker, aborted } = fakeDocker({ events: 10, everyMs: 60 });
    const started = Date.now();
    expect(await tryPull(docker, 'fake/slow:1', 250, log)).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(250);
    expect(aborted()).toBe(false);
  });

  it('abandons a pull that goes silent, and does not retry it right away', async () => {
    const { docker, aborted, pulls } = fakeDocker({ events: 1, everyMs: 5000 });
    const started = Date.now();
    expect(await tryPull(docker, 'fake/silent:1', 200, log)).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(aborted()).toBe(true);
    expect(await tryPull(docker, 'fake/silent:1', 200, log)).toBe(false);
    expect(pulls()).toBe(1);
  });
});
