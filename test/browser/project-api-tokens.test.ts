// A project's API tokens in a real Chromium against the Node server (see harness.ts): a Member of the project (a Viewer
// otherwise) finds "API tokens" on the project's page, creates a frontend token (the secret shown once), sees it listed
// masked and deletes it; a Viewer who is not a member is offered no link. Every page and dialog visited passes axe-core.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

const PASSWORD = 'a member password'
let ui: ConsoleUnderTest
let member: Page
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'checkout' })
  const { id } = await ui.adminApi('POST', '/api/admin/user-admin', { username: 'mia', password: PASSWORD, rootRole: 'Viewer', sendEmail: false })
  await ui.adminApi('POST', '/api/admin/projects/shop/access', { roles: [5], users: [id] })
  await ui.adminApi('POST', '/api/admin/user-admin', { username: 'vic', password: PASSWORD, rootRole: 'Viewer', sendEmail: false })
  member = await ui.newPage()
  await ui.signIn(member, 'mia', PASSWORD)
  await member.getByRole('navigation', { name: 'Main' }).waitFor()
})
afterAll(async () => {
  await ui?.close()
})

describe("a project's API tokens in the console", { timeout: 90_000 }, () => {
  it('a Member creates a token for the project, sees its secret once, and deletes it', async () => {
    await member.goto(`${ui.url}/projects/shop`)
    await member.getByRole('link', { name: 'API tokens' }).click()
    await member.getByRole('heading', { name: 'API tokens of shop' }).waitFor()
    await member.getByText('No API tokens for this project yet.').waitFor()
    await checkPage(member, 'project-api-tokens-empty')

    await member.getByRole('button', { name: 'Create API token' }).click()
    const form = member.getByRole('dialog', { name: 'Create API token' })
    await form.getByLabel('Name').fill('storefront')
    await comboboxOf(form, 'Type').click()
    await member.getByRole('option', { name: 'Frontend SDK' }).click()
    await comboboxOf(form, 'Environment').click()
    await member.getByRole('option', { name: 'production' }).click()
    await checkPage(member, 'project-api-token-form')
    await form.getByRole('button', { name: 'Create' }).click()

    const dialog = member.getByRole('dialog', { name: 'Your new API token' })
    await dialog.getByRole('button', { name: 'Copy secret' }).waitFor()
    const secret = await dialog.getByLabel('Secret').inputValue()
    expect(secret).toMatch(/^shop:production\.[0-9a-f]{64}$/)
    await checkPage(member, 'project-api-token-secret')
    await dialog.getByRole('button', { name: 'Done' }).click()

    const row = member.getByRole('row', { name: /storefront/ })
    await row.getByText('frontend').waitFor()
    expect(await member.content()).not.toContain(secret.split('.')[1])
    await checkPage(member, 'project-api-tokens')
    expect((await fetch(`${ui.url}/api/frontend`, { headers: { authorization: secret } })).status).toBe(200)

    member.once('dialog', (d) => void d.accept())
    await member.getByRole('button', { name: 'Delete token storefront' }).click()
    await member.getByText('No API tokens for this project yet.').waitFor()
    expect((await ui.adminApi('GET', '/api/admin/projects/shop/api-tokens')).tokens).toEqual([])
  })

  it('a Viewer who is not a member is offered no link to them', async () => {
    const viewer = await ui.newPage()
    await ui.signIn(viewer, 'vic', PASSWORD)
    await viewer.getByRole('navigation', { name: 'Main' }).waitFor()
    await viewer.goto(`${ui.url}/projects/shop`)
    await viewer.getByRole('link', { name: 'Archived flags' }).waitFor()
    expect(await viewer.getByRole('link', { name: 'API tokens' }).count()).toBe(0)
  })
})
