// The flag page's variants, strategy variants, links and tags, and the playground, in a real Chromium (test/browser/harness.ts).
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let page: Page
const FLAG = '/api/admin/projects/shop/features/banner'
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'banner' })
  await ui.adminApi('POST', `${FLAG}/environments/development/strategies`, {
    name: 'flexibleRollout',
    title: 'Alice only',
    parameters: { rollout: '100', stickiness: 'default', groupId: 'banner' },
    constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }],
  })
  await ui.adminApi('POST', `${FLAG}/environments/development/on`)
  page = await ui.newPage()
  await ui.signIn(page, 'admin', ADMIN_PASSWORD)
  await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
})
afterAll(() => ui?.close())

const variantsOf = async (env: string) => (await ui.adminApi('GET', FLAG)).environments.find((e: { name: string }) => e.name === env).variants

describe('the flag page', { timeout: 60_000 }, () => {
  it('sets variants with a fixed and a variable weight and a JSON payload checked before saving', async () => {
    await page.goto(`${ui.url}/projects/shop/flags/banner`)
    const development = page.getByRole('region', { name: 'Environment development' })
    await development.getByRole('button', { name: 'Edit variants in development' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Add variant' }).click()
    await dialog.getByLabel('Variant name 1').fill('blue')
    await dialog.getByRole('button', { name: 'Add variant' }).click()
    await dialog.getByLabel('Variant name 2').fill('green')
    await comboboxOf(dialog, 'Weight type 2').click()
    await page.getByRole('option', { name: 'Fixed' }).click()
    await dialog.getByLabel('Weight (%) 2').fill('30')
    await expect.poll(() => dialog.getByLabel('Weight of blue').textContent()).toBe('70%')
    await comboboxOf(dialog, 'Payload type 2').click()
    await page.getByRole('option', { name: 'json' }).click()
    await dialog.getByLabel('Payload 2').fill('{"color": ')
    await expect.poll(() => dialog.getByRole('status').textContent()).toContain('green: a json payload must hold valid JSON')
    expect(await dialog.getByRole('button', { name: 'Save variants' }).isDisabled()).toBe(true)
    await dialog.getByLabel('Payload 2').fill('{"color": "green"}')
    await checkPage(page, 'flag-variants')
    await dialog.getByRole('button', { name: 'Save variants' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await development.getByText('green: 30% (fixed)').waitFor()
    expect(await variantsOf('development')).toEqual([
      { name: 'blue', weight: 700, weightType: 'variable', stickiness: 'default' },
      { name: 'green', weight: 300, weightType: 'fix', stickiness: 'default', payload: { type: 'json', value: '{"color": "green"}' } },
    ])
    expect(await variantsOf('production')).toEqual([])
  })

  it('gives a strategy variants of its own', async () => {
    const strategy = page.getByRole('region', { name: 'Strategy Alice only' })
    await strategy.getByRole('button', { name: 'Edit' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Add variant' }).click()
    await dialog.getByLabel('Variant name 1').fill('only-variant')
    await dialog.getByRole('button', { name: 'Save strategy' }).click()
    await dialog.waitFor({ state: 'hidden' })
    const strategies = await ui.adminApi('GET', `${FLAG}/environments/development/strategies`)
    expect(strategies[0].variants).toEqual([{ name: 'only-variant', weight: 1000, weightType: 'variable', stickiness: 'default' }])
  })

  it('adds, edits and removes a link, shown as a link opening in a new tab', async () => {
    await page.goto(`${ui.url}/projects/shop/flags/banner`)
    const links = page.getByRole('region', { name: 'Links' })
    await links.getByText('No links.').waitFor()
    await links.getByLabel('URL').fill('github.com/acme/shop/issues/7')
    await links.getByLabel('Title').fill('Rollout issue')
    await links.getByRole('button', { name: 'Add link' }).click()
    const anchor = links.getByRole('link', { name: 'Rollout issue' })
    await anchor.waitFor()
    expect(await anchor.getAttribute('href')).toBe('https://github.com/acme/shop/issues/7')
    expect(await anchor.getAttribute('target')).toBe('_blank')
    await links.getByRole('button', { name: 'Edit link Rollout issue' }).click()
    await links.getByLabel('URL').fill('javascript:alert(1)')
    await links.getByRole('button', { name: 'Save link' }).click()
    await links.getByText(/only http and https links are allowed/).waitFor()
    await links.getByLabel('URL').fill('https://github.com/acme/shop/issues/8')
    await links.getByRole('button', { name: 'Save link' }).click()
    await expect.poll(async () => (await ui.adminApi('GET', FLAG)).links.map((l: { url: string }) => l.url)).toEqual(['https://github.com/acme/shop/issues/8'])
    await links.getByRole('button', { name: 'Remove link Rollout issue' }).click()
    await links.getByText('No links.').waitFor()
    expect((await ui.adminApi('GET', FLAG)).links).toEqual([])
  })

  it('tags the flag with a new value of an existing type, and removes a tag', async () => {
    await ui.adminApi('POST', '/api/admin/features/banner/tags', { type: 'simple', value: 'old-tag' })
    await page.reload()
    const tags = page.getByRole('region', { name: 'Tags' })
    await tags.getByText('simple:old-tag').waitFor()
    await tags.getByLabel('Tag value').fill('checkout-team')
    await tags.getByRole('button', { name: 'Add tag' }).click()
    await tags.getByText('simple:checkout-team').waitFor()
    await tags.getByRole('button', { name: 'Remove tag simple:old-tag' }).click()
    await expect.poll(async () => (await ui.adminApi('GET', '/api/admin/features/banner/tags')).tags).toEqual([{ type: 'simple', value: 'checkout-team' }])
    await page.getByRole('region', { name: 'History' }).getByRole('article', { name: /feature-tagged/ }).first().waitFor()
    await checkPage(page, 'flag-details')
  })

  it("adds a parent flag chosen among the project's flags, and removes it", async () => {
    await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'checkout' })
    await page.goto(`${ui.url}/projects/shop/flags/banner`)
    const dependencies = page.getByRole('region', { name: 'Dependencies' })
    await comboboxOf(dependencies, 'Parent flag').click()
    // The project's flags but this one.
    await expect.poll(() => page.getByRole('option').allTextContents()).toEqual(['checkout'])
    // Typed, the server is asked (debounced: once for the word, not per letter), with a bounded page.
    await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'checkout-v2', description: 'the new one' })
    await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'zebra' })
    const asked: URL[] = []
    const noteSearch = (request: { url: () => string }) => {
      const url = new URL(request.url())
      if (url.pathname === '/api/admin/search/features') asked.push(url)
    }
    page.on('request', noteSearch)
    await comboboxOf(dependencies, 'Parent flag').pressSequentially('new one', { delay: 20 })
    await expect.poll(() => page.getByRole('option').allTextContents()).toEqual(['checkout-v2'])
    page.off('request', noteSearch)
    expect(asked.map((u) => [u.searchParams.get('query'), u.searchParams.get('project'), Number(u.searchParams.get('limit')) <= 25])).toEqual([['new one', 'IS:shop', true]])
    await comboboxOf(dependencies, 'Parent flag').fill('checkout')
    await expect.poll(() => page.getByRole('option').allTextContents()).toEqual(['checkout', 'checkout-v2'])
    await page.getByRole('option', { name: 'checkout', exact: true }).click()
    await dependencies.getByRole('button', { name: 'Add dependency' }).click()
    await dependencies.getByText('Needs checkout enabled').waitFor()
    expect((await ui.adminApi('GET', FLAG)).dependencies).toEqual([{ feature: 'checkout', enabled: true, variants: [] }])
    await dependencies.getByRole('button', { name: 'Remove dependency on checkout' }).click()
    await dependencies.getByText('No parent flag').waitFor()
  })
})

