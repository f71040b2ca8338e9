import { connectDocker } from '../../src/sandbox/docker.js';
import { demux, demuxBuffer, outputAfterExit, TailBuffer } from '../../src/sandbox/containers/containerIo.js';
import { ensureBaseImage, loadCaBundle } from '../../src/sandbox/index.js';

// A run's output after its container exits: from the attach stream, or from the container's log
// when the stream's end comes late (a loaded engine), with nothing lost at the end either way.

const docker = connectDocker();
let image: string;

beforeAll(async () => {
  image = await ensureBaseImage('python:3.11', { docker, caBundle: await loadCaBundle() });
}, 600_000);

// Lines on stdout and stderr by turns, the last one on stdout right before the exit.
const SCRIPT = 'for i in $(seq 1 2000); do echo "out $i"; echo "err $i" >&2; done; echo LAST';
const OUT = Array.from({ length: 2000 }, (_, i) => `out ${i + 1}\n`).join('') + 'LAST\n';
const ERR = Array.from({ length: 2000 }, (_, i) => `err ${i + 1}\n`).join('');

/** A container that ran SCRIPT to its end, with what its attach stream brought: both streams as one tail, and each alone. */
async function exitedContainer(max: number) {
  const c = await docker.createContainer({
    Image: image,
    Cmd: ['sh', '-c', SCRIPT],
    Entrypoint: [],
    Labels: { [`swt-test-${process.pid}`]: '1' },
    HostConfig: { NetworkMode: 'none', LogConfig: { Type: 'json-file', Config: { 'max-size': '8m', 'max-file': '1' } } },
  });
  const tail = new TailBuffer(max);
  const own = { out: '', err: '' };
  const attach = await c.attach({ stream: true, stdout: true, stderr: true });
  const ended = demux(
    docker,
    attach,
    (b) => (tail.push(b), (own.out += b.toString())),
    (b) => (tail.push(b), (own.err += b.toString())),
  );
  await c.start();
  await c.wait();
  return { c, tail, ended, own };
}

/** The container's log, read as outputAfterExit reads it: each stream alone, and both as logged. */
async function logStreams(c: Awaited<ReturnType<typeof exitedContainer>>['c']) {
  const raw = (await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
  const got = { out: '', err: '', both: '' };
  demuxBuffer(raw, (b, stream) => {
    got.both += b.toString();
    if (stream === 1) got.out += b.toString();
    else got.err += b.toString();
  });
  return got;
}

describe('the output of an exited container', () => {
  it('when the stream ends in time, it is the stream; when it does not, the log, with every byte to the last line', async () => {
    const { c, tail, ended, own } = await exitedContainer(1024 ** 2);
    try {
      // A minute's grace: on a loaded machine the stream may end late, and this case is about the stream.
      const streamed = await outputAfterExit(c, ended, tail, 60_000);
      expect(streamed.fromLog).toBe(false);
      // Every byte of each stream arrived before the output was taken.
      expect(own).toEqual({ out: OUT, err: ERR });
      expect(streamed.tail.buffer().length).toBe(OUT.length + ERR.length);

      // A stream whose end never comes, as on an engine too busy to deliver it.
      const late = await outputAfterExit(c, new Promise<void>(() => undefined), new TailBuffer(1024 ** 2), 100);
      expect(late.fromLog).toBe(true);
      expect(late.tail.buffer().length).toBe(OUT.length + ERR.length);
      // The log holds each stream whole and in order; only how the two interleave may differ.
      expect(await logStreams(c)).toMatchObject({ out: OUT, err: ERR });
    } finally {
      await c.remove({ force: true });
    }
  });

  it('read from the log, it keeps the same bounded tail', async () => {
    const { c, ended } = await exitedContainer(1000);
    try {
      await ended;
      const late = await outputAfterExit(c, new Promise<void>(() => undefined), new TailBuffer(1000), 100);
      expect(late.fromLog).toBe(true);
      expect(late.tail.truncated).toBe(true);
      expect(late.tail.buffer().length).toBe(1000);
      // The last 1000 bytes of the log, both streams as they were logged.
      expect(late.tail.buffer().toString()).toBe(Buffer.from((await logStreams(c)).both).subarray(-1000).toString());
      expect(late.tail.toString()).toMatch(/(LAST|err 2000)\n$/);
    } finally {
      await c.remove({ force: true });
    }
  });
});
