// Instance banners in a real Chromium against the Node server (see harness.ts): an admin creates one on the Banners
// page, a Viewer sees it at the top of the console (its message as text, never HTML) and opens its dialog; switched
// off, it is gone for the Viewer. Every page visited passes axe-core.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/user-admin', { username: 'vera', password: 'vera-password', rootRole: 'Viewer', sendEmail: false })
})
afterAll(async () => {
  await ui?.close()
})

describe('banners', { timeout: 60_000 }, () => {
  it('an admin creates a banner that a Viewer then sees at the top of every page, as text', async () => {
    const admin = await ui.newPage()
    await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Banners' }).waitFor()
    await admin.goto(`${ui.url}/banners`)
    await admin.getByRole('heading', { name: 'Banners' }).waitFor()
    await admin.getByText('No banners yet.').waitFor()
    await checkPage(admin, 'banners')
    await admin.getByRole('button', { name: 'Create banner' }).click()
    const dialog = admin.getByRole('dialog', { name: 'Create banner' })
    await dialog.getByLabel('Message').fill('Maintenance tonight <b>22:00</b>')
    await dialog.getByLabel('Variant').selectOption('warning')
    await dialog.getByLabel('Link', { exact: true }).fill('dialog')
    await dialog.getByLabel('Link text').fill('What changes')
    await dialog.getByLabel('Dialog title').fill('Maintenance')
    await dialog.getByLabel('Dialog text').fill('The API is read-only for ten minutes.\n<img src=x onerror=alert(1)>')
    await checkPage(admin, 'banner-form')
    await dialog.getByRole('button', { name: 'Save banner' }).click()
    await admin.getByRole('row', { name: /Maintenance tonight/ }).waitFor()
    const [banner] = (await ui.adminApi('GET', '/api/admin/banners')).banners
    expect(banner).toMatchObject({ message: 'Maintenance tonight <b>22:00</b>', variant: 'warning', link: 'dialog', enabled: true })

    const viewer = await ui.newPage()
    await ui.signIn(viewer, 'vera', 'vera-password')
    const announcements = viewer.getByRole('region', { name: 'Announcements' })
    await announcements.getByText('Maintenance tonight <b>22:00</b>').waitFor()
    expect(await announcements.locator('b').count()).toBe(0)
    await checkPage(viewer, 'banner-shown')
    await announcements.getByRole('button', { name: 'What changes' }).click()
    const details = viewer.getByRole('dialog', { name: 'Maintenance' })
    await details.getByText(/read-only for ten minutes/).waitFor()
    expect(await details.locator('img').count()).toBe(0)
    await checkPage(viewer, 'banner-dialog')
    await details.getByRole('button', { name: 'Close' }).click()
    // The Viewer is offered no Banners page.
    expect(await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Banners' }).count()).toBe(0)

    await admin.getByRole('switch', { name: /Show the banner/ }).click()
    await expect.poll(async () => (await ui.adminApi('GET', '/api/admin/banners')).banners[0].enabled).toBe(false)
    await viewer.reload()
    await viewer.getByRole('navigation', { name: 'Main' }).waitFor()
    await viewer.waitForLoadState('networkidle')
    expect(await viewer.getByText('Maintenance tonight').count()).toBe(0)
  })
})
