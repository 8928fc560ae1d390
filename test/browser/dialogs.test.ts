// Every dialog of the console in a real Chromium (test/browser/harness.ts): as it opens, its first field has the focus
// (not the header's close button, which comes first in the document), so a user types at once. Dialogs without a field
// (confirmations, logs) keep the close button: checked where they open from the same pages.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let page: Page
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'warehouse', name: 'Warehouse' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'checkout' })
  // What the action set's and the variants' forms need to show their fields.
  await ui.adminApi('POST', '/api/admin/service-account', { username: 'robo', name: 'Robo', rootRole: 'Viewer' })
  await ui.adminApi('POST', '/api/admin/signal-endpoints', { name: 'pagerduty' })
  await ui.adminApi('PUT', '/api/admin/projects/shop/features/checkout/environments/development/variants', [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }])
  page = await ui.newPage()
  await ui.signIn(page, 'admin', ADMIN_PASSWORD)
  await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
}, 60_000)
afterAll(() => ui?.close())

/**
 * What has the focus in the open dialog: whether it is the dialog's first field (in the document's order, a control one
 * types into or picks with, not a Select's hidden value), and its label; or, where the dialog has no field, its name.
 */
const focusInDialog = (p: Page) =>
  p.evaluate<{ inDialog: boolean; first: boolean; fields: number; label: string }>(`(() => {
    const dialog = document.querySelector('[role=dialog]')
    const active = document.activeElement
    if (!dialog || !active) return { inDialog: false, first: false, fields: 0, label: '' }
    const fields = [...dialog.querySelectorAll('input, textarea, select')].filter((e) => e.type !== 'hidden' && !e.disabled)
    const label = (active.labels && active.labels[0] && active.labels[0].textContent) || active.getAttribute('aria-label') || active.getAttribute('placeholder') || ''
    return { inDialog: dialog.contains(active), first: fields.length > 0 && fields[0] === active, fields: fields.length, label: label.trim() }
  })()`)

/** Opens a dialog with `open` on `path`, and expects its first field (labelled `label`) to have the focus; then closes it. */
async function expectFirstFieldFocused(path: string, open: (p: Page) => Promise<void>, label: RegExp) {
  await page.goto(`${ui.url}${path}`)
  await open(page)
  await page.getByRole('dialog').waitFor()
  await expect.poll(() => focusInDialog(page), { message: `the focus in the dialog opened on ${path}` }).toMatchObject({ inDialog: true, first: true })
  expect((await focusInDialog(page)).label).toMatch(label)
  await page.getByRole('dialog').getByRole('button', { name: 'Close', exact: true }).first().click()
  await page.getByRole('dialog').waitFor({ state: 'hidden' })
}

const button = (name: string | RegExp) => (p: Page) => p.getByRole('button', { name, exact: typeof name === 'string' }).first().click()

// The "Create …" dialogs of the list pages (their action button), and the first field each starts with.
const CREATE_DIALOGS: [path: string, action: string, label: RegExp][] = [
  ['/projects', 'Create project', /Id|Name/],
  ['/segments', 'Create segment', /Name/],
  ['/context-fields', 'Create context field', /Name/],
  ['/tag-types', 'Create tag type', /Name/],
  ['/strategy-types', 'Create strategy type', /Name/],
  ['/environments', 'Create environment', /Name/],
  ['/api-tokens', 'Create API token', /Name/],
  ['/projects/shop/api-tokens', 'Create API token', /Name/],
  ['/personal-tokens', 'Create personal access token', /Description|Name/],
  ['/users', 'Create user', /Name|Username|E-mail/i],
  ['/groups', 'Create group', /Name/],
  ['/roles', 'Create role', /Name/],
  ['/service-accounts', 'Create service account', /Name/],
  ['/banners', 'Create banner', /Message|Name|Variant/],
  ['/invite-links', 'Create invite link', /.+/],
  ['/signal-endpoints', 'Create signal endpoint', /Name/],
  ['/projects/shop/actions', 'Create action set', /Name/],
]

describe('the first field takes the focus in every dialog', { timeout: 120_000 }, () => {
  it('in the create-flag dialog: Name, not the close button', async () => {
    await expectFirstFieldFocused('/projects/shop', button('Create flag'), /^Name/)
  })

  it.each(CREATE_DIALOGS)('in %s’s “%s” dialog', async (path, action, label) => {
    await expectFirstFieldFocused(path, button(action), label)
  })

  it('in the flag page’s dialogs: clone, move, a strategy, variants', async () => {
    await expectFirstFieldFocused('/projects/shop/flags/checkout', button('Clone'), /name/i)
    await expectFirstFieldFocused('/projects/shop/flags/checkout', button('Move to project'), /project/i)
    await expectFirstFieldFocused('/projects/shop/flags/checkout', button('Add strategy in development'), /.+/)
    await expectFirstFieldFocused('/projects/shop/flags/checkout', button('Edit variants in development'), /.+/)
  })

  it('in the project’s import, an integration’s form and the change-password dialog', async () => {
    await expectFirstFieldFocused('/projects/shop', button('Import'), /.+/)
    await expectFirstFieldFocused('/integrations', (p) => p.getByRole('button', { name: /webhook/i }).first().click(), /.+/)
    await expectFirstFieldFocused('/', async (p) => {
      await p.getByRole('button', { name: /Account of admin/ }).click()
      await p.getByRole('menuitem', { name: 'Change password' }).click()
    }, /password/i)
  })

  it('keeps the close button in a dialog without a field (archiving flags asks only for a yes)', async () => {
    await page.goto(`${ui.url}/projects/shop`)
    await page.getByRole('checkbox', { name: 'Select checkout' }).check({ force: true })
    await page.getByRole('button', { name: 'Archive selected' }).click()
    await page.getByRole('dialog').waitFor()
    await expect.poll(() => focusInDialog(page)).toMatchObject({ inDialog: true, fields: 0, label: 'Close' })
  })

  it('in the command bar: its search field', async () => {
    await expectFirstFieldFocused('/', async (p) => {
      await p.getByRole('heading', { name: 'Your dashboard' }).waitFor()
      await p.keyboard.press('Control+k')
    }, /.+/)
  })
})
