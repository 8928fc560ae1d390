// The console's export and import of flags (Unleash's features-batch) in a real Chromium against the Node server
// (see harness.ts): a project's flags exported as a JSON file (a selection, or what the table's filters show), that
// file imported into another project after validation, the refusals shown (not JSON, not an export, validate's
// errors, permissions lacking), and who is offered what. Every dialog visited passes axe-core.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Download, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, comboboxOf, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let downloads: string
beforeAll(async () => {
  downloads = await mkdtemp(join(tmpdir(), 'flagpost-downloads-'))
  ui = await startConsole()
  await ui.adminApi('POST', '/api/admin/projects', { id: 'garden', name: 'Garden' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'orchard', name: 'Orchard' })
  await ui.adminApi('POST', '/api/admin/projects', { id: 'greenhouse', name: 'Greenhouse', changeRequestEnvironments: [{ name: 'production' }] })
  for (const name of ['roses', 'tulips', 'lilies']) await ui.adminApi('POST', '/api/admin/projects/garden/features', { name })
  await ui.adminApi('POST', '/api/admin/projects/garden/features/roses/environments/development/strategies', {
    name: 'flexibleRollout',
    parameters: { rollout: '40', stickiness: 'default', groupId: 'roses' },
  })
  await ui.adminApi('POST', '/api/admin/projects/garden/features/roses/environments/development/on')
  await ui.adminApi('POST', '/api/admin/features/roses/tags', { type: 'simple', value: 'spring' })
  await ui.adminApi('POST', '/api/admin/features/tulips/tags', { type: 'simple', value: 'spring' })
})
afterAll(async () => {
  await ui?.close()
  if (downloads) await rm(downloads, { recursive: true, force: true })
})

const adminApi = (method: string, path: string, body?: unknown) => ui.adminApi(method, path, body)
/** Opens the project's import dialog (its button is on the page, the dialog's own Import in the dialog). */
async function openImport(page: Page) {
  await page.getByRole('main').getByRole('button', { name: 'Import', exact: true }).click()
  return page.getByRole('dialog', { name: 'Import flags' })
}
/** Waits for the notification saying `text`, then closes it (it would cover the next screenshots). */
async function notification(page: Page, text: RegExp) {
  const shown = page.locator('.mantine-Notification-root').filter({ hasText: text }).first()
  await shown.waitFor()
  await shown.getByRole('button', { name: 'Close notification' }).click()
  await shown.waitFor({ state: 'detached' })
}

/** Clicks what starts a download, keeps the file and answers its name and JSON. */
async function downloaded(page: Page, start: () => Promise<void>): Promise<{ name: string; path: string; json: any }> {
  const [download] = (await Promise.all([page.waitForEvent('download'), start()])) as [Download, void]
  const path = join(downloads, download.suggestedFilename())
  await download.saveAs(path)
  return { name: download.suggestedFilename(), path, json: JSON.parse(await readFile(path, 'utf8')) }
}

