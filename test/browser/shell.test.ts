// The console's frame in a real Chromium (test/browser/harness.ts): the colour scheme (the system's, then the header's
// switch), the skip link, the navigation at 1024 px, page titles, the command bar, favourites on the dashboard, the
// dashboard without a project, the SDK snippets of a new token, and the review's fixes (avatar, event log paging and
// links, change request titles, playground badges, the secret's font). Screenshots at 1440×900 and 1024×768 in both schemes.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, colorSchemeOf, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let admin: Page
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'orders', name: 'Orders' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'billing', name: 'Billing' })
  await ui.adminApi('POST', '/api/admin/projects/orders/features', { name: 'express-shipping' })
  await ui.adminApi('POST', '/api/admin/projects/billing/features', { name: 'zebra-invoices', description: 'Striped invoices' })
  // One sign-in for the admin's tests: sign-ins are limited per address.
  admin = await ui.newPage()
  await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
  await admin.getByRole('heading', { name: 'Your dashboard' }).waitFor()
})
afterAll(() => ui?.close())

/** The signed-in admin's page on the dashboard, at `viewport` (1280×800) with the system's colour scheme `colorScheme` (light). */
async function adminPage(options: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {}): Promise<Page> {
  await admin.setViewportSize(options.viewport ?? { width: 1280, height: 800 })
  await admin.emulateMedia({ colorScheme: options.colorScheme ?? 'light' })
  await admin.goto(`${ui.url}/`)
  await admin.getByRole('heading', { name: 'Your dashboard' }).waitFor()
  return admin
}

/** Whether the page is wider than the window (a horizontal scroll bar: clipped or overflowing content). */
const overflows = (page: Page) => page.evaluate<boolean>(`document.documentElement.scrollWidth > document.documentElement.clientWidth`)

