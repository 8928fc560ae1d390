// The console's Backup and restore page in a real Chromium against the Node server (see harness.ts): a backup
// downloaded, restored with its outcome shown, a drop confirmed first, a refused document's message, and an Editor
// offered none of it. Every page visited passes axe-core.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, checkPage, startConsole, type ConsoleUnderTest } from './harness.js'

let ui: ConsoleUnderTest
let files: string
beforeAll(async () => {
  ui = await startConsole()
  files = await mkdtemp(join(tmpdir(), 'flagpost-backups-'))
  await ui.adminApi('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features', { name: 'new-basket', description: 'The basket' })
  await ui.adminApi('POST', '/api/admin/projects/shop/features/new-basket/environments/development/on')
})
afterAll(async () => {
  await ui?.close()
  if (files) await rm(files, { recursive: true, force: true })
})

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' })
const outcomeRow = (page: Page, kind: string) => page.getByRole('table', { name: 'What the restore did' }).getByRole('row', { name: new RegExp(`^${kind}\\b`) })

/** Writes `document` to a file of its own and chooses it as the backup to restore. */
async function choose(page: Page, name: string, document: unknown) {
  const path = join(files, name)
  await writeFile(path, typeof document === 'string' ? document : JSON.stringify(document))
  await page.locator('input[type="file"]').setInputFiles(path)
}

describe('backup and restore', { timeout: 60_000 }, () => {
  let page: Page
  let backup: any

  it('downloads a backup of the parts chosen', async () => {
    page = await ui.newPage()
    await ui.signIn(page, 'admin', ADMIN_PASSWORD)
    await nav(page).getByRole('link', { name: 'Backup and restore' }).click()
    const heading = page.getByRole('heading', { name: 'Backup and restore', level: 1 })
    await heading.waitFor()
    // Away from the link just clicked: its hover style is the navigation's, not this page's.
    await heading.hover()
    await checkPage(page, 'instance-state')
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download backup' }).click()])
    expect(download.suggestedFilename()).toMatch(/^flagpost-state-.*\.json$/)
    backup = JSON.parse(await readFile((await download.path())!, 'utf8'))
    expect(backup.version).toBe(4)
    expect(backup.features.map((f: { name: string }) => f.name)).toEqual(['new-basket'])
    await page.getByRole('checkbox', { name: 'Segments' }).uncheck()
    const [partial] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download backup' }).click()])
    expect(Object.keys(JSON.parse(await readFile((await partial.path())!, 'utf8')))).not.toContain('segments')
  })

  it('restores a backup and shows what it did, by kind', async () => {
    await choose(page, 'more.json', { ...backup, features: [...backup.features, { name: 'restored-flag', project: 'shop', description: 'From the backup' }] })
    await page.getByRole('button', { name: 'Restore' }).click()
    await expect.poll(() => outcomeRow(page, 'Flags').textContent()).toBe('Flags110')
    await checkPage(page, 'instance-state-restored')
    expect((await ui.adminApi('GET', '/api/admin/projects/shop/features/restored-flag')).description).toBe('From the backup')
  })

  it('asks before a drop, naming the kinds it deletes from', async () => {
    await page.getByRole('switch', { name: 'Drop what the backup does not list' }).check()
    await choose(page, 'fewer.json', { version: 4, features: backup.features })
    await page.getByRole('button', { name: 'Restore' }).click()
    const dialog = page.getByRole('dialog', { name: 'Drop and restore?' })
    await dialog.waitFor()
    expect(await dialog.getByRole('listitem').allTextContents()).toEqual(['flags'])
    await checkPage(page, 'instance-state-drop')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect((await ui.adminApi('GET', '/api/admin/projects/shop/features')).features.map((f: { name: string }) => f.name).sort()).toEqual(['new-basket', 'restored-flag'])
    await page.getByRole('button', { name: 'Restore' }).click()
    await dialog.getByRole('button', { name: 'Drop and restore' }).click()
    // The flag listed is as the backup has it (it has no configuration part, so the flag keeps its own); the other goes.
    await expect.poll(() => outcomeRow(page, 'Flags').textContent()).toBe('Flags011')
    expect((await ui.adminApi('GET', '/api/admin/projects/shop/features')).features.map((f: { name: string }) => f.name)).toEqual(['new-basket'])
  })

  it('shows why a document is refused', async () => {
    await page.getByRole('switch', { name: 'Drop what the backup does not list' }).uncheck()
    await choose(page, 'wrong.json', { version: 4, features: [{ name: 'bad-project-flag', project: 'no-such-project' }] })
    await page.getByRole('button', { name: 'Restore' }).click()
    await expect.poll(() => page.getByRole('alert', { name: 'The server refused the input' }).textContent()).toContain('project no-such-project is neither in the document nor a project of the instance')
    await checkPage(page, 'instance-state-refused')
    await choose(page, 'not-json.json', 'version: 4')
    await page.getByRole('button', { name: 'Restore' }).click()
    await expect.poll(() => page.getByRole('alert', { name: 'Not a backup' }).textContent()).toContain('not-json.json is not a JSON document')
  })

  it('offers an Editor no backup or restore', async () => {
    await ui.adminApi('POST', '/api/admin/user-admin', { username: 'eddie', password: 'editor-password', rootRole: 'Editor', sendEmail: false })
    const editor = await ui.newPage()
    await ui.signIn(editor, 'eddie', 'editor-password')
    await editor.getByRole('heading', { name: 'Your dashboard' }).waitFor()
    expect(await nav(editor).getByRole('link').allTextContents()).not.toContain('Backup and restore')
    await editor.goto(`${ui.url}/instance-state`)
    await expect.poll(() => editor.getByRole('alert').textContent()).toMatch(/Only admins may back up and restore the instance/)
    expect(await editor.getByRole('link', { name: 'Download backup' }).count()).toBe(0)
    await checkPage(editor, 'instance-state-as-editor')
  })
})
