// The console's roles and groups in a real Chromium against the Node server (see harness.ts): a custom project role
// made of project and environment permissions, a custom root role given to a user, a group with a member, and the
// project's access giving the group several roles. Every page visited passes axe-core.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'vault', name: 'Vault', mode: 'private' })
})
afterAll(async () => {
  await ui?.close()
})

const adminApi = (method: string, path: string, body?: unknown) => ui.adminApi(method, path, body)
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' })
const roleNamed = async (name: string) => (await adminApi('GET', '/api/admin/roles')).roles.find((r: { name: string }) => r.name === name)

async function choose(page: Page, scope: ReturnType<Page['getByRole']> | ReturnType<Page['locator']>, label: string, option: string | RegExp) {
  // Mantine's MultiSelect lays its box over the input: the click goes to the box, which opens the list.
  await comboboxOf(scope, label).click({ force: true })
  await page.getByRole('option', { name: option }).click()
}

describe('roles and groups in the console', { timeout: 90_000 }, () => {
  let page: Page

  it('creates a custom project role from project and environment permissions, and edits it', async () => {
    page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await nav(page).getByRole('link', { name: 'Roles' }).click()
    await page.getByRole('heading', { name: 'Roles' }).waitFor()
    await page.getByRole('button', { name: 'Create role' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create role' })
    await dialog.getByLabel('Name').fill('Production releaser')
    await dialog.getByLabel('Description').fill('Switches flags in production')
    await dialog.getByRole('checkbox', { name: /^Create feature flags/ }).check({ force: true })
    await dialog.getByRole('checkbox', { name: 'Enable/disable flags in production' }).check({ force: true })
    await checkPage(page, 'role-create')
    await dialog.getByRole('button', { name: 'Save role' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('row', { name: /Production releaser/ }).waitFor()
    const role = await roleNamed('Production releaser')
    expect(role).toMatchObject({ type: 'custom', description: 'Switches flags in production' })
    const permissions = async () => (await adminApi('GET', `/api/admin/roles/${role.id}`)).permissions.map((p: { name: string; environment?: string }) => [p.name, p.environment])
    expect(await permissions()).toEqual([
      ['CREATE_FEATURE', undefined],
      ['UPDATE_FEATURE_ENVIRONMENT', 'production'],
    ])
    await checkPage(page, 'roles')

    await page.getByRole('button', { name: 'Edit role Production releaser' }).click()
    const edit = page.getByRole('dialog', { name: 'Edit role Production releaser' })
    await expect.poll(() => edit.getByRole('checkbox', { name: 'Enable/disable flags in production' }).isChecked()).toBe(true)
    await edit.getByRole('checkbox', { name: 'Create activation strategies in every environment' }).check({ force: true })
    await edit.getByRole('button', { name: 'Save role' }).click()
    await edit.waitFor({ state: 'hidden' })
    await expect.poll(permissions).toEqual([
      ['CREATE_FEATURE', undefined],
      ['UPDATE_FEATURE_ENVIRONMENT', 'production'],
      ['CREATE_FEATURE_STRATEGY', undefined],
    ])
  })

  it('creates a custom root role and gives it to a new user', async () => {
    await page.getByRole('button', { name: 'Create role' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create role' })
    await dialog.getByLabel('Name').fill('Segment keeper')
    await dialog.getByText('Root role', { exact: true }).click()
    await dialog.getByRole('checkbox', { name: /^Create segments/ }).check({ force: true })
    await checkPage(page, 'role-create-root')
    await dialog.getByRole('button', { name: 'Save role' }).click()
    await dialog.waitFor({ state: 'hidden' })
    const keeper = await roleNamed('Segment keeper')
    expect(keeper.type).toBe('root-custom')

    await nav(page).getByRole('link', { name: 'Users' }).click()
    await page.getByRole('button', { name: 'Create user' }).click()
    const create = page.getByRole('dialog', { name: 'Create user' })
    await create.getByLabel('Username').fill('sam')
    await choose(page, create, 'Root role', 'Segment keeper')
    await create.getByRole('button', { name: 'Create' }).click()
    await page.getByRole('dialog', { name: 'Invite link' }).getByRole('button', { name: 'Done' }).click()
    const sam = (await adminApi('GET', '/api/admin/user-admin')).users.find((u: { username: string }) => u.username === 'sam')
    expect(sam.rootRole).toBe(keeper.id)
    await expect.poll(() => comboboxOf(page.locator('body'), 'Root role of sam').inputValue()).toBe('Segment keeper')
    await checkPage(page, 'users-custom-root-role')
  })

  it('creates a group with a member, and gives it several roles in a private project', async () => {
    await nav(page).getByRole('link', { name: 'Groups' }).click()
    await page.getByRole('heading', { name: 'Groups' }).waitFor()
    await page.getByRole('button', { name: 'Create group' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create group' })
    await dialog.getByLabel('Name').fill('Releasers')
    await choose(page, dialog, 'Members', 'sam')
    await page.keyboard.press('Escape')
    await checkPage(page, 'group-create')
    await dialog.getByRole('button', { name: 'Save group' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('row', { name: /Releasers/ }).waitFor()
    const group = (await adminApi('GET', '/api/admin/groups')).groups.find((g: { name: string }) => g.name === 'Releasers')
    expect(group.users.map((u: { user: { username: string } }) => u.user.username)).toEqual(['sam'])
    await checkPage(page, 'groups')

    await page.goto(`${ui.url}/projects/vault/settings`)
    await page.getByRole('heading', { name: 'Members and roles' }).waitFor()
    await choose(page, page.locator('body'), 'User or group to add', 'Releasers')
    // The list stays open while roles are picked.
    await choose(page, page.locator('body'), 'Project roles', 'Production releaser')
    await page.getByRole('option', { name: 'Member' }).click()
    await page.keyboard.press('Escape')
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    await comboboxOf(page.locator('body'), 'Roles of Releasers').waitFor()
    const releaser = await roleNamed('Production releaser')
    await expect.poll(async () => (await adminApi('GET', '/api/admin/projects/vault/access')).groups.map((g: { name: string; roles: number[] }) => [g.name, g.roles])).toEqual([['Releasers', [5, releaser.id].sort((a, b) => a - b)]])
    await checkPage(page, 'project-access-groups')

    // The role in use cannot be deleted: the console shows where it is held.
    await page.goto(`${ui.url}/roles`)
    page.once('dialog', (confirm) => void confirm.accept())
    await page.getByRole('button', { name: 'Delete role Production releaser' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Conflict.*held in project vault by 1 group/)
  })

  it('lets the group’s member into the private project, and offers them no admin page', async () => {
    await adminApi('POST', `/api/admin/user-admin/${(await adminApi('GET', '/api/admin/user-admin')).users.find((u: { username: string }) => u.username === 'sam').id}/change-password`, { password: 'sam-password' })
    const sam = await ui.newPage()
    await ui.signIn(sam, 'sam', 'sam-password')
    await sam.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    const links = await nav(sam).getByRole('link').allTextContents()
    for (const adminOnly of ['Users', 'Groups', 'Roles']) expect(links).not.toContain(adminOnly)
    await sam.goto(`${ui.url}/projects/vault`)
    await sam.getByRole('heading', { name: 'Vault' }).waitFor()
    await checkPage(sam, 'project-as-group-member')
  })
})