describe('exporting and importing flags', { timeout: 60_000 }, () => {
  let page: Page
  let exportFile: string

  it('exports the flags the tag filter shows, from the environment chosen, as a JSON file', async () => {
    page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    await page.goto(`${ui.url}/projects/garden`)
    await page.getByRole('heading', { name: 'Garden' }).waitFor()
    await comboboxOf(page.locator('body'), 'Tag').click()
    await page.getByRole('option', { name: 'simple:spring' }).click()
    await page.getByText('2 of 3 flags').waitFor()

    await page.getByRole('button', { name: 'Export', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Export flags' })
    expect(await dialog.getByRole('radio', { name: 'The 2 flags the filters show' }).isChecked()).toBe(true)
    await comboboxOf(dialog, 'Environment').click()
    await page.getByRole('option', { name: 'production' }).click()
    await checkPage(page, 'flags-export')
    const file = await downloaded(page, () => dialog.getByRole('button', { name: 'Export 2 flags' }).click())
    expect(file.name).toBe('garden-production.json')
    expect(file.json.features.map((f: { name: string }) => f.name).sort()).toEqual(['roses', 'tulips'])
    // In production roses is off and has no strategy: the export is of the environment chosen.
    expect(file.json.featureStrategies).toEqual([])
    expect(file.json.featureEnvironments.find((e: { name: string }) => e.name === 'roses')).toMatchObject({ environment: 'production', enabled: false })
    expect(file.json.featureTags).toEqual(expect.arrayContaining([{ featureName: 'roses', tagType: 'simple', tagValue: 'spring' }]))
    await dialog.waitFor({ state: 'hidden' })
    await notification(page, /Exported 2 flags of garden in production to garden-production.json/)
  })

  it('exports the selected flags of a project with their strategies in development', async () => {
    await comboboxOf(page.locator('body'), 'Tag').click()
    await page.getByRole('option', { name: 'simple:spring' }).click()
    await page.getByText('3 of 3 flags').waitFor()
    await page.getByRole('checkbox', { name: 'Select roses' }).check()
    await page.getByRole('checkbox', { name: 'Select lilies' }).check()
    await page.getByRole('button', { name: 'Export', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Export flags' })
    expect(await dialog.getByRole('radio', { name: 'The 2 flags selected' }).isChecked()).toBe(true)
    expect(await dialog.getByRole('radio', { name: 'All 3 flags of the project' }).count()).toBe(1)
    const file = await downloaded(page, () => dialog.getByRole('button', { name: 'Export 2 flags' }).click())
    expect(file.name).toBe('garden-development.json')
    expect(file.json.features.map((f: { name: string }) => f.name).sort()).toEqual(['lilies', 'roses'])
    expect(file.json.featureStrategies).toMatchObject([{ name: 'flexibleRollout', featureName: 'roses', parameters: { rollout: '40', groupId: 'roses' } }])
    expect(file.json.featureEnvironments.find((e: { name: string }) => e.name === 'roses')).toMatchObject({ environment: 'development', enabled: true })
    exportFile = file.path
  })

  it("refuses, in validate's report, flags that live in another project, and offers no import", async () => {
    await page.goto(`${ui.url}/projects/orchard`)
    await page.getByRole('heading', { name: 'Orchard' }).waitFor()
    const dialog = await openImport(page)
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), dialog.getByRole('button', { name: 'Export file' }).click()])
    await chooser.setFiles(exportFile)
    await expect.poll(() => dialog.getByLabel('Export data').inputValue()).toContain('"roses"')
    await checkPage(page, 'flags-import')
    await dialog.getByRole('button', { name: 'Validate', exact: true }).click()
    await dialog.getByText('The import into orchard in development cannot be made as it is.').waitFor()
    const errors = dialog.getByRole('alert').filter({ hasText: 'Errors' })
    await expect.poll(() => errors.getByRole('listitem').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^You cannot import a features that already exist in other projects/), 'lilies (in project garden)', 'roses (in project garden)']),
    )
    expect(await dialog.getByRole('button', { name: 'Import', exact: true }).isDisabled()).toBe(true)
    await checkPage(page, 'flags-import-errors')
    await dialog.getByRole('button', { name: 'Close' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await expect(adminApi('GET', '/api/admin/projects/orchard/features/roses')).rejects.toThrow(/404/)
  })

  it('imports the file once the flags are gone from their project: validate reports what it would do, import creates them, and they are listed', async () => {
    // Flag names are unique in an instance: the originals are deleted for good first.
    await adminApi('POST', '/api/admin/projects/garden/archive', { features: ['roses', 'lilies'] })
    await adminApi('POST', '/api/admin/projects/garden/delete', { features: ['roses', 'lilies'] })
    const dialog = await openImport(page)
    await dialog.getByLabel('Export data').fill(await readFile(exportFile, 'utf8'))
    // From the data, Tab reaches Validate and Enter presses it.
    await dialog.getByLabel('Export data').press('Tab')
    await page.keyboard.press('Enter')
    const summary = dialog.getByText(/^Ready to import/)
    await expect.poll(() => summary.textContent()).toBe('Ready to import 2 flags into orchard in development: 2 to create, 0 to update.')
    // The report takes the focus from the Validate button it replaces.
    await expect.poll(() => page.evaluate('document.activeElement.textContent')).toBe(await summary.textContent())
    await dialog.getByText('Validation found no errors, warnings or missing permissions.').waitFor()
    await checkPage(page, 'flags-import-validated')

    await dialog.getByRole('button', { name: 'Import', exact: true }).click()
    await dialog.waitFor({ state: 'hidden' })
    await notification(page, /Imported 2 flags into orchard in development: 2 created, 0 updated/)
    await page.getByRole('link', { name: 'roses' }).waitFor()
    await page.getByRole('link', { name: 'lilies' }).waitFor()
    await page.getByText('2 of 2 flags').waitFor()
    const roses = await adminApi('GET', '/api/admin/projects/orchard/features/roses')
    expect(roses.tags).toEqual([{ type: 'simple', value: 'spring' }])
    expect(roses.environments.find((e: { name: string }) => e.name === 'development')).toMatchObject({
      enabled: true,
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: '40', groupId: 'roses' } }],
    })
  })

  it('warns that importing again overwrites the flags, and says it updated them', async () => {
    const dialog = await openImport(page)
    await dialog.getByLabel('Export data').fill(await readFile(exportFile, 'utf8'))
    await dialog.getByRole('button', { name: 'Validate', exact: true }).click()
    await dialog.getByText('Ready to import 2 flags into orchard in development: 0 to create, 2 to update.').waitFor()
    const warnings = dialog.getByRole('status').filter({ hasText: 'Warnings' })
    expect(await warnings.getByRole('listitem').allTextContents()).toEqual(expect.arrayContaining(['lilies', 'roses']))
    await dialog.getByRole('button', { name: 'Import', exact: true }).click()
    await dialog.waitFor({ state: 'hidden' })
    await notification(page, /Imported 2 flags into orchard in development: 0 created, 2 updated/)
  })

  it("shows the server's refusal when what was validated changed before the import, and imports nothing", async () => {
    const dialog = await openImport(page)
    await dialog.getByLabel('Export data').fill(JSON.stringify({ features: [{ name: 'daisies', type: 'release' }], featureStrategies: [], tagTypes: [] }))
    await dialog.getByRole('button', { name: 'Validate', exact: true }).click()
    await dialog.getByText('Ready to import 1 flag into orchard in development: 1 to create, 0 to update.').waitFor()
    await adminApi('POST', '/api/admin/projects/garden/features', { name: 'daisies' })
    await dialog.getByRole('button', { name: 'Import', exact: true }).click()
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/^The server refused the input.*already exist in other projects.*daisies \(in project garden\)/)
    await dialog.getByRole('button', { name: 'Close' }).click()
    expect((await adminApi('GET', '/api/admin/projects/garden/features/daisies')).project).toBe('garden')
  })

  it('says why what is not an export cannot be imported: not JSON, or refused by the server', async () => {
    const dialog = await openImport(page)
    await dialog.getByLabel('Export data').fill('features: roses')
    await dialog.getByRole('button', { name: 'Validate', exact: true }).click()
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/^The data cannot be importedThis is not JSON/)

    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), dialog.getByRole('button', { name: 'Export file' }).click()])
    await chooser.setFiles({ name: 'flags.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ features: 'roses' })) })
    await expect.poll(() => dialog.getByLabel('Export data').inputValue()).toBe('{"features":"roses"}')
    await dialog.getByRole('button', { name: 'Validate', exact: true }).click()
    // The server lists every problem of a malformed export among validate's errors (never one schema error that hides the rest).
    await expect.poll(() => dialog.getByRole('alert').first().textContent()).toMatch(/^Errors.*features/)
    expect(await dialog.getByRole('button', { name: 'Import', exact: true }).isDisabled()).toBe(true)
    await checkPage(page, 'flags-import-invalid')
  })

  it('lists the permissions an Editor lacks for an environment requiring change requests, and offers no import', async () => {
    await adminApi('POST', '/api/admin/user-admin', { username: 'editor', password: 'editor-password', rootRole: 'Editor', sendEmail: false })
    const editor = await ui.newPage()
    await ui.signIn(editor, 'editor', 'editor-password')
    await editor.getByRole('navigation', { name: 'Main' }).waitFor()
    await editor.goto(`${ui.url}/projects/greenhouse`)
    await editor.getByRole('heading', { name: 'Greenhouse' }).waitFor()
    const dialog = await openImport(editor)
    await comboboxOf(dialog, 'Environment').click()
    await editor.getByRole('option', { name: 'production' }).click()
    await dialog.getByLabel('Export data').fill(await readFile(exportFile, 'utf8'))
    await dialog.getByRole('button', { name: 'Validate', exact: true }).click()
    const lacking = dialog.getByRole('alert').filter({ hasText: 'Permissions you lack' })
    await expect.poll(() => lacking.getByRole('listitem').allTextContents()).toContain('Skip change request process')
    expect(await dialog.getByRole('button', { name: 'Import', exact: true }).isDisabled()).toBe(true)
  })

  it('offers a Viewer the export but not the import', async () => {
    await adminApi('POST', '/api/admin/user-admin', { username: 'viewer', password: 'viewer-password', rootRole: 'Viewer', sendEmail: false })
    const viewer = await ui.newPage()
    await ui.signIn(viewer, 'viewer', 'viewer-password')
    await viewer.getByRole('navigation', { name: 'Main' }).waitFor()
    await viewer.goto(`${ui.url}/projects/garden`)
    await viewer.getByRole('link', { name: 'tulips' }).waitFor()
    expect(await viewer.getByRole('button', { name: 'Import', exact: true }).count()).toBe(0)
    expect(await viewer.getByRole('button', { name: 'Archive selected' }).count()).toBe(0)
    await viewer.getByRole('checkbox', { name: 'Select tulips' }).check()
    await viewer.getByRole('button', { name: 'Export', exact: true }).click()
    const dialog = viewer.getByRole('dialog', { name: 'Export flags' })
    const file = await downloaded(viewer, () => dialog.getByRole('button', { name: 'Export 1 flag' }).click())
    expect(file.json.features.map((f: { name: string }) => f.name)).toEqual(['tulips'])
  })
})

