// Change requests through the console, in a real Chromium (test/browser/harness.ts): an Editor's change to a
// protected environment goes into a draft, another Editor approves it, the first applies it; a change that no
// longer applies is refused with the server's 409.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let author: Page
let reviewer: Page
let changeRequestId: number
const FLAG = '/api/admin/projects/payments/features/new-gateway'
const productionOf = async () => (await ui.adminApi('GET', FLAG)).environments.find((e: { name: string }) => e.name === 'production')

beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'payments', name: 'Payments' })
  await ui.adminApi('PUT', '/api/admin/projects/payments/change-requests/config', { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 })
  await ui.adminApi('POST', '/api/admin/projects/payments/features', { name: 'new-gateway' })
  for (const username of ['ed', 'erin']) await ui.adminApi('POST', '/api/admin/user-admin', { username, password: `${username}-password`, rootRole: 'Editor', sendEmail: false })
  author = await ui.newPage()
  await ui.signIn(author, 'ed', 'ed-password')
  await author.getByRole('heading', { name: 'Your dashboard' }).waitFor()
  reviewer = await ui.newPage()
  await ui.signIn(reviewer, 'erin', 'erin-password')
  await reviewer.getByRole('heading', { name: 'Your dashboard' }).waitFor()
})
afterAll(() => ui?.close())

describe('change requests', { timeout: 60_000 }, () => {
  it("puts an Editor's changes in production into a draft, changing nothing yet", async () => {
    await author.goto(`${ui.url}/projects/payments/flags/new-gateway`)
    const production = author.getByRole('region', { name: 'Environment production' })
    await production.getByText('changes need a change request').waitFor()
    expect(await production.getByRole('switch').count()).toBe(0)
    await production.getByRole('button', { name: 'Add strategy in production' }).click()
    const dialog = author.getByRole('dialog')
    await dialog.getByLabel('Rollout (%)').fill('40')
    await dialog.getByRole('button', { name: 'Add to change request' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await production.getByRole('button', { name: 'Request to turn on' }).click()
    const open = author.getByRole('region', { name: 'Open change requests' })
    await open.getByRole('link').waitFor()
    expect(await open.textContent()).toContain('Draft')
    expect(await productionOf()).toMatchObject({ enabled: false, strategies: [] })
    await checkPage(author, 'flag-change-request')
  })

  it('lists the draft on the project, and its author sends it to review', async () => {
    await author.goto(`${ui.url}/projects/payments`)
    await author.getByRole('link', { name: 'Change requests' }).click()
    const table = author.getByRole('table', { name: 'Change requests' })
    await table.getByRole('link').first().waitFor()
    await checkPage(author, 'change-requests')
    await table.getByRole('link').first().click()
    changeRequestId = Number(new URL(author.url()).pathname.split('/').pop())
    const changes = author.getByRole('region', { name: 'Changes to new-gateway' })
    await changes.getByText('Add the strategy flexibleRollout (rollout 40%)').waitFor()
    await changes.getByText('Turn the flag on').waitFor()
    expect(await author.getByRole('button', { name: 'Approve' }).count()).toBe(0)
    await author.getByRole('button', { name: 'Send to review' }).click()
    await author.getByText('In review', { exact: true }).waitFor()
    await checkPage(author, 'change-request')
  })

  it('previews the change request in the playground', async () => {
    await author.getByLabel('User id').fill('someone')
    await author.getByRole('button', { name: 'Preview' }).click()
    const result = author.getByRole('region', { name: 'Result of new-gateway' })
    await result.waitFor()
    expect(await result.textContent()).toContain('strategy flexibleRollout is on')
  })

  it('is approved by another Editor and applied by its author: the change is live', async () => {
    // The reviewer's navigation counts it as waiting for their approval; its author's does not.
    await reviewer.goto(`${ui.url}/`)
    const nav = reviewer.getByRole('navigation', { name: 'Main' })
    const approvals = nav.getByRole('link', { name: /^Approvals/ })
    await approvals.getByLabel('1 waiting for your approval').waitFor()
    await author.goto(`${ui.url}/`)
    await author.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /^Approvals/ }).waitFor()
    await author.waitForLoadState('networkidle')
    expect(await author.getByLabel(/waiting for your approval/).count()).toBe(0)
    await approvals.click()
    const waiting = reviewer.getByRole('table', { name: 'Waiting for your approval' })
    await waiting.getByRole('link', { name: new RegExp(`^#${changeRequestId} `) }).waitFor()
    expect(await waiting.textContent()).toContain('new-gateway')
    await checkPage(reviewer, 'approvals')
    await waiting.getByRole('link', { name: new RegExp(`^#${changeRequestId} `) }).click()
    await reviewer.getByRole('button', { name: 'Approve' }).click()
    await reviewer.getByText('Approved', { exact: true }).waitFor()
    // Approved: it waits no more, and the count is gone.
    await approvals.getByLabel(/waiting for your approval/).waitFor({ state: 'detached' })
    expect(await reviewer.getByRole('region', { name: 'Review', exact: true }).textContent()).toContain('Approvals: 1 of 1 needed (erin)')
    await checkPage(reviewer, 'change-request-approved')

    await author.goto(`${ui.url}/projects/payments/change-requests/${changeRequestId}`)
    await author.getByRole('button', { name: 'Apply changes' }).click()
    await author.getByText('Applied', { exact: true }).waitFor()
    const production = await productionOf()
    expect(production.enabled).toBe(true)
    expect(production.strategies).toMatchObject([{ name: 'flexibleRollout', parameters: { rollout: '40' } }])
  })

  it('shows the 409 of a change that no longer applies', async () => {
    const [strategy] = (await productionOf()).strategies
    await author.goto(`${ui.url}/projects/payments/flags/new-gateway`)
    const production = author.getByRole('region', { name: 'Environment production' })
    author.once('dialog', (confirm) => void confirm.accept())
    await production.getByRole('region', { name: 'Strategy flexibleRollout' }).getByRole('button', { name: 'Delete' }).click()
    const open = author.getByRole('region', { name: 'Open change requests' })
    await open.getByRole('link').click()
    await author.getByRole('button', { name: 'Send to review' }).click()
    await author.getByText('In review', { exact: true }).waitFor()
    const id = Number(new URL(author.url()).pathname.split('/').pop())
    await reviewer.goto(`${ui.url}/projects/payments/change-requests/${id}`)
    await reviewer.getByRole('button', { name: 'Approve' }).click()
    await reviewer.getByText('Approved', { exact: true }).waitFor()
    // The strategy goes another way (the admin token may skip change requests) before the request is applied.
    await ui.adminApi('DELETE', `${FLAG}/environments/production/strategies/${strategy.id}`)
    await author.reload()
    await author.getByText('The strategy no longer exists: applying would fail.').waitFor()
    await author.getByRole('button', { name: 'Apply changes' }).click()
    const alert = author.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/^This change request cannot be applied as it is.+/)
    await checkPage(author, 'change-request-conflict')
  })
})
