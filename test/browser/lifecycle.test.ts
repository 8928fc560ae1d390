// The console's flag and project lifecycle in a real Chromium against the Node server (see harness.ts): archiving
// flags (one from its page, several from the project's table) and the archived flags' view with revive and delete
// for good, cloning and moving a flag, archiving, reviving and deleting projects. Every page visited passes axe-core.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'garden', name: 'Garden' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'orchard', name: 'Orchard' })
  for (const name of ['roses', 'tulips', 'lilies', 'soil', 'seeds', 'moved-bed']) await ui.adminApi('POST', '/api/admin/projects/garden/features', { name })
  await ui.adminApi('POST', '/api/admin/projects/garden/features/roses/environments/development/strategies', {
    name: 'flexibleRollout',
    parameters: { rollout: '40', stickiness: 'default', groupId: 'roses' },
  })
  // seeds depends on soil: archiving soil alone is refused
  await ui.adminApi('POST', '/api/admin/projects/garden/features/seeds/dependencies', { feature: 'soil' })
})
afterAll(async () => {
  await ui?.close()
})

const adminApi = (method: string, path: string, body?: unknown) => ui.adminApi(method, path, body)
const flagNames = async (query: string) => ((await adminApi('GET', `/api/admin/search/features?${query}`)).features as { name: string }[]).map((f) => f.name).sort()
const acceptNextConfirm = (page: Page) => page.once('dialog', (confirm) => void confirm.accept())

