// The signed-in user's own account in the web console: changing their password from the account menu, and setting the
// first one through an invite link.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

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

describe('an invite link', { timeout: 60_000 }, () => {
  it('opens the console, which checks it, takes a password the server accepts and signs the new user in; used, it no longer works', async () => {
    const admin = await ui.newPage()
    await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
    await admin.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    await admin.goto(`${ui.url}/users`)
    await admin.getByRole('button', { name: 'Create user' }).click()
    const dialog = admin.getByRole('dialog', { name: 'Create user' })
    await dialog.getByLabel('Username').fill('ivy')
    await dialog.getByLabel('Name', { exact: true }).fill('Ivy Invited')
    await comboboxOf(dialog, 'Root role').click({ force: true })
    await admin.getByRole('option', { name: 'Viewer' }).click()
    await dialog.getByRole('button', { name: 'Create' }).click()
    const link = await admin.getByRole('dialog', { name: 'Invite link' }).getByLabel('Invite link').inputValue()
    expect(new URL(link).pathname).toBe('/new-user')

    // A fresh browser context: nobody is signed in there.
    const invited = await ui.newPage()
    await invited.goto(link)
    await invited.getByText('Set a password for Ivy Invited').waitFor()
    await checkPage(invited, 'new-user')
    await invited.getByLabel(/^New password(?! again)/).fill('short')
    await invited.getByLabel('New password again').fill('different')
    await invited.getByRole('button', { name: 'Set password and sign in' }).click()
    await expect.poll(() => invited.getByRole('alert').textContent()).toMatch(/The two passwords differ/)
    await invited.getByLabel('New password again').fill('short')
    await invited.getByRole('button', { name: 'Set password and sign in' }).click()
    await expect.poll(() => invited.getByRole('alert').textContent()).toMatch(/^The server refused this password.*password must be at least 8 characters/)

    await invited.getByLabel(/^New password(?! again)/).fill('ivy invited passphrase')
    await invited.getByLabel('New password again').fill('ivy invited passphrase')
    await invited.getByRole('button', { name: 'Set password and sign in' }).click()
    await invited.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    expect(new URL(invited.url()).pathname).toBe('/')
    await invited.getByRole('button', { name: /Account of (Ivy Invited|ivy)/ }).waitFor()

    // Signing in afresh with the password set works; the link is used up.
    const again = await ui.newPage()
    await ui.signIn(again, 'ivy', 'ivy invited passphrase')
    await again.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    const spent = await ui.newPage()
    await spent.goto(link)
    await expect.poll(() => spent.getByRole('alert').textContent()).toMatch(/invalid, was already used or has expired/)
    await checkPage(spent, 'new-user-used')
  })
})
