import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
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
          globalSetup: ['test/helpers/console-setup.ts'],
        },
      },
    ],
  },
})