describe('the flag and project lifecycle', { timeout: 60_000 }, () => {
  let page: Page

  it('archives a flag from its page, after its confirmation, and revives it from the archived flags', async () => {
    page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    await page.goto(`${ui.url}/projects/garden/flags/tulips`)
    await page.getByRole('heading', { name: 'tulips' }).waitFor()
    await checkPage(page, 'flag-actions')
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Archive', exact: true }).click()
    await page.getByRole('heading', { name: 'Garden' }).waitFor()
    expect(await flagNames('project=IS:garden&archived=IS:true')).toEqual(['tulips'])

    await page.getByRole('link', { name: 'Archived flags' }).click()
    await page.getByRole('heading', { name: 'Archived flags' }).waitFor()
    await page.getByRole('row', { name: /tulips/ }).waitFor()
    await checkPage(page, 'archived-flags')
    await page.getByRole('button', { name: 'Revive tulips' }).click()
    await page.getByText('No archived flags in this project.').waitFor()
    expect(await flagNames('project=IS:garden&archived=IS:true')).toEqual([])
    const tulips = await adminApi('GET', '/api/admin/projects/garden/features/tulips')
    expect(tulips.archived ?? false).toBe(false)
  })

  it('shows the refusal to archive a flag other flags depend on', async () => {
    await page.goto(`${ui.url}/projects/garden/flags/soil`)
    await page.getByRole('heading', { name: 'soil' }).waitFor()
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Archive', exact: true }).click()
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/The server refused the input.*You can not archive soil: other flags depend on it/)
  })

  it('archives a selection from the flags table, warned about a parent whose live child is left behind', async () => {
    await page.goto(`${ui.url}/projects/garden`)
    await page.getByRole('heading', { name: 'Garden' }).waitFor()
    await page.getByRole('checkbox', { name: 'Select soil' }).check()
    await page.getByRole('checkbox', { name: 'Select lilies' }).check()
    await page.getByRole('button', { name: 'Archive selected' }).click()
    const dialog = page.getByRole('dialog', { name: 'Archive flags' })
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/soil has live child flags not archived with it/)
    expect(await dialog.getByRole('button', { name: 'Archive' }).isDisabled()).toBe(true)
    await checkPage(page, 'archive-flags-warning')
    await dialog.getByRole('button', { name: 'Close' }).click()

    await page.getByRole('checkbox', { name: 'Select seeds' }).check()
    await page.getByRole('button', { name: 'Archive selected' }).click()
    await expect.poll(() => dialog.getByRole('listitem').allTextContents()).toEqual(['soil', 'lilies', 'seeds'])
    await expect.poll(() => dialog.getByRole('button', { name: 'Archive' }).isEnabled()).toBe(true)
    await dialog.getByRole('button', { name: 'Archive' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect(await flagNames('project=IS:garden&archived=IS:true')).toEqual(['lilies', 'seeds', 'soil'])
  })

  it('deletes an archived flag for good, then the rest of a selection', async () => {
    await page.goto(`${ui.url}/projects/garden/archive`)
    await page.getByRole('row', { name: /lilies/ }).waitFor()
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Delete lilies for good' }).click()
    await page.getByRole('row', { name: /lilies/ }).waitFor({ state: 'detached' })
    await expect(adminApi('GET', '/api/admin/projects/garden/features/lilies')).rejects.toThrow(/404/)

    await page.getByRole('checkbox', { name: 'Select all archived flags' }).check()
    await checkPage(page, 'archived-flags-selected')
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Delete selected' }).click()
    await page.getByText('No archived flags in this project.').waitFor()
    expect(await flagNames('project=IS:garden&archived=IS:true')).toEqual([])
  })

  it('clones a flag with its strategies, and shows the refusal of a name already taken', async () => {
    await page.goto(`${ui.url}/projects/garden/flags/roses`)
    await page.getByRole('button', { name: 'Clone' }).click()
    const dialog = page.getByRole('dialog', { name: 'Clone roses' })
    await dialog.getByLabel('Name of the copy').fill('tulips')
    await dialog.getByRole('button', { name: 'Clone flag' }).click()
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/Conflict.*tulips/)
    await dialog.getByLabel('Name of the copy').fill('roses-copy')
    await checkPage(page, 'flag-clone')
    await dialog.getByRole('button', { name: 'Clone flag' }).click()
    await page.getByRole('heading', { name: 'roses-copy' }).waitFor()
    const copy = await adminApi('GET', '/api/admin/projects/garden/features/roses-copy')
    const development = copy.environments.find((e: { name: string }) => e.name === 'development')
    expect(development.strategies).toMatchObject([{ name: 'flexibleRollout', parameters: { rollout: '40', groupId: 'roses-copy' } }])
  })

  it('moves a flag to another project', async () => {
    await page.goto(`${ui.url}/projects/garden/flags/moved-bed`)
    await page.getByRole('button', { name: 'Move to project' }).click()
    const dialog = page.getByRole('dialog', { name: 'Move moved-bed' })
    await comboboxOf(dialog, 'Target project').click()
    await page.getByRole('option', { name: 'Orchard (orchard)' }).click()
    await checkPage(page, 'flag-move')
    await dialog.getByRole('button', { name: 'Move flag' }).click()
    await page.waitForURL(/\/projects\/orchard\/flags\/moved-bed$/)
    await page.getByRole('heading', { name: 'moved-bed' }).waitFor()
    expect((await adminApi('GET', '/api/admin/projects/orchard/features/moved-bed')).project).toBe('orchard')
  })

  it('refuses to archive a project with live flags, and archives, revives and deletes an empty one', async () => {
    await page.goto(`${ui.url}/projects/garden`)
    await page.getByRole('heading', { name: 'Garden' }).waitFor()
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Archive project' }).click()
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/Conflict.*You can not archive project garden: it has live feature flags/)

    await adminApi('POST', '/api/admin/projects', { id: 'shed', name: 'Shed' })
    await page.goto(`${ui.url}/projects/shed`)
    await page.getByRole('heading', { name: 'Shed' }).waitFor()
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Archive project' }).click()
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor()
    await page.getByRole('button', { name: 'Revive project Shed' }).waitFor()
    await checkPage(page, 'projects-archived')
    expect((await adminApi('GET', '/api/admin/projects?archived=true')).projects.map((p: { id: string }) => p.id)).toEqual(['shed'])

    await page.getByRole('button', { name: 'Revive project Shed' }).click()
    await page.getByRole('heading', { name: 'Archived projects' }).waitFor({ state: 'detached' })
    await page.getByRole('link', { name: 'Shed' }).click()
    await page.getByRole('heading', { name: 'Shed' }).waitFor()
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Delete project' }).click()
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor()
    await expect(adminApi('GET', '/api/admin/projects/shed')).rejects.toThrow(/404/)
  })

  it('creates a custom strategy type with typed parameters and uses it on a flag; refuses to delete it while used', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Strategy types' }).click()
    await page.getByRole('heading', { name: 'Strategy types' }).waitFor()
    expect(await page.getByRole('row', { name: /flexibleRollout/ }).textContent()).toContain('built-in')
    await page.getByRole('button', { name: 'Create strategy type' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create strategy type' })
    await dialog.getByLabel('Name').fill('regional')
    await dialog.getByLabel('Title').fill('By region')
    await dialog.getByRole('button', { name: 'Add parameter' }).click()
    await dialog.getByLabel('Parameter 1 name').fill('regions')
    await comboboxOf(dialog, 'Parameter 1 type').click()
    await page.getByRole('option', { name: 'list' }).click()
    await dialog.getByRole('checkbox', { name: 'Required' }).check()
    await dialog.getByRole('button', { name: 'Add parameter' }).click()
    await dialog.getByLabel('Parameter 2 name').fill('share')
    await comboboxOf(dialog, 'Parameter 2 type').click()
    await page.getByRole('option', { name: 'percentage' }).click()
    await checkPage(page, 'strategy-type-create')
    await dialog.getByRole('button', { name: 'Save strategy type' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('row', { name: /regional/ }).waitFor()
    await checkPage(page, 'strategy-types')
    expect(await adminApi('GET', '/api/admin/strategies/regional')).toMatchObject({
      title: 'By region',
      editable: true,
      parameters: [
        { name: 'regions', type: 'list', required: true },
        { name: 'share', type: 'percentage', required: false },
      ],
    })

    await page.goto(`${ui.url}/projects/garden/flags/tulips`)
    const development = page.getByRole('region', { name: 'Environment development' })
    await development.getByRole('button', { name: 'Add strategy in development' }).click()
    const strategy = page.getByRole('dialog')
    await comboboxOf(strategy, 'Strategy').click()
    await page.getByRole('option', { name: 'By region (regional)' }).click()
    await expect.poll(() => strategy.getByRole('status').textContent()).toBe('regions is required')
    expect(await strategy.getByRole('button', { name: 'Save strategy' }).isDisabled()).toBe(true)
    await strategy.getByLabel('regions').fill('eu,us')
    await strategy.getByLabel('share (%)').fill('30')
    await checkPage(page, 'strategy-custom')
    await strategy.getByRole('button', { name: 'Save strategy' }).click()
    await strategy.waitFor({ state: 'hidden' })
    await development.getByText('regions: eu,us · share: 30').waitFor()
    const tulips = await adminApi('GET', '/api/admin/projects/garden/features/tulips')
    expect(tulips.environments.find((e: { name: string }) => e.name === 'development').strategies).toMatchObject([{ name: 'regional', parameters: { regions: 'eu,us', share: '30' } }])

    await page.goto(`${ui.url}/strategy-types`)
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Delete strategy type regional' }).click()
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/^Conflict.*tulips/)
    await page.getByRole('button', { name: 'Deprecate strategy type regional' }).click()
    await page.getByRole('button', { name: 'Reactivate strategy type regional' }).waitFor()
    expect((await adminApi('GET', '/api/admin/strategies/regional')).deprecated).toBe(true)

    // a deprecated type is not offered for a new strategy
    await page.goto(`${ui.url}/projects/garden/flags/roses`)
    await page.getByRole('region', { name: 'Environment development' }).getByRole('button', { name: 'Add strategy in development' }).click()
    await comboboxOf(page.getByRole('dialog'), 'Strategy').click()
    await page.getByRole('option', { name: /\(default\)/ }).waitFor()
    expect(await page.getByRole('option', { name: /regional/ }).count()).toBe(0)
  })

  it('creates, edits, reorders, deprecates, clones and deletes environments, showing the refusals', async () => {
    await page.goto(`${ui.url}/`)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Environments' }).click()
    await page.getByRole('heading', { name: 'Environments' }).waitFor()
    await page.getByRole('button', { name: 'Create environment' }).click()
    const create = page.getByRole('dialog', { name: 'Create environment' })
    await create.getByLabel('Name').fill('staging')
    await comboboxOf(create, 'Type').fill('preproduction')
    await page.getByRole('option', { name: 'preproduction', exact: true }).click()
    await create.getByRole('button', { name: 'Save environment' }).click()
    await create.waitFor({ state: 'hidden' })
    await page.getByRole('button', { name: 'Edit environment staging' }).click()
    const edit = page.getByRole('dialog', { name: 'Edit environment staging' })
    await comboboxOf(edit, 'Type').fill('test')
    await page.getByRole('option', { name: 'test', exact: true }).click()
    await edit.getByLabel('Sort order').fill('1000')
    await edit.getByRole('button', { name: 'Save environment' }).click()
    await edit.waitFor({ state: 'hidden' })
    const environment = async (name: string) => ((await adminApi('GET', '/api/admin/environments')).environments as { name: string }[]).find((e) => e.name === name)
    expect(await environment('staging')).toMatchObject({ type: 'test', sortOrder: 1000, enabled: true })

    const names = async () => ((await adminApi('GET', '/api/admin/environments')).environments as { name: string }[]).map((e) => e.name)
    const before = await names()
    expect(before.at(-1)).toBe('staging')
    await page.getByRole('button', { name: 'Move staging up' }).click()
    await expect.poll(names).toEqual([...before.slice(0, -2), 'staging', before.at(-2)])
    await page.getByRole('button', { name: 'Deprecate environment staging' }).click()
    await page.getByRole('button', { name: 'Enable environment staging' }).waitFor()
    expect(await environment('staging')).toMatchObject({ enabled: false })
    await page.getByRole('button', { name: 'Enable environment staging' }).click()
    await page.getByRole('button', { name: 'Deprecate environment staging' }).waitFor()

    await page.getByRole('button', { name: 'Clone environment development' }).click()
    const clone = page.getByRole('dialog', { name: 'Clone environment development' })
    await clone.getByLabel('Name').fill('dev-copy')
    await comboboxOf(clone, 'Projects').click({ force: true })
    await page.getByRole('option', { name: 'Garden' }).click()
    await page.keyboard.press('Escape')
    await checkPage(page, 'environment-clone')
    await clone.getByRole('button', { name: 'Clone environment' }).click()
    await clone.waitFor({ state: 'hidden' })
    await page.getByRole('row', { name: /dev-copy/ }).waitFor()
    await checkPage(page, 'environments')
    const roses = await adminApi('GET', '/api/admin/projects/garden/features/roses')
    expect(roses.environments.find((e: { name: string }) => e.name === 'dev-copy').strategies).toMatchObject([{ name: 'flexibleRollout', parameters: { rollout: '40' } }])

    // the only environment of a project is refused
    await adminApi('POST', '/api/admin/projects', { id: 'porch', name: 'Porch', environments: ['staging'] })
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Delete environment staging' }).click()
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/porch/)
    await adminApi('DELETE', '/api/admin/projects/porch')
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Delete environment staging' }).click()
    await page.getByRole('row', { name: /staging/ }).waitFor({ state: 'detached' })
    expect(await environment('staging')).toBeUndefined()

    await page.goto(`${ui.url}/projects/garden`)
    await page.getByRole('heading', { name: 'Garden' }).waitFor()
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Remove environment dev-copy from the project' }).click()
    await page.getByRole('button', { name: 'Remove environment dev-copy from the project' }).waitFor({ state: 'detached' })
    await checkPage(page, 'project-environments')
    expect((await adminApi('GET', '/api/admin/projects/garden')).environments.map((e: { environment: string }) => e.environment)).not.toContain('dev-copy')
  })

  it('lists the flag types with their lifetimes and sets one', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Flag types' }).click()
    await page.getByRole('heading', { name: 'Flag types' }).waitFor()
    const row = page.getByRole('row', { name: /experiment/ })
    await expect.poll(() => row.textContent()).toContain('40 days')
    await page.getByRole('button', { name: /Edit lifetime of Experiment/ }).click()
    await row.getByLabel(/Lifetime of Experiment in days/).fill('90')
    await checkPage(page, 'flag-types')
    await row.getByRole('button', { name: 'Save' }).click()
    await expect.poll(() => row.textContent()).toContain('90 days')
    const { types } = await adminApi('GET', '/api/admin/feature-types')
    expect(types.find((t: { id: string }) => t.id === 'experiment').lifetimeDays).toBe(90)
  })
})
