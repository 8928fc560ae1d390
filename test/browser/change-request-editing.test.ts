// Editing, discarding and scheduling change requests through the console, in a real Chromium (harness.ts): the
// author edits one change of their draft and discards another, sends it to review; once approved they schedule it
// (a native date-time input), see the schedule, reschedule it and apply it now; another draft is discarded whole.
// Every page visited passes axe-core.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let author: Page
let reviewer: Page
const FLAG = '/api/admin/projects/payments/features/checkout'
const productionOf = async () => (await ui.adminApi('GET', FLAG)).environments.find((e: { name: string }) => e.name === 'production')
const requests = async () => (await ui.adminApi('GET', '/api/admin/projects/payments/change-requests')) as { id: number; state: string; features: { changes: { id: number; payload: any }[] }[]; schedule?: any }[]

beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'payments', name: 'Payments' })
  await ui.adminApi('PUT', '/api/admin/projects/payments/change-requests/config', { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 })
  await ui.adminApi('POST', '/api/admin/projects/payments/features', { name: 'checkout' })
  for (const username of ['ed', 'erin']) await ui.adminApi('POST', '/api/admin/user-admin', { username, password: `${username}-password`, rootRole: 'Editor', sendEmail: false })
  author = await ui.newPage()
  await ui.signIn(author, 'ed', 'ed-password')
  await author.getByRole('heading', { name: 'Your dashboard' }).waitFor()
  reviewer = await ui.newPage()
  await ui.signIn(reviewer, 'erin', 'erin-password')
  await reviewer.getByRole('heading', { name: 'Your dashboard' }).waitFor()
})
afterAll(() => ui?.close())

/** Adds a gradual rollout of `rollout`% in production to ed's draft, through the flag's page. */
async function requestRollout(rollout: string) {
  await author.goto(`${ui.url}/projects/payments/flags/checkout`)
  const production = author.getByRole('region', { name: 'Environment production' })
  await production.getByRole('button', { name: 'Add strategy in production' }).click()
  const dialog = author.getByRole('dialog')
  await dialog.getByLabel('Rollout (%)').fill(rollout)
  await dialog.getByRole('button', { name: 'Add to change request' }).click()
  await dialog.waitFor({ state: 'hidden' })
}

describe('editing, discarding and scheduling change requests', { timeout: 60_000 }, () => {
  it('edits one change of a draft and discards another', async () => {
    await requestRollout('40')
    await requestRollout('60')
    const [draft] = await requests()
    await author.goto(`${ui.url}/projects/payments/change-requests/${draft!.id}`)
    const changes = author.getByRole('region', { name: 'Changes to checkout' })
    await changes.getByText('Add the strategy flexibleRollout (rollout 60%)').waitFor()
    await checkPage(author, 'change-request-draft')

    await changes.getByRole('button', { name: 'Edit the change: Add the strategy flexibleRollout (rollout 40%)' }).click()
    const dialog = author.getByRole('dialog')
    const payload = dialog.getByLabel('Payload (JSON)')
    await payload.fill((await payload.inputValue()).replace('"rollout": "40"', '"rollout": "45"'))
    await checkPage(author, 'change-edit')
    await dialog.getByRole('button', { name: 'Save change' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await changes.getByText('Add the strategy flexibleRollout (rollout 45%)').waitFor()

    author.once('dialog', (confirm) => void confirm.accept())
    await changes.getByRole('button', { name: 'Discard the change: Add the strategy flexibleRollout (rollout 60%)' }).click()
    await expect.poll(async () => (await requests())[0]!.features[0]!.changes.length).toBe(1)
    expect((await requests())[0]!.features[0]!.changes[0]!.payload.parameters.rollout).toBe('45')
    // The only change left cannot be discarded: the draft can.
    expect(await changes.getByRole('button', { name: /^Discard the change/ }).count()).toBe(0)
  })

  it('schedules the approved request, shows its schedule, reschedules it and applies it now', async () => {
    await author.getByRole('button', { name: 'Send to review' }).click()
    await author.getByText('In review', { exact: true }).waitFor()
    const id = Number(new URL(author.url()).pathname.split('/').pop())
    await reviewer.goto(`${ui.url}/projects/payments/change-requests/${id}`)
    await reviewer.getByRole('button', { name: 'Approve' }).click()
    await reviewer.getByText('Approved', { exact: true }).waitFor()

    await author.reload()
    const input = author.getByLabel('Schedule for')
    await input.fill('2099-06-01T09:30')
    await author.getByRole('button', { name: 'Schedule', exact: true }).click()
    await author.getByText('Scheduled', { exact: true }).waitFor()
    await author.getByText(/Scheduled to be applied at .* \(by ed, with their access\)/).waitFor()
    const [scheduled] = await requests()
    expect(scheduled).toMatchObject({ state: 'Scheduled', schedule: { status: 'pending', scheduledBy: { username: 'ed' } } })
    expect(new Date(scheduled!.schedule.scheduledAt).getFullYear()).toBe(2099)
    await checkPage(author, 'change-request-scheduled')

    await author.getByLabel('Reschedule for').fill('2099-07-01T10:00')
    await author.getByRole('button', { name: 'Reschedule' }).click()
    await expect.poll(async () => new Date((await requests())[0]!.schedule.scheduledAt).getMonth()).toBe(6)
    expect(await productionOf()).toMatchObject({ strategies: [] })

    author.once('dialog', (confirm) => void confirm.accept())
    await author.getByRole('button', { name: 'Apply now' }).click()
    await author.getByText('Applied', { exact: true }).waitFor()
    expect((await productionOf()).strategies).toMatchObject([{ name: 'flexibleRollout', parameters: { rollout: '45' } }])
  })

  it('discards a draft whole', async () => {
    await requestRollout('10')
    const [draft] = await requests()
    expect(draft!.state).toBe('Draft')
    await author.goto(`${ui.url}/projects/payments/change-requests/${draft!.id}`)
    author.once('dialog', (confirm) => void confirm.accept())
    await author.getByRole('button', { name: 'Discard draft' }).click()
    await author.getByRole('table', { name: 'Change requests' }).waitFor()
    expect((await requests()).map((r) => r.id)).not.toContain(draft!.id)
  })
})
