// The Applications page in a real Chromium against the Node server (see harness.ts): an application that reported
// through the client API (a registration, flag metrics and impact metrics) is listed with its SDK and where its flags
// were seen, and its impact metrics open under it. Every page state passes axe-core.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let clientToken: string
beforeAll(async () => {
  ui = await startConsole()
  clientToken = (await ui.adminApi('POST', '/api/admin/api-tokens', { tokenName: 'shop-sdk', type: 'client', environment: 'development', projects: ['default'] })).secret
  await ui.adminApi('POST', '/api/admin/projects/default/features', { name: 'new-checkout' })
})
afterAll(async () => {
  await ui?.close()
})

async function sdk(path: string, body: unknown) {
  const res = await fetch(`${ui.url}${path}`, { method: 'POST', headers: { authorization: clientToken, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(res.status, await res.text()).toBe(202)
}

describe('the Applications page', { timeout: 60_000 }, () => {
  it('lists what SDKs reported and shows an application’s impact metrics', async () => {
    const now = new Date().toISOString()
    await sdk('/api/client/register', { appName: 'shop-web', instanceId: 'pod-1', sdkVersion: 'unleash-client-node:6.12.1', strategies: ['default'], interval: 15000, started: now })
    await sdk('/api/client/metrics', {
      appName: 'shop-web',
      instanceId: 'pod-1',
      bucket: { start: now, stop: now, toggles: { 'new-checkout': { yes: 3, no: 1 } } },
      impactMetrics: [
        { name: 'orders_total', help: 'Orders placed', type: 'counter', samples: [{ value: 12, labels: { appName: 'shop-web', environment: 'development' } }] },
        { name: 'checkout_seconds', help: 'Time to check out', type: 'histogram', samples: [{ count: 2, sum: 3.5, buckets: [{ le: 1, count: 1 }, { le: '+Inf', count: 2 }] }] },
      ],
    })
    await expect.poll(async () => (await ui.adminApi('GET', '/api/admin/metrics/applications/shop-web/impact-metrics')).impactMetrics.length, { timeout: 10_000 }).toBe(2)
    await sdk('/api/client/register', { appName: 'quiet-worker', instanceId: 'w-1', strategies: [], interval: 15000, started: now })

    const page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Applications' }).click()
    // Off the link just clicked: its hover colour on the active link is not what the page is checked for.
    await page.getByRole('heading', { name: 'Applications' }).hover()
    const row = page.getByRole('row', { name: /shop-web/ })
    await row.getByText('unleash-client-node:6.12.1').waitFor()
    await row.getByText('default: development').waitFor()
    await page.getByRole('row', { name: /quiet-worker/ }).getByText('none yet').waitFor()
    await checkPage(page, 'applications')

    await page.getByRole('button', { name: 'Show impact metrics of shop-web' }).click()
    const metrics = page.getByRole('table', { name: 'Impact metrics of shop-web' })
    await metrics.getByRole('row', { name: /orders_total/ }).getByText('12', { exact: true }).waitFor()
    await metrics.getByRole('row', { name: /checkout_seconds/ }).getByText('count 2, sum 3.5 (≤1: 1, ≤+Inf: 2)').waitFor()
    await checkPage(page, 'applications-impact-metrics')

    await page.getByRole('button', { name: 'Show impact metrics of quiet-worker' }).click()
    await page.getByText('quiet-worker has reported no impact metrics.').waitFor()
  })

  it('lists the flags SDKs check that do not exist, and creates one of them', async () => {
    const now = new Date().toISOString()
    await sdk('/api/client/metrics', { appName: 'shop-web', instanceId: 'pod-1', bucket: { start: now, stop: now, toggles: { 'dark-mode': { yes: 0, no: 4 } } } })
    await expect.poll(async () => (await ui.adminApi('GET', '/api/admin/metrics/unknown-flags')).unknownFlags.map((u: { name: string }) => u.name), { timeout: 10_000 }).toContain('dark-mode')

    const page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Applications' }).click()
    await page.getByRole('heading', { name: 'Unknown flags' }).hover()
    await page.getByRole('row', { name: /dark-mode/ }).getByText('shop-web: development').waitFor()
    await checkPage(page, 'applications-unknown-flags')

    await page.getByRole('button', { name: 'Create this flag: dark-mode' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create the flag dark-mode' })
    await dialog.getByRole('button', { name: 'Create' }).click()
    await page.waitForURL(/\/flags\/dark-mode$/)
    expect((await ui.adminApi('GET', '/api/admin/metrics/unknown-flags')).unknownFlags.map((u: { name: string }) => u.name)).not.toContain('dark-mode')
  })
})
