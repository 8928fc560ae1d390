import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

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
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/workerd/**'],
          globalSetup: ['test/helpers/console-setup.ts', 'test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // The deployable worker bundle in workerd (Miniflare) against PGlite served over the Postgres protocol.
          name: 'workerd',
          include: ['test/workerd/**/*.test.ts'],
          globalSetup: ['test/helpers/console-setup.ts', 'test/helpers/global-setup.ts'],
        },
      },
    ],
  },
})
