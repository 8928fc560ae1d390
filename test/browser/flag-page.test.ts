// The flag page's layout and how it reads, in a real Chromium (test/browser/harness.ts): environment cards above the fold
// at 1440×900, strategies with constraints in words, the rollout bar, the protected badge, last seen, the lifecycle as
// stages, and the exposures chart drawn from metrics an SDK posted. Every state passes axe-core.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let clientToken: string
const FLAG = '/api/admin/projects/shop/features/checkout'
/** What evaluateAll hands over, as far as these tests read it (the type check has no DOM library). */
type Attributed = { getAttribute(name: string): string | null }
const USERS = Array.from({ length: 16 }, (_, i) => `user-${i + 1}`)

beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'checkout', description: 'The new checkout' })
  const segment = await ui.adminApi('POST', '/api/admin/segments', { name: 'beta-testers', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }] })
  await ui.adminApi('POST', `${FLAG}/environments/development/strategies`, {
    name: 'flexibleRollout',
    title: 'Beta users',
    parameters: { rollout: '35', stickiness: 'userId', groupId: 'checkout' },
    constraints: [
      { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'], caseInsensitive: true },
      { contextName: 'appVersion', operator: 'SEMVER_GT', value: '2.1.0' },
      { contextName: 'userId', operator: 'IN', inverted: true, values: USERS },
      { contextName: 'remoteAddress', operator: 'IN_CIDR', values: ['10.0.0.0/8'] },
    ],
    segments: [segment.id],
    variants: [
      { name: 'red', weight: 250, weightType: 'fix', stickiness: 'default' },
      { name: 'blue', weight: 750, weightType: 'variable', stickiness: 'default' },
    ],
  })
  await ui.adminApi('POST', `${FLAG}/environments/development/on`)
  await ui.adminApi('PUT', '/api/admin/projects/shop/change-requests/config', { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 })
  clientToken = (await ui.adminApi('POST', '/api/admin/api-tokens', { tokenName: 'shop-sdk', type: 'client', environment: 'development', projects: ['shop'] })).secret
})
afterAll(() => ui?.close())

async function signedIn(viewport: { width: number; height: number }): Promise<Page> {
  const page = await ui.newPage({ viewport })
  await ui.signIn(page, 'admin', ADMIN_PASSWORD)
  await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
  return page
}

