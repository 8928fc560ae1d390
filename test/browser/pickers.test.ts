// The strategy form's pickers in a real Chromium against the Node server (see harness.ts): with 1,000 segments, the
// segment picker finds one by what is typed, and no request of the page reads the whole list.
import type { Page, Response } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
const SEGMENTS = 1000
const segmentName = (i: number) => `audience-${String(i).padStart(4, '0')}`

beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'crowd', name: 'Crowd' })
  await ui.adminApi('POST', '/api/admin/projects/crowd/features', { name: 'big-audience' })
  // A thousand segments of a constraint each, in one state import (a thousand POSTs took about a minute under load).
  await ui.adminApi('POST', '/api/admin/state/import', {
    version: 4,
    segments: Array.from({ length: SEGMENTS }, (_, i) => ({ id: i + 1, name: segmentName(i), description: 'x'.repeat(100), constraints: [{ contextName: 'userId', operator: 'IN', values: [`user-${i}`] }] })),
  })
  expect((await ui.adminApi('GET', '/api/admin/segments')).segments).toHaveLength(SEGMENTS)
})
afterAll(() => ui?.close())

describe('the strategy form with 1,000 segments', { timeout: 90_000 }, () => {
  let page: Page
  const segmentReads: { url: string; bytes: number }[] = []

  beforeAll(async () => {
    page = await ui.newPage()
    page.on('response', (response: Response) => {
      if (new URL(response.url()).pathname === '/api/admin/segments') void response.body().then((b) => segmentReads.push({ url: response.url(), bytes: b.length }))
    })
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
  })

  it('finds a segment by typing, asks the server for at most a page of them, and saves the strategy with it', async () => {
    await page.goto(`${ui.url}/projects/crowd/flags/big-audience`)
    const development = page.getByRole('region', { name: 'Environment development' })
    await development.getByRole('button', { name: 'Add strategy in development' }).click()
    const dialog = page.getByRole('dialog')
    const picker = comboboxOf(dialog, 'Segments')
    await picker.click({ force: true })
    await page.getByRole('option', { name: segmentName(0) }).waitFor()
    // The first page only: the thousandth is not an option until it is asked for.
    expect(await page.getByRole('option', { name: segmentName(777) }).count()).toBe(0)
    await picker.pressSequentially('0777')
    await page.getByRole('option', { name: segmentName(777) }).click()
    await page.keyboard.press('Escape')
    await checkPage(page, 'strategy-segment-picker')
    await dialog.getByRole('button', { name: 'Save strategy' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await development.getByText(segmentName(777), { exact: true }).waitFor()

    const { segments } = await ui.adminApi('GET', `/api/admin/segments?query=${segmentName(777)}`)
    const strategies = await ui.adminApi('GET', '/api/admin/projects/crowd/features/big-audience/environments/development/strategies')
    expect(strategies.map((s: { segments: number[] }) => s.segments)).toEqual([[segments[0].id]])

    // Every read of segments was bounded: a page (limit) or given ids, never the whole list (about 300 KB here).
    expect(segmentReads.length).toBeGreaterThan(0)
    for (const read of segmentReads) {
      const query = new URL(read.url).searchParams
      expect(query.has('limit') || query.has('id'), read.url).toBe(true)
      expect(read.bytes, read.url).toBeLessThan(20_000)
    }
  })
})
