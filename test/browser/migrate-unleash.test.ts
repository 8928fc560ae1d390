// The console's "Migrate from Unleash" part of Backup and restore, in a real Chromium against the Node server (see
// harness.ts): a fake Unleash 8.2 serves the recorded answers of a real one (test/fixtures/unleash-8.2/admin-api.json)
// on loopback (the server allows private targets here), the plan of a dry run is shown before anything is written,
// then the migration writes the flags, and a wrong token's refusal is shown in words.
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

const answers = JSON.parse(readFileSync(new URL('../fixtures/unleash-8.2/admin-api.json', import.meta.url), 'utf8')).answers as Record<string, unknown>
const UNLEASH_TOKEN = '*:*.unleash-admin-secret-browser'
const recordedFlags = (answers['/api/admin/projects/default/features'] as { features: { name: string }[] }).features.map((f) => f.name)

let ui: ConsoleUnderTest
let unleash: Server
let unleashUrl: string
beforeAll(async () => {
  unleash = createServer((req, res) => {
    if (req.headers.authorization !== UNLEASH_TOKEN) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"name":"AuthenticationRequired","message":"bad token"}')
    const answer = answers[req.url!]
    if (answer === undefined) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"name":"NotFoundError"}')
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
  })
  await new Promise<void>((r) => unleash.listen(0, '127.0.0.1', r))
  unleashUrl = `http://127.0.0.1:${(unleash.address() as AddressInfo).port}`
  ui = await startConsole({ FLAGPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' })
})
afterAll(async () => {
  await ui?.close()
  if (unleash) await new Promise((r) => unleash.close(r))
})

describe('migrate from Unleash', { timeout: 90_000 }, () => {
  let page: Page
  const section = () => page.getByRole('region', { name: 'Migrate from Unleash' })

  it('shows a wrong token’s refusal, and writes nothing', async () => {
    page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Backup and restore' }).click()
    await section().waitFor()
    await section().getByLabel('Unleash URL').fill(unleashUrl)
    await section().getByLabel('Admin API token of that Unleash').fill('*:*.wrong')
    await section().getByRole('button', { name: 'Show the plan' }).click()
    await section().getByRole('alert').waitFor({ timeout: 30_000 })
    expect(await section().getByRole('alert').textContent()).toMatch(/401|token|refused|Unleash/i)
    expect(await section().getByRole('button', { name: 'Migrate' }).isDisabled()).toBe(true)
  })

  it('shows the plan of a dry run first, then migrates every recorded flag', async () => {
    await section().getByLabel('Admin API token of that Unleash').fill(UNLEASH_TOKEN)
    await section().getByRole('button', { name: 'Show the plan' }).click()
    const plan = section().getByText('Plan (nothing written yet)')
    await plan.waitFor({ timeout: 30_000 })
    expect(await section().textContent()).toContain('1 project · 2 environments')
    await checkPage(page, 'migrate-unleash-plan', { otherScheme: false })
    // The plan wrote nothing.
    expect((await ui.adminApi('GET', '/api/admin/projects/default/features')).features.map((f: { name: string }) => f.name)).not.toContain(recordedFlags[0])
    await section().getByRole('button', { name: 'Migrate' }).click()
    await section().getByText('Migrated', { exact: true }).waitFor({ timeout: 60_000 })
    const here = (await ui.adminApi('GET', '/api/admin/projects/default/features')).features.map((f: { name: string }) => f.name)
    expect(recordedFlags.length).toBeGreaterThan(50)
    for (const name of recordedFlags) expect(here).toContain(name)
  })
})