describe('the flag page', { timeout: 90_000 }, () => {
  it('shows every environment card with its switch above the fold at 1440×900, the details beside them', async () => {
    const page = await signedIn({ width: 1440, height: 900 })
    await page.goto(`${ui.url}/projects/shop/flags/checkout`)
    const details = await page.getByRole('complementary', { name: 'Flag details' }).boundingBox()
    for (const name of ['development', 'production']) {
      const card = page.getByRole('region', { name: `Environment ${name}` })
      await card.getByRole('heading', { name }).waitFor()
      const box = (await card.boundingBox())!
      const header = (await card.getByRole('heading', { name }).boundingBox())!
      expect(header.y + header.height, `${name}'s heading above the fold`).toBeLessThan(900)
      expect(box.y, `${name}'s card starts above the fold`).toBeLessThan(900)
      // The environments come first: to the left of the side panel, not under it.
      expect(box.x + box.width).toBeLessThanOrEqual(details!.x)
    }
    const development = page.getByRole('region', { name: 'Environment development' })
    const toggle = development.getByRole('switch')
    const toggleBox = (await toggle.boundingBox())!
    expect(toggleBox.y + toggleBox.height).toBeLessThan(900)
    // Everyone sees that production is protected by change requests; development is not.
    await page.getByRole('region', { name: 'Environment production' }).getByText(/^Protected/).waitFor()
    expect(await development.getByText(/^Protected/).count()).toBe(0)
    // No SDK reported the flag yet: the exposures' place says what to do instead of drawing an empty chart.
    await development.getByText('never seen by an SDK').waitFor()
    const metrics = page.getByRole('region', { name: 'Metrics' })
    await metrics.getByText('No SDK reported this flag in development over the last 48 hours.').waitFor()
    expect(await metrics.getByRole('link', { name: 'Create an API token for an SDK' }).getAttribute('href')).toBe('/api-tokens?create=token')
    expect(await metrics.getByRole('button', { name: 'Show the chart' }).count()).toBe(0)
    // The lifecycle as its five stages, the current one marked.
    const lifecycle = page.getByRole('region', { name: 'Lifecycle' })
    await lifecycle.locator('[data-stage="archived"]').waitFor()
    expect(await lifecycle.locator('[data-stage]').evaluateAll((items: Attributed[]) => items.map((i) => i.getAttribute('data-stage')))).toEqual(['initial', 'pre-live', 'live', 'completed', 'archived'])
    const { stage } = (await ui.adminApi('GET', FLAG)).lifecycle
    expect(await lifecycle.locator('[aria-current="step"]').getAttribute('data-stage')).toBe(stage)
    await checkPage(page, 'flag-page')
    await page.close()
  })

  it('reads a strategy at a glance: operators in words, values collapsed, the rollout bar, segments and variants', async () => {
    const page = await signedIn({ width: 1440, height: 900 })
    await page.goto(`${ui.url}/projects/shop/flags/checkout`)
    const strategy = page.getByRole('region', { name: 'Environment development' }).getByRole('region', { name: 'Strategy Beta users' })
    await strategy.getByText('Beta users').waitFor()
    const constraints = await strategy.locator('[data-constraint]:not(details [data-constraint])').evaluateAll((groups: Attributed[]) => groups.map((g) => g.getAttribute('aria-label')))
    expect(constraints).toEqual([
      'Constraint: email ends with @example.com (case-insensitive)',
      'Constraint: appVersion version > 2.1.0',
      `Constraint: userId not is one of ${USERS.join(', ')}`,
      'Constraint: remoteAddress in range (CIDR) 10.0.0.0/8',
    ])
    const text = (await strategy.textContent())!
    for (const words of ['ends with', 'case-insensitive', 'version >', 'is one of', 'in range (CIDR)', '+12 more', 'stickiness userId', 'group checkout'])
      expect(text, words).toContain(words)
    for (const raw of ['STR_ENDS_WITH', 'SEMVER_GT', 'IN_CIDR', 'user-5']) expect(text, raw).not.toContain(raw)
    // The rollout bar holds the strategy's percentage.
    const rollout = strategy.getByRole('progressbar', { name: 'Rollout of Beta users' })
    expect(await rollout.getAttribute('aria-valuenow')).toBe('35')
    await strategy.getByText('Rollout 35%').waitFor()
    // The strategy's variants as one distribution bar.
    const variants = strategy.getByRole('group', { name: 'Variants of Beta users' })
    expect(await variants.getByRole('progressbar').evaluateAll((bars: Attributed[]) => bars.map((b) => `${b.getAttribute('aria-label')}=${b.getAttribute('aria-valuenow')}`))).toEqual(['red 25%=25', 'blue 75%=75'])
    // The segment opens to its constraints.
    await strategy.getByText('beta-testers').click()
    await strategy.getByRole('group', { name: 'Constraint: country is one of NO, SE' }).waitFor()
    await checkPage(page, 'flag-page-strategy-open')
    await page.close()
  })

  it('draws the exposures chart from the metrics an SDK posted, and shows when the flag was last seen', async () => {
    const now = new Date().toISOString()
    const res = await fetch(`${ui.url}/api/client/metrics`, {
      method: 'POST',
      headers: { authorization: clientToken, 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'shop-web', instanceId: 'pod-1', bucket: { start: now, stop: now, toggles: { checkout: { yes: 12, no: 3 } } } }),
    })
    expect(res.status, await res.text()).toBe(202)
    await expect.poll(async () => (await ui.adminApi('GET', '/api/admin/client-metrics/features/checkout/raw?hoursBack=48')).data.length, { timeout: 15_000 }).toBe(1)

    const page = await signedIn({ width: 1440, height: 900 })
    const chunks: string[] = []
    page.on('request', (request) => chunks.push(new URL(request.url()).pathname))
    await page.goto(`${ui.url}/projects/shop/flags/checkout`)
    const metrics = page.getByRole('region', { name: 'Metrics' })
    await expect.poll(() => metrics.getByRole('status', { name: 'Exposure totals' }).textContent(), { timeout: 15_000 }).toBe('development, last 48 hours: 15 exposures, 12 yes (80%) and 3 no')
    // The chart (recharts, its own chunk) is not loaded until asked for; its place is as tall as the chart.
    await page.waitForLoadState('networkidle')
    expect(chunks.filter((c) => c.startsWith('/assets/metrics-chart-'))).toEqual([])
    const place = metrics.getByTestId('exposure-chart')
    const before = (await place.boundingBox())!.height
    await metrics.getByRole('button', { name: 'Show the chart' }).click()
    // Then it draws one bar for yes and one for no in the current hour, in the same place (nothing below it moves).
    await expect.poll(() => metrics.locator('.recharts-bar-rectangle path').count(), { timeout: 15_000 }).toBe(2)
    expect((await place.boundingBox())!.height).toBe(before)
    expect(chunks.filter((c) => c.startsWith('/assets/metrics-chart-'))).toHaveLength(1)
    await page.getByRole('region', { name: 'Environment development' }).getByText(/^last seen (just now|\d+ minutes? ago)$/).waitFor()
    // Per day over 30 days: the same exposures in today's bar.
    await metrics.getByText('Last 30 days').click()
    await expect.poll(() => metrics.getByRole('status', { name: 'Exposure totals' }).textContent()).toBe('development, last 30 days: 15 exposures, 12 yes (80%) and 3 no')
    await expect.poll(() => metrics.locator('.recharts-bar-rectangle path').count()).toBe(2)
    // Production saw nothing.
    await metrics.getByText('production', { exact: true }).click()
    await expect.poll(() => metrics.getByRole('status', { name: 'Exposure totals' }).textContent()).toBe('production, last 30 days: 0 exposures, 0 yes (0%) and 0 no')
    await metrics.getByText('development', { exact: true }).click()
    await metrics.getByText('Last 48 hours').click()
    await checkPage(page, 'flag-page-metrics')
    await page.close()
  })

  it('once the chart was asked for, draws it as it scrolls into view, and draws the environment cards without waiting for it', async () => {
    const page = await signedIn({ width: 1440, height: 900 })
    await page.evaluate(`localStorage.setItem('flagpost-exposures-chart', 'true')`)
    // The chart's chunk held back until released: the cards must not wait for it.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.route(/\/assets\/metrics-chart-[\w-]+\.js$/, async (route) => {
      await held
      await route.continue()
    })
    await page.goto(`${ui.url}/projects/shop/flags/checkout`)
    // (Longer than the default wait: a page that waited for the held chunk would never draw them.)
    await page.getByRole('region', { name: 'Environment development' }).getByRole('heading', { name: 'development' }).waitFor({ timeout: 30_000 })
    await page.getByRole('region', { name: 'Environment production' }).getByRole('heading', { name: 'production' }).waitFor()
    const metrics = page.getByRole('region', { name: 'Metrics' })
    expect(await metrics.getByRole('button', { name: 'Show the chart' }).count()).toBe(0)
    release()
    await metrics.scrollIntoViewIfNeeded()
    await expect.poll(() => metrics.locator('.recharts-bar-rectangle path').count(), { timeout: 15_000 }).toBe(2)
    await page.close()
  })

  it('lines the Type select, the Stale and Impression data switches up on the inputs’ centre line', async () => {
    const page = await signedIn({ width: 1024, height: 768 })
    await page.goto(`${ui.url}/projects/shop/flags/checkout`)
    const details = page.getByRole('complementary', { name: 'Flag details' })
    const type = (await details.getByRole('textbox', { name: 'Type' }).or(details.getByRole('combobox', { name: 'Type' })).first().boundingBox())!
    const centre = (box: { y: number; height: number }) => box.y + box.height / 2
    for (const name of ['Stale', 'Impression data']) {
      // The switch's track (the input itself is visually hidden).
      const track = (await details.getByRole('switch', { name }).locator('xpath=..').locator('.mantine-Switch-track').boundingBox())!
      expect(Math.abs(centre(track) - centre(type)), `${name} against Type`).toBeLessThanOrEqual(1)
    }
    await page.close()
  })

  it('lays out at 1024×768 with the environments first', async () => {
    const page = await signedIn({ width: 1024, height: 768 })
    await page.goto(`${ui.url}/projects/shop/flags/checkout`)
    const development = page.getByRole('region', { name: 'Environment development' })
    await development.getByRole('heading', { name: 'development' }).waitFor()
    const box = (await development.boundingBox())!
    expect(box.y).toBeLessThan(768)
    const details = (await page.getByRole('complementary', { name: 'Flag details' }).boundingBox())!
    expect(details.y).toBeGreaterThan(box.y)
    await checkPage(page, 'flag-page-1024')
    await page.close()
  })
})
