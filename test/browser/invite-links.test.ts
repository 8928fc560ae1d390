// Invite links in a real Chromium (see harness.ts): an admin makes a link on the Invite links page and copies it;
// a new person opens it in a browser of their own, signs up on the console's sign-up page and lands signed in with
// the link's root role. Every page visited passes axe-core.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
})
afterAll(async () => {
  await ui?.close()
})

describe('invite links', { timeout: 60_000 }, () => {
  it('an admin makes a link; a new person signs up with it and is signed in with its role', async () => {
    const admin = await ui.newPage()
    await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Invite links' }).waitFor()
    await admin.goto(`${ui.url}/invite-links`)
    await admin.getByText('No invite links yet.').waitFor()
    await checkPage(admin, 'invite-links')
    await admin.getByRole('button', { name: 'Create invite link' }).click()
    const dialog = admin.getByRole('dialog', { name: 'Create invite link' })
    await dialog.getByLabel('Name').fill('Support team')
    await dialog.getByLabel('Root role of those who sign up').selectOption('Editor')
    await checkPage(admin, 'invite-link-form')
    await dialog.getByRole('button', { name: 'Create link' }).click()
    const created = admin.getByRole('dialog', { name: 'Invite link created' })
    const link = await created.getByLabel('Invite link').inputValue()
    expect(link).toMatch(new RegExp(`^${ui.url}/sign-up\\?invite=[0-9a-f]{32}$`))
    await created.getByRole('button', { name: 'Copy invite link' }).waitFor()
    await checkPage(admin, 'invite-link-created')
    await created.getByRole('button', { name: 'Done' }).click()
    await admin.getByRole('row', { name: /Support team/ }).getByText('Works').waitFor()

    const person = await ui.newPage()
    await person.goto(link)
    await person.getByRole('heading', { name: 'Join Flagpost' }).waitFor()
    await person.getByRole('textbox', { name: 'Name', exact: true }).fill('Nina New')
    await checkPage(person, 'sign-up')
    await person.getByLabel('E-mail').fill('nina@example.com')
    await person.getByLabel(/^Password\s*\*?$/).fill('nina-password')
    await person.getByLabel('Password again').fill('nina-password')
    await person.getByRole('button', { name: 'Create account' }).click()
    await person.getByRole('button', { name: 'Account of Nina New' }).waitFor()
    expect(new URL(person.url()).pathname).toBe('/')
    const { users } = await ui.adminApi('GET', '/api/admin/user-admin')
    expect(users.find((u: { email?: string }) => u.email === 'nina@example.com')).toMatchObject({ name: 'Nina New', rootRole: 2 })

    await admin.reload()
    await admin.getByRole('row', { name: /Support team/ }).getByText('nina@example.com').waitFor()
    await admin.getByRole('button', { name: 'Disable “Support team”' }).click()
    await admin.getByRole('row', { name: /Support team/ }).getByText('Disabled').waitFor()

    const late = await ui.newPage()
    await late.goto(link)
    await late.getByRole('alert').filter({ hasText: 'This invite link does not work' }).waitFor()
    await checkPage(late, 'sign-up-link-disabled')
  })
})
