// A project's own context fields in the console, in a real Chromium against the Node server (see harness.ts): the
// project's page of fields (create, edit, delete), the constraint editor and the playground offering them where the
// flag's project has them (and not elsewhere), and who is offered the writes. Every page visited passes axe-core.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
beforeAll(async () => {
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'garden', name: 'Garden' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'basket' })
  await ui.adminApi('POST', '/api/admin/projects/garden/features', { name: 'roses' })
})
afterAll(async () => {
  await ui?.close()
})

const adminApi = (method: string, path: string, body?: unknown) => ui.adminApi(method, path, body)
const acceptNextConfirm = (page: Page) => page.once('dialog', (confirm) => void confirm.accept())

/** Opens the strategy dialog of a flag in development and adds a constraint; answers the dialog. */
async function constraintOf(page: Page, project: string, flag: string) {
  await page.goto(`${ui.url}/projects/${project}/flags/${flag}`)
  await page.getByRole('region', { name: 'Environment development' }).getByRole('button', { name: 'Add strategy in development' }).click()
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('button', { name: 'Add constraint' }).click()
  return dialog
}

describe("a project's context fields", { timeout: 60_000 }, () => {
  let page: Page

  it("creates a field from the project's page, listed with the project's fields only", async () => {
    await adminApi('POST', '/api/admin/context', { name: 'region' })
    page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    await page.goto(`${ui.url}/projects/shop`)
    await page.getByRole('main').getByRole('link', { name: 'Context fields' }).click()
    await page.getByRole('heading', { name: 'Context fields of Shop' }).waitFor()
    await page.getByText('This project has no context fields of its own.').waitFor()
    await page.getByRole('button', { name: 'Create context field' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create context field' })
    await dialog.getByLabel('Name').fill('plan')
    await dialog.getByLabel('Description').fill('What the customer pays for')
    await dialog.getByRole('button', { name: 'Add legal value' }).click()
    await dialog.getByRole('textbox', { name: /^Value 1/ }).fill('pro')
    await dialog.getByRole('button', { name: 'Add legal value' }).click()
    await dialog.getByRole('textbox', { name: /^Value 2/ }).fill('free')
    await checkPage(page, 'project-context-field-create')
    await dialog.getByRole('button', { name: 'Save context field' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('row', { name: /plan/ }).waitFor()
    expect(await page.getByRole('row', { name: /region/ }).count()).toBe(0)
    expect(await adminApi('GET', '/api/admin/projects/shop/context/plan')).toMatchObject({ project: 'shop', description: 'What the customer pays for', legalValues: [{ value: 'pro' }, { value: 'free' }] })
    await checkPage(page, 'project-context-fields')

    // The select switches to the global fields, which do not list it.
    await comboboxOf(page.locator('main'), 'Fields of').click()
    await page.getByRole('option', { name: 'Every project (global)' }).click()
    await page.getByRole('heading', { name: 'Context fields', exact: true }).waitFor()
    await page.getByRole('row', { name: /region/ }).waitFor()
    expect(await page.getByRole('row', { name: /plan/ }).count()).toBe(0)
  })

  it('edits the field', async () => {
    await page.goto(`${ui.url}/projects/shop/context-fields`)
    await page.getByRole('button', { name: 'Edit context field plan' }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit context field plan' })
    await dialog.getByRole('button', { name: 'Remove value 2' }).click()
    await dialog.getByLabel('Description of value 1').fill('Paying')
    await dialog.getByRole('button', { name: 'Save context field' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await expect.poll(async () => (await adminApi('GET', '/api/admin/projects/shop/context/plan')).legalValues).toEqual([{ value: 'pro', description: 'Paying' }])
  })

  it("the constraint editor offers the field, with its legal values, for the project's flags and not for another project's", async () => {
    const dialog = await constraintOf(page, 'shop', 'basket')
    await dialog.getByLabel('Context field 1').fill('pl')
    await page.getByRole('option', { name: 'plan' }).click()
    await dialog.getByLabel('Values 1').click()
    await page.getByRole('option', { name: 'pro' }).waitFor()
    await page.keyboard.press('Escape')
    await checkPage(page, 'project-context-field-constraint')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })

    const elsewhere = await constraintOf(page, 'garden', 'roses')
    await elsewhere.getByLabel('Context field 1').fill('re')
    await page.getByRole('option', { name: 'region' }).waitFor()
    await elsewhere.getByLabel('Context field 1').fill('pl')
    await expect.poll(() => page.getByRole('option', { name: 'plan' }).count()).toBe(0)
    await page.keyboard.press('Escape')
    await page.keyboard.press('Escape')
  })

  it("the playground offers the field as a property of the project's context", async () => {
    await page.goto(`${ui.url}/playground`)
    await comboboxOf(page.locator('main'), 'Projects').click({ force: true })
    await page.getByRole('option', { name: 'Shop' }).click()
    await page.keyboard.press('Escape')
    await page.getByRole('button', { name: 'Add custom property' }).click()
    await comboboxOf(page.locator('main'), 'Property name 1').fill('pl')
    await page.getByRole('option', { name: 'plan' }).click()
    await comboboxOf(page.locator('main'), 'Property value 1').click()
    await page.getByRole('option', { name: 'pro' }).waitFor()
    await page.keyboard.press('Escape')
    await checkPage(page, 'playground-project-context-field')
  })

  it("offers the writes to the project's Owner and not to a Member; the admin deletes the field", async () => {
    await adminApi('POST', '/api/admin/user-admin', { username: 'olive', password: 'owner-password', rootRole: 'Viewer', sendEmail: false })
    await adminApi('POST', '/api/admin/user-admin', { username: 'milo', password: 'member-password', rootRole: 'Viewer', sendEmail: false })
    const users = (await adminApi('GET', '/api/admin/user-admin')).users as { id: number; username: string }[]
    const idOf = (username: string) => users.find((u) => u.username === username)!.id
    await adminApi('POST', '/api/admin/projects/shop/access', { roles: [4], users: [idOf('olive')] })
    await adminApi('POST', '/api/admin/projects/shop/access', { roles: [5], users: [idOf('milo')] })

    const owner = await ui.newPage()
    await ui.signIn(owner, 'olive', 'owner-password')
    await owner.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    await owner.goto(`${ui.url}/projects/shop/context-fields`)
    await owner.getByRole('button', { name: 'Edit context field plan' }).waitFor()
    expect(await owner.getByRole('button', { name: 'Create context field' }).count()).toBe(1)
    await checkPage(owner, 'project-context-fields-as-owner')
    await owner.goto(`${ui.url}/context-fields`)
    await owner.getByRole('row', { name: /region/ }).waitFor()
    expect(await owner.getByRole('button', { name: /Create context field|Edit|Delete/ }).count()).toBe(0)

    const member = await ui.newPage()
    await ui.signIn(member, 'milo', 'member-password')
    await member.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    await member.goto(`${ui.url}/projects/shop/context-fields`)
    await member.getByRole('row', { name: /plan/ }).waitFor()
    expect(await member.getByRole('button', { name: /Create context field|Edit|Delete/ }).count()).toBe(0)

    await page.goto(`${ui.url}/projects/shop/context-fields`)
    acceptNextConfirm(page)
    await page.getByRole('button', { name: 'Delete context field plan' }).click()
    await page.getByText('This project has no context fields of its own.').waitFor()
    expect((await adminApi('GET', '/api/admin/projects/shop/context')).map((f: { name: string }) => f.name)).toEqual([])
  })
})
