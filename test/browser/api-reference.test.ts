// The API reference at /docs in a real Chromium against the Node server (see harness.ts): it renders the routes from files of
// its own origin only, under the console's Content-Security-Policy, with nothing refused and nothing asked of another origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
})
afterAll(async () => {
  await ui?.close()
})

describe('the API reference', { timeout: 60_000 }, () => {
  it('shows the operations of the OpenAPI document, loading nothing from another origin and breaking no CSP rule', async () => {
    const page = await ui.newPage()
    const elsewhere: string[] = []
    const refused: string[] = []
    page.on('request', (request) => {
      if (!request.url().startsWith(ui.url) && !request.url().startsWith('data:')) elsewhere.push(request.url())
    })
    page.on('console', (message) => {
      if (message.type() === 'error') refused.push(message.text())
    })
    const response = await page.goto(`${ui.url}/docs`)
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'")
    // The first tag's operations (the document has hundreds: Swagger UI renders the later tags as it goes).
    await page.getByText('/health', { exact: true }).first().waitFor()
    // And the second tag's first operation, whichever it is (tags come in the order routes are declared).
    const document = (await (await fetch(`${ui.url}/docs/openapi.json`)).json()) as { paths: Record<string, Record<string, { tags?: string[] }>> }
    const tagOf = (path: string) => Object.values(document.paths[path]!)[0]?.tags?.[0]
    const second = Object.keys(document.paths).find((path) => tagOf(path) !== tagOf('/health'))!
    await page.getByText(second, { exact: true }).first().waitFor()
    await page.waitForLoadState('networkidle')
    expect(await page.title()).toBe('Flagpost API')
    expect(elsewhere).toEqual([])
    expect(refused).toEqual([])
  })
})
