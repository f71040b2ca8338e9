// Six suites: unit (pure, milliseconds), integration (real Docker on fixtures the project builds
// itself), examples (real Docker on ../shared/examples), app (the GitHub App), scale (Redis,
// worker processes, faults) and redteam (attacks on the trust boundaries, each a test that must hold).
const common = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  setupFiles: ['<rootDir>/test/setup.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', isolatedModules: true }] },
};
export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'], slowTestThreshold: 60 },
    { ...common, displayName: 'examples', testMatch: ['<rootDir>/test/examples/**/*.test.ts'], slowTestThreshold: 120 },
    // The GitHub App: handlers against nock, the queue, the repo cache, and the end-to-end run on the fake GitHub.
    { ...common, displayName: 'app', testMatch: ['<rootDir>/test/app/**/*.test.ts'], slowTestThreshold: 60 },
    // At scale: BullMQ on a real redis-server, worker processes, the status page in Chromium, faults.
    { ...common, displayName: 'scale', testMatch: ['<rootDir>/test/scale/**/*.test.ts'], slowTestThreshold: 60 },
    // Attacks on the trust boundaries (forks, other repositories, untrusted input, spend): every test is one attack that must fail.
    { ...common, displayName: 'redteam', testMatch: ['<rootDir>/test/redteam/**/*.test.ts'], slowTestThreshold: 60 },
  ],
  testTimeout: 600000,
  // Longest files first (CI shares one run between two workers).
  testSequencer: '<rootDir>/test/sequencer.mjs',
  // Test files run in a worker process that is replaced once it holds more than this after a file:
  // ESM modules under --experimental-vm-modules are never freed, and in band (what jest does with
  // one worker on 2 cores) the main process reached its 4 GB heap late in CI and stalled in GC.
  workerIdleMemoryLimit: '1GB',
};