describe('exporting what a filter shows across pages', { timeout: 90_000 }, () => {
  it('exports every flag the search matches, not only the page on screen, and none of another project', async () => {
    await adminApi('POST', '/api/admin/projects', { id: 'meadow', name: 'Meadow' })
    const wild = Array.from({ length: 60 }, (_, i) => `wild-${String(i).padStart(2, '0')}`)
    const tame = Array.from({ length: 10 }, (_, i) => `tame-${i}`)
    for (let i = 0; i < wild.length + tame.length; i += 10)
      await Promise.all([...wild, ...tame].slice(i, i + 10).map((name) => adminApi('POST', '/api/admin/projects/meadow/features', { name })))
    // The same word in another project, tagged as the meadow's are: neither the search nor the tag reaches it.
    await adminApi('POST', '/api/admin/projects/orchard/features', { name: 'wild-apple' })
    await Promise.all(['wild-00', 'wild-59', 'wild-apple'].map((name) => adminApi('POST', `/api/admin/features/${name}/tags`, { type: 'simple', value: 'untamed' })))

    const page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
    await page.goto(`${ui.url}/projects/meadow`)
    await page.getByLabel('Search').fill('wild')
    await page.getByText('60 of 70 flags').waitFor()
    await page.getByText('showing 1–50').waitFor()

    await page.getByRole('button', { name: 'Export', exact: true }).click()
    let dialog = page.getByRole('dialog', { name: 'Export flags' })
    expect(await dialog.getByRole('radio', { name: 'The 60 flags the filters show' }).isChecked()).toBe(true)
    await checkPage(page, 'flags-export-filtered')
    let file = await downloaded(page, () => dialog.getByRole('button', { name: 'Export 60 flags' }).click())
    expect(file.json.features.map((f: { name: string }) => f.name).sort()).toEqual(wild)
    await dialog.waitFor({ state: 'hidden' })
    await notification(page, /Exported 60 flags of meadow/)

    // A tag filter: the meadow's two, not the orchard's flag of the same tag.
    await page.getByLabel('Search').fill('')
    await page.getByText('70 of 70 flags').waitFor()
    await comboboxOf(page.locator('body'), 'Tag').click()
    await page.getByRole('option', { name: 'simple:untamed' }).click()
    await page.getByText('2 of 70 flags').waitFor()
    await page.getByRole('button', { name: 'Export', exact: true }).click()
    dialog = page.getByRole('dialog', { name: 'Export flags' })
    file = await downloaded(page, () => dialog.getByRole('button', { name: 'Export 2 flags' }).click())
    expect(file.json.features.map((f: { name: string }) => f.name).sort()).toEqual(['wild-00', 'wild-59'])
  })
})
