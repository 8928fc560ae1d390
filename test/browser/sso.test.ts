// Single sign-on in a real Chromium (see harness.ts): with OpenID Connect enabled, the sign-in page offers the
// provider; the button goes through the test provider (oidc-provider on a local port) and lands signed in. An admin
// switches password sign-in off on the Single sign-on page; the sign-in page then shows only the provider, and the
// sign-up and set-password pages of the password links say password sign-in is off, and a user created then gets no
// invite link (the users page says they sign in with single sign-on). Group sync and single sign-out set
// on that page, a group's SSO group IDs in its dialog: a sign-in joins the group, and signing out goes through the
// provider's own sign-out back to the sign-in page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'
import { startTestProvider, type TestAccount, type TestProvider } from '../helpers/oidc-provider.js'

let ui: ConsoleUnderTest
let provider: TestProvider
const sam: TestAccount = { email: 'sam@example.com', name: 'Sam Single', groups: ['release-team'] }
beforeAll(async () => {
  ui = await startConsole()
  provider = await startTestProvider({ redirectUris: [`${ui.url}/auth/oidc/callback`], postLogoutRedirectUris: [`${ui.url}/sign-in`], accounts: [sam] })
  await ui.adminApi('POST', '/api/admin/auth/oidc/settings', {
    enabled: true,
    discoverUrl: provider.discoverUrl,
    clientId: provider.clientId,
    secret: provider.clientSecret,
    autoCreate: true,
    defaultRootRole: 'Editor',
    emailDomains: 'example.com',
  })
})
afterAll(async () => {
  await ui?.close()
  await provider?.close()
})

