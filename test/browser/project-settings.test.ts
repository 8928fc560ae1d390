// A project's settings page in a real Chromium against the Node server (see harness.ts): an admin finds "Settings"
// under the project's title and there its members and roles, environments and change request settings (no longer on the
// project's page); removing an environment asks first; a Viewer is offered no link and is told they may not change the
// settings. Every page visited passes axe-core in both colour schemes.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

const PASSWORD = 'a viewer password'
let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop', description: 'The web shop' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'checkout' })
  await ui.adminApi('POST', '/api/admin/user-admin', { username: 'vic', password: PASSWORD, rootRole: 'Viewer', sendEmail: false })
})
afterAll(async () => {
  await ui?.close()
})

const environmentsOfShop = async () => ((await ui.adminApi('GET', '/api/admin/projects/shop')).environments as { environment: string }[]).map((e) => e.environment)

describe("a project's settings page", { timeout: 90_000 }, () => {
  it('an admin opens Settings under the title: members and roles, environments, change request settings, in that order', async () => {
    const page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    await page.goto(`${ui.url}/projects/shop`)
    await page.getByRole('link', { name: 'checkout' }).waitFor()
    // The project's page keeps its flags; the forms moved to the settings page.
    expect(await page.getByRole('heading', { name: 'Members and roles' }).count()).toBe(0)
    expect(await page.getByRole('region', { name: 'Change request settings' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: /Remove environment/ }).count()).toBe(0)

    await page.getByRole('link', { name: 'Settings', exact: true }).click()
    await page.getByRole('heading', { name: 'Shop · Settings', level: 1 }).waitFor()
    await expect.poll(() => page.title()).toBe('Shop · Settings · Flagpost')
    await page.getByRole('region', { name: 'Change request settings' }).getByRole('switch', { name: 'Change requests in production' }).waitFor()
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents()
    expect(headings.filter((h) => ['Members and roles', 'Environments', 'Change request settings'].includes(h))).toEqual(['Members and roles', 'Environments', 'Change request settings'])

    // Removing an environment is a quiet row action that asks first: declined, the environment stays.
    const remove = page.getByRole('region', { name: 'Environments' }).getByRole('button', { name: 'Remove environment development from the project' })
    expect(await remove.getAttribute('data-variant')).toBe('subtle')
    const asked: string[] = []
    page.once('dialog', (confirm) => {
      asked.push(confirm.message())
      void confirm.dismiss()
    })
    await remove.click()
    await expect.poll(() => asked).toEqual([expect.stringMatching(/^Remove development from shop\?/)])
    expect(await environmentsOfShop()).toContain('development')
    // The pointer is still on the button: its hover colours pass axe too.
    await checkPage(page, 'project-settings')

    await page.getByRole('link', { name: 'Back to project Shop' }).click()
    await page.getByRole('link', { name: 'checkout' }).waitFor()
  })

  it('a Viewer is offered no Settings link, and the page says they may not change the settings', async () => {
    const viewer: Page = await ui.newPage()
    await ui.signIn(viewer, 'vic', PASSWORD)
    await viewer.getByRole('navigation', { name: 'Main' }).waitFor()
    await viewer.goto(`${ui.url}/projects/shop`)
    await viewer.getByRole('link', { name: 'checkout' }).waitFor()
    await viewer.getByRole('link', { name: 'Archived flags' }).waitFor()
    expect(await viewer.getByRole('link', { name: 'Settings', exact: true }).count()).toBe(0)

    await viewer.goto(`${ui.url}/projects/shop/settings`)
    await viewer.getByRole('heading', { name: 'Shop · Settings', level: 1 }).waitFor()
    await viewer.getByText("You may not change this project's settings").waitFor()
    expect(await viewer.getByRole('heading', { name: 'Members and roles' }).count()).toBe(0)
    expect(await viewer.getByRole('region', { name: 'Environments' }).count()).toBe(0)
    expect(await viewer.getByRole('region', { name: 'Change request settings' }).count()).toBe(0)
    await checkPage(viewer, 'project-settings-viewer')
  })
})
