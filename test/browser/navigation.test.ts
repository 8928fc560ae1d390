// The shell's navigation in a real Chromium against the Node server (see harness.ts): the link of the page shown is
// marked as the current page, and stays legible (axe-core's color contrast) when the pointer is over it, as when not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
})
afterAll(async () => {
  await ui?.close()
})

describe('the navigation', { timeout: 60_000 }, () => {
  it('keeps the current page’s link legible under the pointer', async () => {
    const page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    const navigation = page.getByRole('navigation', { name: 'Main' })
    await navigation.getByRole('link', { name: 'Projects' }).click()
    await page.getByRole('heading', { name: 'Projects' }).waitFor()
    const current = navigation.getByRole('link', { name: 'Projects' })
    expect(await current.getAttribute('aria-current')).toBe('page')
    await current.hover()
    await checkPage(page, 'navigation-current-link-hovered')
  })
})