describe('the playground', { timeout: 60_000 }, () => {
  it("evaluates a context in two environments, with each result's reason", async () => {
    await page.getByRole('link', { name: 'Playground' }).click()
    await page.getByRole('heading', { name: 'Playground' }).waitFor()
    await comboboxOf(page.locator('body'), 'Environments').click({ force: true })
    await page.getByRole('option', { name: 'development' }).click()
    await page.getByRole('option', { name: 'production' }).click()
    await page.keyboard.press('Escape')
    await page.getByLabel('User id').fill('alice,bob')
    await page.getByRole('button', { name: 'Evaluate' }).click()
    const result = page.getByRole('region', { name: 'Result of banner' })
    await result.waitFor()
    const rows = await result.getByRole('row').allTextContents()
    expect(rows.find((r) => r.startsWith('development') && r.includes('userId=alice'))).toMatch(/on.*only-variant.*strategy Alice only is on \(matched userId IN alice\)/)
    expect(rows.find((r) => r.startsWith('development') && r.includes('userId=bob'))).toMatch(/off.*strategy Alice only is off \(failed userId IN alice\)/)
    expect(rows.find((r) => r.startsWith('production') && r.includes('userId=alice'))).toContain('switched off in production')
    await checkPage(page, 'playground')
  })
})