describe('the console frame', { timeout: 90_000 }, () => {
  it('follows the system’s colour scheme, and the header’s switch overrides it for good', async () => {
    let page = await adminPage({ colorScheme: 'light' })
    expect(await colorSchemeOf(page)).toBe('light')
    page = await adminPage({ colorScheme: 'dark' })
    expect(await colorSchemeOf(page)).toBe('dark')
    await checkPage(page, 'home-dark')

    const toggle = page.getByRole('button', { name: 'Dark colours' })
    expect(await toggle.getAttribute('aria-pressed')).toBe('true')
    await toggle.click()
    await expect.poll(() => colorSchemeOf(page)).toBe('light')
    expect(await page.evaluate<string | null>(`localStorage.getItem('mantine-color-scheme-value')`)).toBe('light')
    await page.reload()
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    expect(await colorSchemeOf(page)).toBe('light')
    expect(await page.getByRole('button', { name: 'Dark colours' }).getAttribute('aria-pressed')).toBe('false')
    // Back to following the system, for the tests after this one.
    await page.evaluate(`localStorage.removeItem('mantine-color-scheme-value')`)
  })

  it('offers "Skip to content" as the first thing Tab reaches, and names each page in the title', async () => {
    const page = await adminPage()
    await page.keyboard.press('Tab')
    const focused = await page.evaluate<string>(`document.activeElement.textContent`)
    expect(focused).toBe('Skip to content')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.evaluate<string>(`document.activeElement.id`)).toBe('main')
    expect(await page.title()).toBe('Dashboard · Flagpost')
    await page.goto(`${ui.url}/events`)
    await page.getByRole('heading', { name: 'Event log', level: 1 }).waitFor()
    expect(await page.title()).toBe('Event log · Flagpost')
    await page.goto(`${ui.url}/projects/orders/flags/express-shipping`)
    await page.getByRole('heading', { name: 'express-shipping' }).waitFor()
    expect(await page.title()).toBe('express-shipping · orders · Flagpost')
  })

  it('groups the navigation, which collapses a group and behind a burger at 1024 px, with nothing wider than the window', async () => {
    const wide = await adminPage()
    const navigation = wide.getByRole('navigation', { name: 'Main' })
    await navigation.getByRole('link', { name: 'Segments' }).waitFor()
    await navigation.getByRole('button', { name: 'Configure' }).click()
    await navigation.getByRole('link', { name: 'Segments' }).waitFor({ state: 'hidden' })
    await navigation.getByRole('button', { name: 'Configure' }).click()
    await navigation.getByRole('link', { name: 'Segments' }).waitFor()

    const page = await adminPage({ viewport: { width: 1024, height: 768 } })
    const burger = page.getByRole('button', { name: 'Toggle navigation' })
    expect(await burger.isVisible()).toBe(true)
    // Moved out of the window until the burger opens it.
    const box = await page.getByRole('navigation', { name: 'Main' }).boundingBox()
    expect(box === null || box.x + box.width <= 0).toBe(true)
    for (const path of ['/', '/projects', '/projects/orders', '/projects/orders/flags/express-shipping', '/events', '/playground', '/api-tokens', '/users', '/segments']) {
      await page.goto(`${ui.url}${path}`)
      await page.waitForLoadState('networkidle')
      expect(await overflows(page), `${path} at 1024 px`).toBe(false)
    }
    await burger.click()
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Projects' }).click()
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor()
    await adminPage()
  })

  it('finds a flag of another project with Ctrl-K, as typed, and goes to it with the keyboard', async () => {
    const page = await adminPage()
    await page.goto(`${ui.url}/projects/orders`)
    await page.getByRole('heading', { name: 'Orders' }).waitFor()
    await page.keyboard.press('Control+k')
    const bar = page.getByRole('dialog', { name: 'Search Flagpost' })
    await bar.waitFor()
    await page.keyboard.type('zebra')
    const flag = bar.getByRole('option', { name: /zebra-invoices/ })
    await flag.waitFor()
    expect(await flag.getAttribute('aria-selected')).toBe('true')
    await checkPage(page, 'command-bar')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'zebra-invoices' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/projects/billing/flags/zebra-invoices')

    // "/" opens it too; pages and actions are found, and the arrows move the choice.
    await page.locator('body').click({ position: { x: 600, y: 20 } })
    await page.keyboard.press('/')
    await bar.waitFor()
    await page.keyboard.type('api token')
    await bar.getByRole('option', { name: /New API token/ }).waitFor()
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('ArrowUp')
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'Create API token' }).waitFor()
  })

  it("opens the project's Create flag dialog from the command bar on that project's page, again after it was closed", async () => {
    const page = await adminPage()
    await page.goto(`${ui.url}/projects/orders`)
    await page.getByRole('heading', { name: 'Orders' }).waitFor()
    const bar = page.getByRole('dialog', { name: 'Search Flagpost' })
    const create = page.getByRole('dialog', { name: 'Create flag' })
    for (let time = 0; time < 2; time++) {
      await page.keyboard.press('Control+k')
      await bar.waitFor()
      await page.keyboard.type('create flag')
      await bar.getByRole('option', { name: /Create flag/ }).waitFor()
      await page.keyboard.press('Enter')
      await create.waitFor()
      // The request is taken out of the address: a reload does not open the dialog again, the same action does.
      expect(new URL(page.url()).search).toBe('')
      if (time === 0) await checkPage(page, 'command-bar-create-flag')
      await page.keyboard.press('Escape')
      await create.waitFor({ state: 'hidden' })
    }
    // On the projects page, already shown, "Create project" opens its dialog too.
    await page.goto(`${ui.url}/projects`)
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor()
    await page.keyboard.press('Control+k')
    await bar.waitFor()
    await page.keyboard.type('create project')
    await bar.getByRole('option', { name: /Create project/ }).waitFor()
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'Create project' }).waitFor()
  })

  it('shows a starred flag and project on the dashboard; a flag only created is not called a favourite', async () => {
    const page = await adminPage()
    // Created by the admin user in the console, never starred.
    await page.goto(`${ui.url}/projects/orders`)
    await page.getByRole('button', { name: 'Create flag' }).click()
    await page.getByRole('dialog').getByLabel('Name').fill('mine-not-starred')
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click()
    await page.getByRole('heading', { name: 'mine-not-starred' }).waitFor()

    await page.goto(`${ui.url}/projects/billing/flags/zebra-invoices`)
    const star = page.getByRole('button', { name: 'Favourite zebra-invoices' })
    expect(await star.getAttribute('aria-pressed')).toBe('false')
    await star.click()
    await expect.poll(() => star.getAttribute('aria-pressed')).toBe('true')
    await page.goto(`${ui.url}/projects/billing`)
    await page.getByRole('button', { name: 'Favourite billing' }).click()
    await expect.poll(() => page.getByRole('button', { name: 'Favourite billing' }).getAttribute('aria-pressed')).toBe('true')

    await page.goto(`${ui.url}/`)
    const favourites = page.getByRole('table', { name: 'Your favourite flags' })
    await favourites.getByRole('link', { name: 'zebra-invoices' }).waitFor()
    expect(await favourites.getByRole('link', { name: 'mine-not-starred' }).count()).toBe(0)
    await page.getByRole('table', { name: 'Flags you created' }).getByRole('link', { name: 'mine-not-starred' }).waitFor()
    const billing = page.getByRole('article', { name: 'Project Billing' })
    await billing.waitFor()
    expect(await billing.getByRole('button', { name: 'Favourite billing' }).getAttribute('aria-pressed')).toBe('true')
    // Counts in words that agree with them.
    expect(await billing.textContent()).toMatch(/1 flag(?!s)/i)
    expect(await billing.textContent()).not.toMatch(/\b1 members/i)
    await checkPage(page, 'home-favourites')
  })

  it('shows a user in no project the way into the default project', async () => {
    await ui.adminApi('POST', '/api/admin/user-admin', { username: 'newcomer', password: 'newcomer-password', rootRole: 'Viewer', sendEmail: false })
    const page = await ui.newPage()
    await ui.signIn(page, 'newcomer', 'newcomer-password')
    const start = page.getByRole('region', { name: 'Get started' })
    await start.waitFor()
    await start.getByRole('link', { name: 'Open the default project' }).click()
    await expect.poll(() => new URL(page.url()).pathname).toBe('/projects/default')
  })

  it('shows the SDK snippets of a new token with the address and the token filled in', async () => {
    const page = await adminPage()
    await page.goto(`${ui.url}/api-tokens`)
    await page.getByRole('button', { name: 'Create API token' }).click()
    let dialog = page.getByRole('dialog')
    await dialog.getByLabel('Name').fill('shop-backend')
    await dialog.getByRole('button', { name: 'Create' }).click()
    dialog = page.getByRole('dialog', { name: 'Your new API token' })
    const secret = await dialog.getByLabel('Secret').inputValue()
    expect(secret).toMatch(/^\*:development\.[0-9a-f]+$/)
    const node = await dialog.getByLabel('Node.js (unleash-client) snippet').textContent()
    expect(node).toContain(`url: "${ui.url}/api/"`)
    expect(node).toContain(`Authorization: "${secret}"`)
    await dialog.getByRole('tab', { name: 'OpenFeature (OFREP)' }).click()
    expect(await dialog.getByLabel('OpenFeature (OFREP) snippet').textContent()).toContain(`['Authorization', "${secret}"]`)
    // The secret in the monospace font, its label in the console's.
    const fonts = await page.evaluate<string[]>(
      `[...document.querySelectorAll('[role=dialog] input[readonly]')].flatMap((i) => [getComputedStyle(i).fontFamily, getComputedStyle(document.querySelector('label[for="' + i.id + '"]')).fontFamily])`,
    )
    expect(fonts[0]).toMatch(/mono/i)
    expect(fonts[1]).not.toMatch(/mono/i)
    await checkPage(page, 'api-token-snippets')

    await dialog.getByRole('button', { name: 'Done' }).click()
    await page.getByRole('button', { name: 'Create API token' }).click()
    dialog = page.getByRole('dialog')
    await dialog.getByLabel('Name').fill('shop-web')
    await comboboxOf(dialog, 'Type').click()
    await page.getByRole('option', { name: /Frontend/i }).click()
    await dialog.getByRole('button', { name: 'Create' }).click()
    dialog = page.getByRole('dialog', { name: 'Your new API token' })
    const frontend = await dialog.getByLabel('Secret').inputValue()
    const browser = await dialog.getByLabel('Browser (unleash-proxy-client) snippet').textContent()
    expect(browser).toContain(`url: "${ui.url}/api/frontend"`)
    expect(browser).toContain(`clientKey: "${frontend}"`)
  })

  it('loads no avatar the console’s CSP refuses: no console error on a page', async () => {
    const errors: string[] = []
    const page = admin
    const noteError = (message: { type: () => string; text: () => string }) => {
      if (message.type() === 'error') errors.push(message.text())
    }
    page.on('console', noteError)
    await adminPage()
    await page.goto(`${ui.url}/projects`)
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor()
    await page.waitForLoadState('networkidle')
    page.off('console', noteError)
    expect(errors).toEqual([])
  })

  it('pages the event log from the top of the new page, its events linking to their flag and project', async () => {
    for (let i = 0; i < 55; i++) await ui.adminApi('POST', '/api/admin/features/express-shipping/tags', { type: 'simple', value: `t${i}` })
    const page = await adminPage()
    await page.goto(`${ui.url}/events`)
    await page.getByRole('heading', { name: 'Event log', level: 1 }).waitFor()
    const older = page.getByRole('button', { name: 'Older' })
    await older.scrollIntoViewIfNeeded()
    expect(await page.evaluate<number>(`window.scrollY`)).toBeGreaterThan(0)
    await older.click()
    await page.getByText(/^Events 51–/).waitFor()
    await expect.poll(() => page.evaluate<number>(`window.scrollY`)).toBe(0)
    const event = page.getByRole('article', { name: /feature-tagged/ }).first()
    await event.getByRole('link', { name: 'express-shipping' }).click()
    await expect.poll(() => new URL(page.url()).pathname).toBe('/projects/orders/flags/express-shipping')
    await page.goBack()
    await page.getByRole('article').first().getByRole('link', { name: 'orders' }).first().waitFor()
  })

  it('titles a change request with its default title once, and shows the playground’s results whole', async () => {
    await ui.adminApi('PUT', '/api/admin/projects/orders/change-requests/config', { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 })
    const page = await ui.newPage()
    await ui.adminApi('POST', '/api/admin/user-admin', { username: 'editor', password: 'editor-password', rootRole: 'Editor', sendEmail: false })
    await ui.signIn(page, 'editor', 'editor-password')
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    const created = await page.evaluate<{ id: number }>(
      `fetch('/api/admin/projects/orders/environments/production/change-requests', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'updateEnabled', feature: 'express-shipping', payload: { enabled: true } }) }).then((r) => r.json())`,
    )
    await page.goto(`${ui.url}/projects/orders/change-requests/${created.id}`)
    const title = page.getByRole('heading', { level: 1 })
    await expect.poll(() => title.textContent()).toBe(`Change request #${created.id}`)

    await page.goto(`${ui.url}/playground`)
    await page.getByRole('button', { name: 'Evaluate' }).click()
    await page.getByRole('region', { name: 'Results' }).waitFor()
    const badges = page.getByRole('region', { name: 'Results' }).locator('.mantine-Badge-label')
    await badges.first().waitFor()
    const clipped = await page.evaluate<number>(`[...document.querySelectorAll('section[aria-label=Results] .mantine-Badge-label')].filter((b) => b.scrollWidth > b.clientWidth || b.textContent.includes('…')).length`)
    expect(clipped).toBe(0)
    expect(await badges.allTextContents()).toEqual(expect.arrayContaining(['off']))
  })

  it('sets a project’s change request settings per environment: on, and the approvals needed', async () => {
    const page = await adminPage()
    await page.goto(`${ui.url}/projects/billing/settings`)
    const settings = page.getByRole('region', { name: 'Change request settings' })
    await settings.getByRole('switch', { name: 'Change requests in development' }).click({ force: true })
    await settings.getByLabel('Required approvals in development').fill('3')
    await settings.getByRole('button', { name: 'Save the change request settings of development' }).click()
    const development = async () =>
      ((await ui.adminApi('GET', '/api/admin/projects/billing/change-requests/config')) as { environment: string }[]).find((c) => c.environment === 'development')
    await expect.poll(development).toMatchObject({ changeRequestsEnabled: true, requiredApprovals: 3 })
    await checkPage(page, 'project-change-request-settings')
  })

  it('leaves screenshots at 1440×900 and 1024×768 in both colour schemes', async () => {
    for (const [width, height] of [
      [1440, 900],
      [1024, 768],
    ] as const) {
      // Each page in both schemes, each fully checked: the harness's pass of the other scheme's colours would repeat one.
      for (const colorScheme of ['light', 'dark'] as const) {
        const page = await adminPage({ viewport: { width, height }, colorScheme })
        await checkPage(page, `console-${width}-${colorScheme}`, { otherScheme: false })
        await page.goto(`${ui.url}/projects/orders`)
        await page.getByRole('heading', { name: 'Orders' }).waitFor()
        await checkPage(page, `console-project-${width}-${colorScheme}`, { otherScheme: false })
      }
    }
  })
})
