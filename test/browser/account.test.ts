// The signed-in user's own account in the web console: changing their password from the account menu.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
})
afterAll(() => ui?.close())

describe('the account menu', { timeout: 60_000 }, () => {
  it('changes your own password: a wrong current one is refused with its message, then you sign in with the new one', async () => {
    await ui.adminApi('POST', '/api/admin/user-admin', { username: 'pat', password: 'first passphrase', rootRole: 'Viewer', sendEmail: false })
    const page = await ui.newPage()
    await ui.signIn(page, 'pat', 'first passphrase')
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()

    await page.getByRole('button', { name: /Account of pat/ }).click()
    await page.getByRole('menuitem', { name: 'Change password' }).click()
    const dialog = page.getByRole('dialog', { name: 'Change your password' })
    await dialog.getByLabel('Current password').fill('not my passphrase')
    await dialog.getByLabel(/^New password(?! again)/).fill('second passphrase')
    await dialog.getByLabel('New password again').fill('second passphrase')
    await checkPage(page, 'change-password')
    await dialog.getByRole('button', { name: 'Change password' }).click()
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/old password is incorrect/)

    await dialog.getByLabel('Current password').fill('first passphrase')
    await dialog.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('status').filter({ hasText: 'Sign in with your new password' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/sign-in')

    await page.getByLabel('Username or e-mail').fill('pat')
    // The "Password changed" notice is labelled "Password…" too: the input itself.
    await page.locator('input[type=password]').fill('second passphrase')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
  })
})
