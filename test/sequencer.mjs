import Sequencer from '@jest/test-sequencer';

/**
 * Longest files first, so that two workers sharing one run finish together: a long file started
 * last would run alone at the end. Jest's own timings of this machine's last run decide when it
 * has them; on a clean clone it has none, and these figures (seconds, a local CI run of stop 48,
 * rounded) stand in. A stale figure costs minutes of balance, never a result.
 */
const SECONDS = {
  'integration/pipeline.validateFlaky': 600,
  'examples/eval.instances': 590,
  'integration/harness.nodeRounds': 340,
  'integration/ecosystems.java': 300,
  'examples/pipeline.reproduce': 260,
  'examples/generation.snippet': 200,
  'examples/eval.coverage': 195,
  'integration/package.dockerImage': 190,
  'integration/pipeline.snippetRunners': 175,
  'examples/eval.swebench': 175,
  'redteam/github.approvals': 165,
  'integration/ecosystems.c': 160,
  'examples/eval': 160,
  'scale/app.faultsDocker': 150,
  'redteam/harness.testMachinery': 140,
  'integration/ecosystems.nodePackageManagers': 140,
  'integration/pipeline.validateAsOf': 120,
  'integration/pipeline.reproduce': 120,
  'integration/harness.snapshots': 105,
  'integration/eval.coverage': 105,
  'integration/harness.mocha': 100,
  'integration/pipeline.validate': 95,
  'integration/ecosystems.mavenReactor': 95,
  'redteam/sandbox.diskInodes': 90,
  'redteam/webhooks.receiverMemory': 90,
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
