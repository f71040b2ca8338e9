/** A heartbeat's stop: a report being written is waited for, a beat still collecting is dropped, and nothing is logged after. */
import { startHeartbeat, type Heartbeats, type WorkerReport } from '../../src/web/heartbeat.js';

const REPORT: WorkerReport = { id: 'h/1/a', host: 'h', pid: 1, role: 'worker', kinds: ['fast'], startedAt: 0, seenAt: 0, docker: { error: 'none' }, evicted: [] };

/** A promise and its resolve/reject, for steps the test lets go one at a time. */
function gate<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const settle = () => new Promise((r) => setImmediate(r));

/** A heartbeat whose collect and report wait on gates the test opens; what it did, in order. */
function setup() {
  const collects: ReturnType<typeof gate<WorkerReport>>[] = [];
  const writes: ReturnType<typeof gate<void>>[] = [];
  const events: string[] = [];
  const heartbeats: Heartbeats = {
    report: () => {
      events.push('report');
      writes.push(gate<void>());
      return writes.at(-1)!.promise.then(() => void events.push('written'));
    },
    list: async () => [],
  };
  const beat = startHeartbeat({
    heartbeats,
    intervalMs: 60_000,
    collect: () => (collects.push(gate<WorkerReport>()), collects.at(-1)!.promise),
    onError: (e) => events.push(`error: ${(e as Error).message}`),
  });
  const stop = () => beat.stop().then(() => void events.push('stopped'));
  return { beat, stop, collects, writes, events };
}

test('a report being written when stop is called is waited for: stop resolves after it is written', async () => {
  const { stop, collects, writes, events } = setup();
  collects[0]!.resolve(REPORT);
  await settle();
  expect(events).toEqual(['report']);
  const stopped = stop();
  await settle();
  expect(events).toEqual(['report']);
  writes[0]!.resolve();
  await stopped;
  expect(events).toEqual(['report', 'written', 'stopped']);
});

test('a write that fails while stopping is neither logged nor thrown by stop', async () => {
  const { stop, collects, writes, events } = setup();
  collects[0]!.resolve(REPORT);
  await settle();
  const stopped = stop();
  writes[0]!.reject(new Error('Connection is closed.'));
  await stopped;
  await settle();
  expect(events).toEqual(['report', 'stopped']);
});

test('a beat still collecting when stop is called is not waited for, and its report is dropped', async () => {
  const { stop, collects, events } = setup();
  await stop();
  collects[0]!.resolve(REPORT);
  await settle();
  expect(events).toEqual(['stopped']);
});

test('a collect that fails after stop is not logged; one that fails before is', async () => {
  const first = setup();
  first.collects[0]!.reject(new Error('engine gone'));
  await settle();
  expect(first.events).toEqual(['error: engine gone']);
  await first.stop();

  const second = setup();
  await second.stop();
  second.collects[0]!.reject(new Error('engine gone'));
  await settle();
  expect(second.events).toEqual(['stopped']);
});

test('after stop, beat() starts nothing', async () => {
  const { beat, stop, collects, writes, events } = setup();
  collects[0]!.resolve(REPORT);
  await settle();
  writes[0]!.resolve();
  await stop();
  await beat.beat();
  expect(collects).toHaveLength(1);
  expect(events).toEqual(['report', 'written', 'stopped']);
});
