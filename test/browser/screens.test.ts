// The console's main pages for a product review, in a real Chromium (test/browser/harness.ts): each at 1440×900 and
// 1024×768, light and dark, with some data in them, none wider than the window (no clipped or overflowing content),
// and a screenshot of each (screen-<page>-<width>-<scheme>.png). axe-core checks each page once (checkPage, both schemes).
import type { Page } from 'playwright-core'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, SCREENSHOTS, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let page: Page
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'checkout', name: 'Checkout', description: 'The checkout and payment flows' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'search', name: 'Search' })
  for (const [name, type] of [
    ['new-payment-provider', 'release'],
    ['express-checkout-with-a-rather-long-flag-name-for-wrapping', 'experiment'],
    ['fraud-kill-switch', 'kill-switch'],
  ])
    await ui.adminApi('POST', '/api/admin/projects/checkout/features', { name, type, description: `What ${name} does` })
  await ui.adminApi('POST', '/api/admin/projects/checkout/features/new-payment-provider/environments/development/strategies', {
    name: 'flexibleRollout',
    parameters: { rollout: '25', stickiness: 'default', groupId: 'new-payment-provider' },
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice', 'bob'] }],
  })
  await ui.adminApi('POST', '/api/admin/projects/checkout/features/new-payment-provider/environments/development/on')
  await ui.adminApi('POST', '/api/admin/segments', { name: 'beta-testers', description: 'People who asked for early access', constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }] })
  await ui.adminApi('POST', '/api/admin/user-admin', { username: 'dana', name: 'Dana Designer', email: 'dana@example.com', rootRole: 'Editor' })
  await ui.adminApi('POST', '/api/admin/api-tokens', { tokenName: 'checkout-backend', type: 'client', projects: ['checkout'], environment: 'development' })
  page = await ui.newPage()
  await ui.signIn(page, 'admin', ADMIN_PASSWORD)
  await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
}, 60_000)
afterAll(() => ui?.close())

// The page, its address, and what shows it has drawn.
const PAGES: [name: string, path: string, heading: string | RegExp][] = [
  ['dashboard', '/', 'Your dashboard'],
  ['projects', '/projects', 'Projects'],
  ['project', '/projects/checkout', 'Checkout'],
  ['flag', '/projects/checkout/flags/new-payment-provider', 'new-payment-provider'],
  ['segments', '/segments', 'Segments'],
  ['change-requests', '/projects/checkout/change-requests', /Change requests/],
  ['events', '/events', /Event log|Events/],
  ['users', '/users', 'Users'],
  ['api-tokens', '/api-tokens', 'API tokens'],
  ['playground', '/playground', 'Playground'],
]

/** Whether the page is wider than the window (a horizontal scroll bar: clipped or overflowing content). */
const overflows = (p: Page) => p.evaluate<boolean>(`document.documentElement.scrollWidth > document.documentElement.clientWidth`)

describe('the main pages, as a product review sees them', { timeout: 180_000 }, () => {
  it.each(PAGES)('%s at 1440×900 and 1024×768, light and dark, fits the window', async (name, path, heading) => {
    for (const [width, height] of [
      [1440, 900],
      [1024, 768],
    ] as const) {
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.setViewportSize({ width, height })
        await page.emulateMedia({ colorScheme })
        await page.goto(`${ui.url}${path}`)
        await page.getByRole('heading', { name: heading, level: 1 }).first().waitFor()
        await page.waitForLoadState('networkidle')
        expect(await overflows(page), `${name} at ${width} px, ${colorScheme}: wider than the window`).toBe(false)
        if (width === 1440 && colorScheme === 'light') await checkPage(page, `screen-${name}`)
        await page.screenshot({ path: join(SCREENSHOTS, `screen-${name}-${width}-${colorScheme}.png`) })
      }
    }
  })
})

describe('a flag page opened by its address', { timeout: 60_000 }, () => {
  it('reads its flag once, started before the console’s code asks for the page’s chunk (early.ts), and draws its cards', async () => {
    const requests: string[] = []
    const note = (request: { url: () => string }) => requests.push(new URL(request.url()).pathname)
    page.on('request', note)
    try {
      await page.goto(`${ui.url}/projects/checkout/flags/new-payment-provider`)
      await page.getByRole('region', { name: 'Environment development' }).getByRole('heading', { name: 'development' }).waitFor()
      await page.waitForLoadState('networkidle')
    } finally {
      page.off('request', note)
    }
    const flagRead = '/api/admin/projects/checkout/features/new-payment-provider'
    expect(requests.filter((r) => r === flagRead)).toHaveLength(1)
    // The page's chunk: flag-<8-character hash>.js (not flag-types-…, flag-metrics-…).
    const chunk = requests.findIndex((r) => /^\/assets\/flag-[\w-]{8}\.js$/.test(r))
    expect(chunk).toBeGreaterThan(-1)
    expect(requests.indexOf(flagRead)).toBeLessThan(chunk)
  })
})

describe('the project page', { timeout: 60_000 }, () => {
  it('says who and how under its name, and compares each 30-day figure with the 30 days before', async () => {
    await page.setViewportSize({ width: 1440, height: 900 })
    await page.goto(`${ui.url}/projects/checkout`)
    await expect.poll(() => page.getByTestId('project-summary').textContent()).toBe('The checkout and payment flows · Open project · 0 members')
    const stats = page.getByLabel('Project statistics')
    for (const label of ['Created (30 days)', 'Archived (30 days)', 'Changes (30 days)']) {
      await expect.poll(() => stats.getByText(label).locator('xpath=..').textContent()).toMatch(/\d+ the 30 days before$/)
    }
  })
})

describe('the users page', { timeout: 60_000 }, () => {
  it('shows your own root role as text (not a disabled picker read as empty), and others’ as a picker', async () => {
    await page.goto(`${ui.url}/users`)
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
    await page.getByRole('cell', { name: 'Admin (you)' }).waitFor()
    expect(await page.getByRole('combobox', { name: 'Root role of admin' }).count()).toBe(0)
    expect(await page.getByRole('combobox', { name: 'Root role of Dana Designer' }).isEnabled()).toBe(true)
  })
})

