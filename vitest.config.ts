import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import LongestFirst from './test/helpers/sequencer.js'

/**
 * Files that must run in a module graph of their own (`isolate`, Vitest's default): they mock a module, or read
 * process-wide state of src/ that an earlier file in the same process would have moved. Every other node file runs
 * without isolation (one worker's files share their imports: src/, zod's schemas, PGlite's compiled WebAssembly), since
 * src/'s module state is caches of pure functions, counters read as differences, or settings each createApp sets anew
 * (docs/ARCHITECTURE.md, "Tests").
 */
const ISOLATED = [
  // vi.mock of src/users/passwords.ts.
  'test/security-public-hashing.test.ts',
  // Counts compiles of patterns in the process-wide regex cache (one compile for a pattern it has not seen).
  'test/security-evaluation-work.test.ts',
  // Prepares 225,000 stored values per request: after other evaluation files in the same process (the regex cache
  // full, a larger heap) three of its tests took over 30 s under load, 12–17 s alone.
  'test/security-evaluation-cost.test.ts',
  // The event count cache's retry times are process-wide, by filter (events/count-cache.ts).
  'test/events.test.ts',
  'test/security-project-history.test.ts',
]

export default defineConfig({
  test: {
    // Vitest runs one file at a time on a 2-core machine (cores − 1); its files wait on PGlite, workerd and Chromium
    // as much as they compute, so two at a time there take the suite from ~18 to ~14 minutes under load.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll's own default (1 s) is less than one step of a loaded machine: a browser test's poll of a locator
    // (whose own wait is the page's 10 s) or a server's answer then failed though it came. Polls end when they pass.
    expect: { poll: { timeout: 10_000 } },
    // The longest files first (test/file-durations.txt), so that no long file starts last and runs alone.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/workerd/**', ...ISOLATED],
          isolate: false,
          globalSetup: ['test/helpers/console-setup.ts', 'test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'node-isolated',
          include: ISOLATED,
          globalSetup: ['test/helpers/console-setup.ts', 'test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // The deployable worker bundle in workerd (Miniflare) against PGlite served over the Postgres protocol.
          name: 'workerd',
          include: ['test/workerd/**/*.test.ts'],
          // build-setup.ts: the bundle every file of the project runs, built once.
          globalSetup: ['test/helpers/console-setup.ts', 'test/helpers/global-setup.ts', 'test/workerd/build-setup.ts'],
        },
      },
    ],
  },
})
