// Single sign-on in a real Chromium (see harness.ts): with OpenID Connect enabled, the sign-in page offers the
// provider; the button goes through the test provider (oidc-provider on a local port) and lands signed in. An admin
// switches password sign-in off on the Single sign-on page; the sign-in page then shows only the provider.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.js'

let ui: ConsoleUnderTest
let provider: TestProvider
beforeAll(async () => {
  ui = await startConsole()
  provider = await startTestProvider({ redirectUris: [`${ui.url}/auth/oidc/callback`], accounts: [{ email: 'sam@example.com', name: 'Sam Single' }] })
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

  it('shows why single sign-on failed on the sign-in page', async () => {
    const page = await ui.newPage()
    await page.goto(`${ui.url}/auth/oidc/callback?code=x&state=y`)
    await page.getByRole('alert').filter({ hasText: 'Single sign-on failed' }).waitFor()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/no sign-in under way/)
  })

  it('an admin switches password sign-in off; the sign-in page then offers only the provider', async () => {
    const admin = await ui.newPage()
    await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Single sign-on' }).waitFor()
    await admin.goto(`${ui.url}/single-sign-on`)
    await admin.getByRole('heading', { name: 'Password sign-in' }).waitFor()
    await checkPage(admin, 'single-sign-on-password')
    admin.once('dialog', (d) => void d.accept())
    await admin.getByLabel('Allow signing in with a username and password').click({ force: true })
    await admin.getByText('Password sign-in switched off').waitFor()
    expect(await ui.adminApi('GET', '/api/admin/auth/simple/settings')).toEqual({ disabled: true })

    const visitor = await ui.newPage()
    await visitor.goto(`${ui.url}/sign-in`)
    await visitor.getByRole('link', { name: 'Sign in with OpenID Connect' }).waitFor()
    expect(await visitor.getByLabel('Username or e-mail').count()).toBe(0)
    await checkPage(visitor, 'sign-in-single-sign-on-only')
    await ui.adminApi('POST', '/api/admin/auth/simple/settings', { disabled: false })
  })
})
