// Service accounts, API token expiry, signal endpoints and action sets in a real Chromium against the Node server (see
// harness.ts): an admin makes a service account and its token (the secret shown once), changes an API token's expiry,
// makes a signal endpoint and its token, then an action set of a project; a signal sent to the endpoint switches the
// flag off as the service account, and the run log shows it. Every page and dialog visited passes axe-core.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let admin: Page
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'checkout' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features/checkout/environments/production/on')
  admin = await ui.newPage()
  await ui.signIn(admin, 'admin', ADMIN_PASSWORD)
  await admin.getByRole('navigation', { name: 'Main' }).waitFor()
})
afterAll(async () => {
  await ui?.close()
})

/** The secret a SecretDialog shows, read before it is closed for good. */
async function secretShown(page: Page, title: string, label: string) {
  const dialog = page.getByRole('dialog', { name: title })
  await dialog.getByRole('button', { name: `Copy ${label}` }).waitFor()
  const secret = await dialog.getByLabel(label[0]!.toUpperCase() + label.slice(1)).inputValue()
  await checkPage(page, `${label === 'token' ? 'signal' : 'service-account'}-token-secret`)
  await dialog.getByRole('button', { name: 'Done' }).click()
  return secret
}

describe('automation in the console', { timeout: 90_000 }, () => {
  it('an admin makes a service account and its token, shown once', async () => {
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Service accounts' }).waitFor()
    await admin.goto(`${ui.url}/service-accounts`)
    await admin.getByRole('heading', { name: 'Service accounts' }).waitFor()
    await admin.getByText('No service accounts yet.').waitFor()
    await checkPage(admin, 'service-accounts-empty')
    await admin.getByRole('button', { name: 'Create service account' }).click()
    const form = admin.getByRole('dialog', { name: 'Create service account' })
    await form.getByLabel(/^Name/).fill('Kill switch bot')
    await form.getByLabel('Username').fill('kill-bot')
    await form.getByLabel('Root role').selectOption({ label: 'Editor' })
    await checkPage(admin, 'service-account-form')
    await form.getByRole('button', { name: 'Save service account' }).click()
    await admin.getByRole('row', { name: /kill-bot/ }).waitFor()

    await admin.getByRole('button', { name: 'Tokens of Kill switch bot' }).click()
    const tokens = admin.getByRole('dialog', { name: 'Tokens of Kill switch bot' })
    await tokens.getByText('No tokens yet.').waitFor()
    await tokens.getByLabel('Token description').fill('deploys')
    await checkPage(admin, 'service-account-tokens')
    await tokens.getByRole('button', { name: 'Create token' }).click()
    const secret = await secretShown(admin, 'New token of Kill switch bot', 'secret')
    expect(secret).toMatch(/^user:[0-9a-f]{64}$/)
    // The token acts as the account; the console never shows it again.
    const me = await fetch(`${ui.url}/api/admin/user`, { headers: { authorization: secret } }).then((r) => r.json() as Promise<any>)
    expect(me.user).toMatchObject({ username: 'kill-bot', accountType: 'Service Account' })
    await admin.getByRole('row', { name: /kill-bot/ }).getByText(/1 \(last seen/).waitFor()
    await admin.getByRole('button', { name: 'Tokens of Kill switch bot' }).click()
    await admin.getByRole('dialog', { name: 'Tokens of Kill switch bot' }).getByRole('row', { name: /deploys/ }).waitFor()
    expect(await admin.content()).not.toContain(secret.slice(5))
    await admin.getByRole('dialog', { name: 'Tokens of Kill switch bot' }).getByRole('button', { name: 'Close' }).click()
    await checkPage(admin, 'service-accounts')
  })

  it('an admin changes when an API token expires, and an expired one is refused', async () => {
    const token = await ui.adminApi('POST', '/api/admin/api-tokens', { tokenName: 'ci-backend', type: 'client', environment: 'development' })
    expect((await fetch(`${ui.url}/api/client/features`, { headers: { authorization: token.secret } })).status).toBe(200)
    await admin.goto(`${ui.url}/api-tokens`)
    await admin.getByRole('row', { name: /ci-backend/ }).getByText('never').first().waitFor()
    await admin.getByRole('button', { name: 'Change the expiry of token ci-backend' }).click()
    const dialog = admin.getByRole('dialog', { name: 'Expiry of ci-backend' })
    await dialog.getByLabel('Expires at the end of').fill('2020-01-31')
    await checkPage(admin, 'api-token-expiry')
    await dialog.getByRole('button', { name: 'Set expiry' }).click()
    await admin.getByRole('row', { name: /ci-backend/ }).getByText(/expired/).waitFor()
    const listed = (await ui.adminApi('GET', '/api/admin/api-tokens')).tokens.find((t: { tokenName: string }) => t.tokenName === 'ci-backend')
    expect(new Date(listed.expiresAt).getUTCFullYear()).toBe(2020)
    expect((await fetch(`${ui.url}/api/client/features`, { headers: { authorization: token.secret } })).status).toBe(401)
    await checkPage(admin, 'api-tokens-expiry-changed')
  })

  it('an admin makes a signal endpoint and an action set; a signal switches the flag off as the service account, logged as a run', async () => {
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Signal endpoints' }).waitFor()
    await admin.goto(`${ui.url}/signal-endpoints`)
    await admin.getByText('No signal endpoints yet.').waitFor()
    await admin.getByRole('button', { name: 'Create signal endpoint' }).click()
    const form = admin.getByRole('dialog', { name: 'Create signal endpoint' })
    await form.getByLabel(/^Name/).fill('grafana')
    await form.getByLabel('Description').fill('Alerts from Grafana')
    await checkPage(admin, 'signal-endpoint-form')
    await form.getByRole('button', { name: 'Save signal endpoint' }).click()
    await admin.getByRole('row', { name: /grafana/ }).waitFor()
    await admin.getByRole('button', { name: 'Tokens of grafana' }).click()
    const tokens = admin.getByRole('dialog', { name: 'Tokens of grafana' })
    await tokens.getByLabel('Token name').fill('alertmanager')
    await tokens.getByRole('button', { name: 'Create token' }).click()
    const token = await secretShown(admin, 'New token of grafana', 'token')
    await checkPage(admin, 'signal-endpoints')

    await admin.goto(`${ui.url}/projects/shop`)
    await admin.getByRole('link', { name: 'Action sets' }).click()
    await admin.getByRole('heading', { name: 'Action sets' }).waitFor()
    await admin.getByText('No action sets in this project yet.').waitFor()
    await checkPage(admin, 'action-sets-empty')
    await admin.getByRole('button', { name: 'Create action set' }).click()
    const set = admin.getByRole('dialog', { name: 'Create action set' })
    await set.getByLabel(/^Name/).fill('Checkout kill switch')
    await set.getByLabel('Signal endpoint').selectOption({ label: 'grafana' })
    await set.getByLabel('Service account', { exact: true }).selectOption({ label: 'kill-bot' })
    await set.getByRole('button', { name: 'Add filter' }).click()
    await set.getByLabel('Parameter of filter 1').fill('alert.severity')
    await set.getByLabel('Values of filter 1').fill('critical, page')
    await set.getByRole('button', { name: 'Add action' }).click()
    await set.getByLabel('Action 1', { exact: true }).selectOption({ label: 'Disable flag' })
    await set.getByLabel('Environment of action 1').selectOption('production')
    await set.getByLabel('Flag of action 1').selectOption('checkout')
    await checkPage(admin, 'action-set-form')
    await set.getByRole('button', { name: 'Save action set' }).click()
    await admin.getByRole('row', { name: /Checkout kill switch/ }).waitFor()
    await checkPage(admin, 'action-sets')

    const signal = await fetch(`${ui.url}/api/signal-endpoint/grafana`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ alert: { name: 'checkout errors', severity: 'critical' } }),
    })
    expect(signal.status).toBe(200)
    await expect.poll(async () => (await ui.adminApi('GET', '/api/admin/projects/shop/features/checkout')).environments.find((e: { name: string }) => e.name === 'production').enabled).toBe(false)

    await admin.getByRole('button', { name: 'Runs of Checkout kill switch' }).click()
    const runs = admin.getByRole('dialog', { name: 'Runs of Checkout kill switch' })
    await runs.getByText('checkout errors').waitFor()
    await runs.getByText('Disable flag checkout in production').waitFor()
    expect(await runs.getByText('success').count()).toBe(2)
    await checkPage(admin, 'action-set-runs')
    await runs.getByRole('button', { name: 'Close' }).click()

    await admin.goto(`${ui.url}/signal-endpoints`)
    await admin.getByRole('button', { name: 'Signals of grafana' }).click()
    await admin.getByRole('dialog', { name: 'Signals of grafana' }).getByText(/checkout errors/).waitFor()
    await checkPage(admin, 'signal-endpoint-signals')
  })

  it('an admin makes an action set that switches off the flags of a tag, and a signal does', async () => {
    await ui.adminApi('POST', '/api/admin/features/checkout/tags', { type: 'simple', value: 'payments' })
    await ui.adminApi('POST', '/api/admin/projects/shop/features/checkout/environments/development/on')
    const endpoint = await ui.adminApi('POST', '/api/admin/signal-endpoints', { name: 'pagerduty' })
    const { token } = await ui.adminApi('POST', `/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'pd' })
    await admin.goto(`${ui.url}/projects/shop/actions`)
    await admin.getByRole('button', { name: 'Create action set' }).click()
    const set = admin.getByRole('dialog', { name: 'Create action set' })
    await set.getByLabel(/^Name/).fill('Payments kill switch')
    await set.getByLabel('Signal endpoint').selectOption({ label: 'pagerduty' })
    await set.getByLabel('Service account', { exact: true }).selectOption({ label: 'kill-bot' })
    await set.getByRole('button', { name: 'Add action' }).click()
    await set.getByLabel('Action 1', { exact: true }).selectOption({ label: 'Disable flags tagged' })
    await set.getByLabel('Environment of action 1').selectOption('development')
    await set.getByLabel('Tag of action 1').selectOption('simple:payments')
    await checkPage(admin, 'action-set-form-by-tag')
    await set.getByRole('button', { name: 'Save action set' }).click()
    await admin.getByRole('row', { name: /Payments kill switch/ }).getByText('Disable flags tagged simple:payments in development').waitFor()

    const signal = await fetch(`${ui.url}/api/signal-endpoint/pagerduty`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })
    expect(signal.status).toBe(200)
    await expect.poll(async () => (await ui.adminApi('GET', '/api/admin/projects/shop/features/checkout')).environments.find((e: { name: string }) => e.name === 'development').enabled).toBe(false)
  })
})
