// The console's administration pages in a real Chromium against the Node server (see harness.ts): segments,
// context fields, tag types, API and personal access tokens, integrations with their delivery log, users and
// project members, single sign-on, and what an Editor is not offered. Every page visited passes axe-core.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let hooks: Server
const delivered: { body: string; authorization?: string }[] = []
beforeAll(async () => {
  hooks = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      delivered.push({ body, authorization: req.headers.authorization })
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve))
  ui = await startConsole({ FLAGPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'new-basket' })
})
afterAll(async () => {
  await ui?.close()
  await new Promise((resolve) => hooks?.close(resolve))
})

const adminApi = (method: string, path: string, body?: unknown) => ui.adminApi(method, path, body)
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' })
const body = (page: Page) => page.locator('body')

async function choose(page: Page, scope: ReturnType<Page['getByRole']>, label: string, option: string | RegExp) {
  // Mantine's MultiSelect lays its box over the input: the click goes to the box, which opens the list.
  await comboboxOf(scope, label).click({ force: true })
  await page.getByRole('option', { name: option }).click()
}

describe('the administration pages', { timeout: 60_000 }, () => {
  let page: Page

  it('creates a segment with a constraint and lists it with its usage; refuses to delete it while a flag uses it', async () => {
    page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await nav(page).getByRole('link', { name: 'Segments' }).click()
    await page.getByRole('heading', { name: 'Segments' }).waitFor()
    await page.getByRole('button', { name: 'Create segment' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Name').fill('early-birds')
    await dialog.getByLabel('Description').fill('Who asked first')
    await dialog.getByRole('button', { name: 'Add constraint' }).click()
    await dialog.getByLabel('Values 1').fill('alice')
    await page.keyboard.press('Enter')
    await checkPage(page, 'segment-create')
    await dialog.getByRole('button', { name: 'Save segment' }).click()
    await dialog.waitFor({ state: 'hidden' })
    const row = page.getByRole('row', { name: /early-birds/ })
    await row.waitFor()
    expect(await row.textContent()).toContain('0 flags in 0 projects')
    const { segments } = await adminApi('GET', '/api/admin/segments')
    const segment = segments.find((s: { name: string }) => s.name === 'early-birds')
    expect(segment).toMatchObject({ description: 'Who asked first', project: null, constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }] })

    await adminApi('POST', '/api/admin/projects/shop/features/new-basket/environments/development/strategies', { name: 'default', segments: [segment.id] })
    await page.reload()
    await expect.poll(() => row.textContent()).toContain('1 flag in 1 project')
    page.once('dialog', (confirm) => void confirm.accept())
    await page.getByRole('button', { name: 'Delete segment early-birds' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Conflict.*in use by the strategies of flag new-basket/)
    await checkPage(page, 'segments')
  })

  it('creates a client token, shows its secret once, and lists it masked', async () => {
    await page.goto(`${ui.url}/api-tokens`)
    await page.getByRole('button', { name: 'Create API token' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create API token' })
    await dialog.getByLabel('Name').fill('shop-backend')
    await choose(page, dialog, 'Projects', 'Shop')
    await page.keyboard.press('Escape')
    await dialog.getByRole('button', { name: 'Create' }).click()
    const shown = page.getByRole('dialog', { name: 'Your new API token' })
    await shown.getByText('You will not see this secret again').waitFor()
    const secret = (await shown.getByLabel('Secret').inputValue())
    expect(secret).toMatch(/^shop:development\./)
    await shown.getByRole('button', { name: 'Copy secret' }).waitFor()
    await checkPage(page, 'api-token-secret')
    await shown.getByRole('button', { name: 'Done' }).click()
    await shown.waitFor({ state: 'hidden' })
    await page.getByRole('row', { name: /shop-backend/ }).waitFor()
    expect(await page.locator('body').textContent()).not.toContain(secret)
    await checkPage(page, 'api-tokens')
    // The secret works: it is the one the server stored.
    const features = await fetch(`${ui.url}/api/client/features`, { headers: { authorization: secret } })
    expect(features.status).toBe(200)

    page.once('dialog', (confirm) => void confirm.accept())
    await page.getByRole('button', { name: 'Delete token shop-backend' }).click()
    await page.getByRole('row', { name: /shop-backend/ }).waitFor({ state: 'detached' })
    expect((await fetch(`${ui.url}/api/client/features`, { headers: { authorization: secret } })).status).toBe(401)
  })

  it('creates and deletes a personal access token, its secret shown once', async () => {
    await page.goto(`${ui.url}/personal-tokens`)
    await page.getByRole('button', { name: 'Create personal access token' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create personal access token' })
    await dialog.getByLabel('Description').fill('my script')
    await dialog.getByRole('button', { name: 'Create' }).click()
    const shown = page.getByRole('dialog', { name: 'Your new personal access token' })
    const secret = (await shown.getByLabel('Secret').inputValue())
    expect(secret).toMatch(/^user:/)
    expect((await fetch(`${ui.url}/api/admin/projects`, { headers: { authorization: secret } })).status).toBe(200)
    await shown.getByRole('button', { name: 'Done' }).click()
    await checkPage(page, 'personal-tokens')
    page.once('dialog', (confirm) => void confirm.accept())
    await page.getByRole('button', { name: 'Delete token my script' }).click()
    await page.getByText('You have no personal access tokens.').waitFor()
  })

  it('creates a webhook, masks its URL, and shows its delivery log after a flag change', async () => {
    const url = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`
    await page.goto(`${ui.url}/integrations`)
    await page.getByRole('button', { name: 'Create webhook' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create webhook' })
    await dialog.getByLabel('Description').fill('Shop hook')
    await dialog.getByLabel('Webhook URL').fill(url)
    await dialog.getByLabel('Authorization').fill('Bearer hook-secret')
    await dialog.getByLabel('Body template').fill('{"flag": "{{event.featureName}}"}')
    await comboboxOf(dialog, 'Events').fill('feature-environment-enabled')
    await page.keyboard.press('Enter')
    await dialog.getByLabel('Description').click()
    await choose(page, dialog, 'Projects', 'Shop')
    await page.keyboard.press('Escape')
    await checkPage(page, 'integration-create')
    await dialog.getByRole('button', { name: 'Save integration' }).click()
    await dialog.waitFor({ state: 'hidden' })
    const row = page.getByRole('row', { name: /Shop hook/ })
    await row.waitFor()
    expect(await row.textContent()).toContain('Webhook to *****')
    expect(await body(page).textContent()).not.toContain('hook-secret')

    await adminApi('POST', '/api/admin/projects/shop/features/new-basket/environments/development/on')
    await expect.poll(() => delivered.length, { timeout: 10_000 }).toBeGreaterThan(0)
    expect(delivered[0]).toEqual({ body: '{"flag": "new-basket"}', authorization: 'Bearer hook-secret' })
    await row.getByRole('button', { name: 'Delivery log of Shop hook' }).click()
    const log = page.getByRole('dialog', { name: 'Delivery log of Shop hook' })
    await expect.poll(() => log.getByRole('table', { name: 'Deliveries' }).textContent()).toMatch(/feature-environment-enabled.*new-basket.*success/)
    await checkPage(page, 'integration-log')
    await page.keyboard.press('Escape')

    await row.getByRole('switch', { name: 'Shop hook enabled' }).click({ force: true })
    await expect.poll(async () => (await adminApi('GET', '/api/admin/addons')).addons[0]).toMatchObject({ enabled: false, parameters: { url: '*****', authorization: '*****' } })
    await checkPage(page, 'integrations')
  })

  it('creates a user with an invite link, changes their root role, and gives them a project role', async () => {
    await page.goto(`${ui.url}/users`)
    await page.getByRole('button', { name: 'Create user' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create user' })
    await dialog.getByLabel('Username').fill('dana')
    await dialog.getByLabel('Name', { exact: true }).fill('Dana Scully')
    await choose(page, dialog, 'Root role', 'Viewer')
    await dialog.getByRole('button', { name: 'Create' }).click()
    const invite = page.getByRole('dialog', { name: 'Invite link' })
    expect(await invite.getByLabel('Invite link').inputValue()).toMatch(/\/new-user\?token=/)
    await checkPage(page, 'user-invite')
    await invite.getByRole('button', { name: 'Done' }).click()
    await choose(page, body(page), 'Root role of Dana Scully', 'Editor')
    const dana = async () => (await adminApi('GET', '/api/admin/user-admin')).users.find((u: { username: string }) => u.username === 'dana')
    await expect.poll(async () => (await dana()).rootRole).toBe(2)
    await checkPage(page, 'users')

    await page.goto(`${ui.url}/projects/shop/settings`)
    await page.getByRole('heading', { name: 'Members and roles' }).waitFor()
    // The picker searches the users as one types.
    await comboboxOf(body(page), 'User or group to add').fill('scul')
    await page.getByRole('option', { name: 'Dana Scully' }).click()
    await choose(page, body(page), 'Project roles', 'Member')
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    await comboboxOf(body(page), 'Roles of Dana Scully').waitFor()
    const access = await adminApi('GET', '/api/admin/projects/shop/access')
    const member = access.roles.find((r: { name: string }) => r.name === 'Member')
    expect(access.users.find((u: { username: string }) => u.username === 'dana').roles).toEqual([member.id])
    await checkPage(page, 'project-members')
  })

  it('saves the single sign-on settings and shows the secret masked afterwards', async () => {
    await page.goto(`${ui.url}/single-sign-on`)
    await page.getByRole('switch', { name: 'Enabled' }).click({ force: true })
    await page.getByLabel('Discover URL').fill('https://accounts.example.com/.well-known/openid-configuration')
    await page.getByRole('textbox', { name: /^Client id/ }).fill('flagpost')
    await page.getByLabel('Client secret').fill('very-secret-value')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await expect.poll(async () => (await adminApi('GET', '/api/admin/auth/oidc/settings')).clientId).toBe('flagpost')
    await page.reload()
    await expect.poll(() => page.getByLabel('Client secret').inputValue()).toBe('********')
    await checkPage(page, 'single-sign-on')
    // Saving again with the mask keeps the stored secret.
    await page.getByRole('textbox', { name: /^Client id/ }).fill('flagpost-2')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await expect.poll(async () => (await adminApi('GET', '/api/admin/auth/oidc/settings')).clientId).toBe('flagpost-2')
    expect((await adminApi('GET', '/api/admin/auth/oidc/settings')).secret).toBe('********')
  })

  it('creates a context field with legal values, offered by the constraint editor, and a tag type', async () => {
    await page.goto(`${ui.url}/context-fields`)
    await page.getByRole('button', { name: 'Create context field' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create context field' })
    await dialog.getByLabel('Name').fill('tier')
    await dialog.getByRole('switch', { name: 'Custom stickiness' }).click({ force: true })
    await dialog.getByRole('button', { name: 'Add legal value' }).click()
    await dialog.getByRole('textbox', { name: /^Value 1/ }).fill('gold')
    await dialog.getByLabel('Description of value 1').fill('Paying customers')
    await dialog.getByRole('button', { name: 'Add legal value' }).click()
    await dialog.getByRole('textbox', { name: /^Value 2/ }).fill('free')
    await checkPage(page, 'context-field-create')
    await dialog.getByRole('button', { name: 'Save context field' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('row', { name: /tier/ }).waitFor()
    expect(await adminApi('GET', '/api/admin/context/tier')).toMatchObject({
      stickiness: true,
      legalValues: [{ value: 'gold', description: 'Paying customers' }, { value: 'free' }],
    })
    await checkPage(page, 'context-fields')

    // The constraint editor offers the new field, and its legal values.
    await page.goto(`${ui.url}/segments`)
    await page.getByRole('button', { name: 'Create segment' }).click()
    const segmentDialog = page.getByRole('dialog', { name: 'Create segment' })
    await segmentDialog.getByRole('button', { name: 'Add constraint' }).click()
    await segmentDialog.getByLabel('Context field 1').fill('ti')
    await page.getByRole('option', { name: 'tier' }).click()
    await segmentDialog.getByLabel('Values 1').click()
    await page.getByRole('option', { name: 'gold' }).waitFor()
    await page.keyboard.press('Escape')
    await page.keyboard.press('Escape')
    await segmentDialog.waitFor({ state: 'hidden' })

    await nav(page).getByRole('link', { name: 'Tag types' }).click()
    await page.getByRole('button', { name: 'Create tag type' }).click()
    const tagDialog = page.getByRole('dialog', { name: 'Create tag type' })
    await tagDialog.getByLabel('Name').fill('team')
    await tagDialog.getByLabel('Color').fill('#1A7F37')
    await tagDialog.getByRole('button', { name: 'Save tag type' }).click()
    await page.getByRole('row', { name: /team/ }).waitFor()
    await checkPage(page, 'tag-types')
  })

  it("lets a project's Owner who is no admin add a member, found by searching the users as they type", async () => {
    const olive = await adminApi('POST', '/api/admin/user-admin', { username: 'olive', name: 'Olive Owner', password: 'olive owner password', rootRole: 'Viewer', sendEmail: false })
    await adminApi('POST', '/api/admin/user-admin', { username: 'peter', name: 'Peter Picked', email: 'peter@garden.example', rootRole: 'Viewer', sendEmail: false })
    await adminApi('POST', '/api/admin/service-account', { username: 'robo', name: 'Robo Helper', rootRole: 'Viewer' })
    await adminApi('POST', '/api/admin/projects', { id: 'orchard', name: 'Orchard' })
    await adminApi('POST', '/api/admin/projects/orchard/access', { roles: [4], users: [olive.id] })
    await adminApi('POST', '/api/admin/roles', { name: 'Orchard bypass', type: 'custom', permissions: [{ name: 'SKIP_CHANGE_REQUEST' }] })
    const owner = await ui.newPage()
    await ui.signIn(owner, 'olive', 'olive owner password')
    await owner.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    // Not an admin: no Users page.
    expect(await nav(owner).getByRole('link').allTextContents()).not.toContain('Users')
    // The project's Owner finds its Settings under its title.
    await owner.goto(`${ui.url}/projects/orchard`)
    await owner.getByRole('link', { name: 'Settings', exact: true }).click()
    await owner.getByRole('heading', { name: 'Members and roles' }).waitFor()

    const picker = comboboxOf(body(owner), 'User or group to add')
    await picker.fill('oli')
    await owner.getByText('No user or group found without a role here').waitFor()
    // Service accounts (no users to search for) are offered as the groups are, by what is typed.
    await picker.fill('robo')
    await owner.getByRole('option', { name: 'Robo Helper (service account)' }).waitFor()
    await picker.fill('garden.exam')
    await owner.getByRole('option', { name: /Peter Picked/ }).waitFor()
    await checkPage(owner, 'project-member-search')
    await owner.getByRole('option', { name: /Peter Picked/ }).click()
    // A role holding a permission the Owner lacks (SKIP_CHANGE_REQUEST) is shown but cannot be picked.
    await comboboxOf(body(owner), 'Project roles').click({ force: true })
    const bypass = owner.getByRole('option', { name: 'Orchard bypass (you cannot give it)' })
    await bypass.waitFor()
    expect(await bypass.getAttribute('aria-disabled')).toBe('true')
    await owner.keyboard.press('Escape')
    await choose(owner, body(owner), 'Project roles', 'Member')
    await owner.getByRole('button', { name: 'Add', exact: true }).click()
    await comboboxOf(body(owner), 'Roles of Peter Picked').waitFor()
    const access = await adminApi('GET', '/api/admin/projects/orchard/access')
    const member = access.roles.find((r: { name: string }) => r.name === 'Member')
    expect(access.users.find((u: { username: string }) => u.username === 'peter').roles).toEqual([member.id])
  })

  it('offers an Editor no admin-only page, and shows the refusal when one is opened anyway', async () => {
    await adminApi('POST', '/api/admin/user-admin', { username: 'eddie', password: 'editor-password', rootRole: 'Editor', sendEmail: false })
    const editor = await ui.newPage()
    await ui.signIn(editor, 'eddie', 'editor-password')
    await editor.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    const links = await nav(editor).getByRole('link').allTextContents()
    expect(links).toEqual(expect.arrayContaining(['Segments', 'Context fields', 'Personal access tokens']))
    for (const adminOnly of ['Users', 'Integrations', 'Single sign-on', 'Tag types']) expect(links).not.toContain(adminOnly)
    await nav(editor).getByRole('link', { name: 'Context fields' }).click()
    await editor.getByRole('button', { name: 'Create context field' }).waitFor()
    await editor.goto(`${ui.url}/users`)
    await expect.poll(() => editor.getByRole('alert').textContent()).toMatch(/^You may not do this/)
    await checkPage(editor, 'users-as-editor')
  })
})