describe('single sign-on', { timeout: 60_000 }, () => {
  it("the sign-in page's next= leads only to a path of this site: /%09/evil.example (a tab browsers drop) becomes /", async () => {
    const page = await ui.newPage()
    const hrefFor = async (next: string) => {
      await page.goto(`${ui.url}/sign-in?next=${encodeURIComponent(next)}`)
      const button = page.getByRole('link', { name: 'Sign in with OpenID Connect' })
      await button.waitFor()
      return new URL((await button.getAttribute('href'))!, ui.url).searchParams.get('redirect')
    }
    expect(await hrefFor('/\t/evil.example')).toBe('/')
    expect(await hrefFor('/\\evil.example')).toBe('/')
    expect(await hrefFor('/projects?x=1')).toBe('/projects?x=1')
    await page.close()
  })

  it('the sign-in button goes through the provider and lands signed in, as a user created with the default role', async () => {
    const page = await ui.newPage()
    await page.goto(`${ui.url}/events`)
    const button = page.getByRole('link', { name: 'Sign in with OpenID Connect' })
    await button.waitFor()
    await expect(page.getByLabel('Username or e-mail').isVisible()).resolves.toBe(true)
    await checkPage(page, 'sign-in-single-sign-on')
    await button.click()
    await page.getByRole('heading', { name: 'Test provider' }).waitFor()
    await page.getByLabel('E-mail').fill('sam@example.com')
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Event log' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/events')
    await page.getByRole('button', { name: 'Account of Sam Single' }).waitFor()
    const { users } = await ui.adminApi('GET', '/api/admin/user-admin')
    expect(users.find((u: { email?: string }) => u.email === 'sam@example.com')).toMatchObject({ name: 'Sam Single', rootRole: 2 })
  })

  it("offers Forget SSO identity only for an account bound to one, asks first, and then no longer offers it", async () => {
    await ui.adminApi('POST', '/api/admin/user-admin', { email: 'never-sso@example.com', name: 'Nora Password', rootRole: 'Viewer', sendEmail: false })
    const admin = await ui.newPage()
    await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
    await admin.getByRole('navigation', { name: 'Main' }).waitFor()
    await admin.goto(`${ui.url}/users`)
    const forgetSam = admin.getByRole('button', { name: 'Forget SSO identity of Sam Single' })
    await forgetSam.waitFor()
    // A user with an e-mail who never signed in with the provider has nothing to forget.
    await admin.getByText('never-sso@example.com').waitFor()
    expect(await admin.getByRole('button', { name: /Forget SSO identity/ }).count()).toBe(1)
    await checkPage(admin, 'users-sso-bound')
    const sam = async () => (await ui.adminApi('GET', '/api/admin/user-admin')).users.find((u: { email?: string }) => u.email === 'sam@example.com')
    expect((await sam()).ssoBound).toBe(true)

    // Dismissing the browser's question forgets nothing.
    admin.once('dialog', (d) => void d.dismiss())
    await forgetSam.click()
    expect((await sam()).ssoBound).toBe(true)
    admin.once('dialog', (d) => void d.accept())
    await forgetSam.click()
    await expect.poll(async () => (await sam()).ssoBound).toBe(false)
    await forgetSam.waitFor({ state: 'detached' })
    await admin.close()
  })

  it('shows why single sign-on failed on the sign-in page', async () => {
    const page = await ui.newPage()
    await page.goto(`${ui.url}/auth/oidc/callback?code=x&state=y`)
    await page.getByRole('alert').filter({ hasText: 'Single sign-on failed' }).waitFor()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/no sign-in under way/)
    // Shown once: a reload no longer says it.
    await page.reload()
    await page.getByRole('heading', { name: 'Sign in to Flagpost' }).waitFor()
    expect(await page.getByRole('alert').count()).toBe(0)
  })

  it("does not show a link's own errorMsg on the sign-in page (only a reason the server gave)", async () => {
    const page = await ui.newPage()
    await page.goto(`${ui.url}/sign-in?errorMsg=${encodeURIComponent('Your account is locked: call +1 555 0100 to unlock it')}`)
    await page.getByRole('heading', { name: 'Sign in to Flagpost' }).waitFor()
    await page.waitForLoadState('networkidle')
    expect(await page.content()).not.toContain('555 0100')
  })

  it('an admin switches password sign-in off; the sign-in page then offers only the provider', async () => {
    const admin = await ui.newPage()
    await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Single sign-on' }).waitFor()
    await admin.goto(`${ui.url}/single-sign-on`)
    await admin.getByRole('heading', { name: 'Password sign-in' }).waitFor()
    await checkPage(admin, 'single-sign-on-password')
    // An invite made while passwords are on (one made while they are off has no link).
    const invited = await ui.adminApi('POST', '/api/admin/user-admin', { email: 'late@example.com', rootRole: 'Viewer', sendEmail: false })
    admin.once('dialog', (d) => void d.accept())
    await admin.getByLabel('Allow signing in with a username and password').click({ force: true })
    await admin.getByText('Password sign-in switched off').waitFor()
    expect(await ui.adminApi('GET', '/api/admin/auth/simple/settings')).toEqual({ disabled: true })

    const visitor = await ui.newPage()
    await visitor.goto(`${ui.url}/sign-in`)
    await visitor.getByRole('link', { name: 'Sign in with OpenID Connect' }).waitFor()
    expect(await visitor.getByLabel('Username or e-mail').count()).toBe(0)
    await checkPage(visitor, 'sign-in-single-sign-on-only')

    // An invite link's sign-up page and an invite's set-password page say passwords are off, and where to go instead.
    const link = await ui.adminApi('POST', '/api/admin/invite-link/tokens', { name: 'Latecomers', expiresAt: new Date(Date.now() + 86_400_000).toISOString() })
    for (const [address, name] of [[link.url, 'sign-up-password-sign-in-off'], [invited.inviteLink, 'new-user-password-sign-in-off']] as const) {
      await visitor.goto(address)
      await visitor.getByRole('alert').filter({ hasText: 'Password sign-in is switched off' }).filter({ hasText: 'single sign-on' }).waitFor()
      expect(await visitor.locator('input').count()).toBe(0)
      await checkPage(visitor, name)
      await visitor.getByRole('link', { name: 'Go to the sign-in page' }).click()
      await visitor.getByRole('link', { name: 'Sign in with OpenID Connect' }).waitFor()
    }

    // A user created now gets no invite link: the users page says they sign in with single sign-on, and shows no link.
    await admin.goto(`${ui.url}/users`)
    await admin.getByRole('button', { name: 'Create user' }).click()
    const dialog = admin.getByRole('dialog', { name: 'Create user' })
    await dialog.getByLabel('Username').fill('sso-only')
    await dialog.getByRole('button', { name: 'Create' }).click()
    await admin.getByText('User sso-only created: password sign-in is switched off, so they sign in with single sign-on (no invite link)').waitFor()
    expect(await admin.getByRole('dialog').count()).toBe(0)
    await checkPage(admin, 'users-created-password-sign-in-off')
    await ui.adminApi('POST', '/api/admin/auth/simple/settings', { disabled: false })
  })

  it('an admin turns group sync and single sign-out on and maps a group; signing in joins it, signing out signs out of the provider too', async () => {
    const admin = await ui.newPage()
    await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Single sign-on' }).waitFor()
    await admin.goto(`${ui.url}/single-sign-on`)
    await admin.getByRole('heading', { name: 'Password sign-in' }).waitFor()
    await admin.getByRole('switch', { name: 'Single sign-out' }).click({ force: true })
    await admin.getByRole('switch', { name: 'Sync groups' }).click({ force: true })
    await admin.getByRole('textbox', { name: /^Group JSON path/ }).fill('$.groups')
    await admin.getByRole('switch', { name: 'Request the groups scope' }).click({ force: true })
    await checkPage(admin, 'single-sign-on-group-sync')
    await admin.getByRole('button', { name: 'Save settings' }).click()
    await expect
      .poll(async () => await ui.adminApi('GET', '/api/admin/auth/oidc/settings'))
      .toMatchObject({ enableSingleSignOut: true, enableGroupSyncing: true, groupJsonPath: '$.groups', addGroupsScope: true, secret: '********' })

    await admin.goto(`${ui.url}/groups`)
    await admin.getByRole('button', { name: 'Create group' }).click()
    const dialog = admin.getByRole('dialog', { name: 'Create group' })
    await dialog.getByLabel('Name').fill('Release team')
    await dialog.getByLabel('SSO group IDs').fill('release-team')
    await admin.keyboard.press('Enter')
    await checkPage(admin, 'group-sso-group-ids')
    await dialog.getByRole('button', { name: 'Save group' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await admin.getByText('SSO groups: release-team').waitFor()
    const created = (await ui.adminApi('GET', '/api/admin/groups')).groups.find((g: { name: string }) => g.name === 'Release team')
    expect(created).toMatchObject({ mappingsSSO: ['release-team'], users: [] })

    const page = await ui.newPage()
    await page.goto(`${ui.url}/sign-in`)
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).click()
    await page.getByRole('heading', { name: 'Test provider' }).waitFor()
    await page.getByLabel('E-mail').fill('sam@example.com')
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('button', { name: 'Account of Sam Single' }).waitFor()
    const joined = (await ui.adminApi('GET', `/api/admin/groups/${created.id}`)).users
    expect(joined.map((u: { createdBy: string; user: { email: string } }) => [u.user.email, u.createdBy])).toEqual([['sam@example.com', 'SSO']])

    await page.getByRole('button', { name: 'Account of Sam Single' }).click()
    await page.getByRole('menuitem', { name: 'Sign out' }).click()
    // The provider's own page asks; yes sends the browser back to the sign-in page.
    await page.getByRole('button', { name: 'Yes, sign me out' }).click()
    await page.getByRole('heading', { name: 'Sign in to Flagpost' }).waitFor()
    expect(new URL(page.url()).pathname).toBe('/sign-in')
    // Signed out at the provider too: signing in again asks who signs in.
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).click()
    await page.getByRole('heading', { name: 'Test provider' }).waitFor()
  })
})
