import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CONSOLE_SCHEMA_PATH, generateConsoleClientTypes } from '../scripts/console-client.js'
import { APP_PATHS, isAppPath } from '../src/app-paths.js'
import { createTestApp } from './helpers/app.js'

describe("the web console's API client", () => {
  it('is typed from the OpenAPI document as the routes are now (run `npm run console:client` after changing a route)', async () => {
    const committed = await readFile(CONSOLE_SCHEMA_PATH, 'utf8')
    expect(committed === (await generateConsoleClientTypes()), 'console/src/api/schema.d.ts is out of date: run `npm run console:client`').toBe(true)
  })
})

describe('which paths are the app and which the console', () => {
  it('routes every path of the OpenAPI document to the app', async () => {
    const app = await createTestApp()
    try {
      const document = (await app.call('GET', '/docs/openapi.json', { token: null })).body as { paths: Record<string, unknown> }
      const paths = Object.keys(document.paths).map((p) => p.replace(/\{[^}]+\}/g, 'x'))
      expect(paths.length).toBeGreaterThan(50)
      expect(paths.filter((p) => !isAppPath(p))).toEqual([])
      expect(['/docs', '/docs/openapi.json', '/api', '/api/admin/anything'].filter((p) => !isAppPath(p))).toEqual([])
      expect(['/', '/projects', '/projects/x/flags/y', '/events', '/sign-in', '/sign-up', '/invitations', '/apiary', '/healthy', '/assets/index.js'].filter(isAppPath)).toEqual([])
    } finally {
      await app.close()
    }
  })

  it("runs the worker first on exactly those paths at the edge (wrangler.toml's [assets])", async () => {
    const toml = await readFile(new URL('../wrangler.toml', import.meta.url), 'utf8')
    const assets = toml.match(/^\[assets\]\n((?:[^[\n].*\n)+)/m)?.[1] ?? ''
    expect(assets).toMatch(/^directory = "\.\/console\/dist"$/m)
    expect(assets).toMatch(/^not_found_handling = "single-page-application"$/m)
    const runWorkerFirst = JSON.parse(assets.match(/^run_worker_first = (\[.*\])$/m)?.[1] ?? 'null')
    expect(runWorkerFirst).toEqual([...APP_PATHS])
  })
})
