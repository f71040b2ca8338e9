import Sequencer from '@jest/test-sequencer';

/**
 * Longest files first, so that two workers sharing one run finish together: a long file started
 * last would run alone at the end. Jest's own timings of this machine's last run decide when it
 * has them; on a clean clone it has none, and these figures (seconds, CI of stop 44, rounded, after
 * that stop's cuts) stand in. A stale figure costs minutes of balance, never a result.
 */
const SECONDS = {
  'examples/eval.instances': 800,
  'integration/pipeline.validateFlaky': 700,
  'integration/ecosystems.java': 660,
  'examples/pipeline.reproduce': 430,
  'integration/harness.nodeRounds': 320,
  'redteam/github.approvals': 270,
  'examples/eval.coverage': 230,
  'examples/eval.swebench': 260,
  'integration/package.dockerImage': 190,
  'integration/ecosystems.mavenReactor': 185,
  'redteam/harness.testMachinery': 185,
  'integration/pipeline.snippetRunners': 180,
  'integration/pipeline.reproduce': 175,
  'examples/eval': 175,
  'integration/ecosystems.c': 165,
  'integration/pipeline.validateDeps': 155,
  'integration/ecosystems.nodePackageManagers': 145,
  'examples/generation.snippet': 145,
  'integration/harness.mocha': 140,
  'scale/app.faultsDocker': 130,
  'integration/harness.snapshots': 125,
  'integration/pipeline.validateAsOf': 125,
  'integration/eval.coverage': 120,
  'redteam/webhooks.receiverMemory': 110,
};

export default class LongestFirst extends Sequencer {
  /** Seconds: jest's own last timing, else the figure above, else 0 (then jest's order, by size). */
  seconds(test) {
    const timed = this._getCache(test)[test.path]?.[1];
    if (timed) return timed / 1000;
    const key = /test\/(.+)\.test\.ts$/.exec(test.path.replaceAll('\\', '/'))?.[1];
    return (key && SECONDS[key]) || 0;
  }

  sort(tests) {
    const byJest = super.sort(tests);
    const order = new Map(byJest.map((t, i) => [t, i]));
    return [...byJest].sort((a, b) => this.seconds(b) - this.seconds(a) || order.get(a) - order.get(b));
  }
}
