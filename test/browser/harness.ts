// The harness of the browser tests: the Node server on a copy of the migrated template database, Debian's Chromium
// driven by playwright-core, axe-core on every page and a screenshot of it. Each test file calls startConsole() in its
// beforeAll and close() in its afterAll: a server of its own, and browser contexts of its own in the Chromium its
// process shares (the node project runs its files without isolation: one launch per worker, not one per file).
import { rm } from 'node:fs/promises'
import { readFileSync, existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { readConfig, startServer } from '../../src/server.js'
import { migratedDataDir } from '../helpers/data-dir.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const SCREENSHOTS = new URL(process.env.FLAGPOST_UPDATE_SCREENSHOTS === '1' ? '../../docs/screenshots/' : '../../test-results/screenshots/', import.meta.url).pathname
const OTHER_SCHEME_SCREENSHOTS = new URL('../../test-results/screenshots/other-scheme/', import.meta.url).pathname
mkdirSync(OTHER_SCHEME_SCREENSHOTS, { recursive: true })
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
/** The classes Mantine's whole stylesheet gives rules to: a page showing one of them must have loaded its rules. */
const MANTINE_CLASSES = new Set([...readFileSync(createRequire(import.meta.url).resolve('@mantine/core/styles.css'), 'utf8').matchAll(/\.(m_[0-9a-f]{8})\b/g)].map((m) => m[1]!))
export const ADMIN_PASSWORD = 'console-admin-password'
export const TOKEN = '*:*.browser-test-admin'

export interface ConsoleUnderTest {
  url: string
  /** Calls the admin API with the admin token, for what the test sets up or checks outside the console. */
  adminApi: (method: string, path: string, body?: unknown) => Promise<any>
  /**
   * A page of a browser context of its own (its own cookies), failing fast when what it waits for never comes; 1280×800
   * in the light colour scheme unless `options` say otherwise.
   */
  newPage: (options?: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' }) => Promise<Page>
  /** Opens the console and signs in through its form. */
  signIn: (page: Page, username: string, password: string) => Promise<void>
  close: () => Promise<void>
}

/**
 * Starts the server on a copy of the migrated template database (first admin `admin` / ADMIN_PASSWORD, admin token
 * TOKEN) and Chromium; `env` adds to the server's environment (e.g. FLAGPOST_ALLOW_PRIVATE_WEBHOOKS).
 */
export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleUnderTest> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`)
  const dataDir = await migratedDataDir('flagpost-browser-')
  const server = await startServer({ ...readConfig({ ...env, FLAGPOST_ADMIN_PASSWORD: ADMIN_PASSWORD, INIT_ADMIN_API_TOKENS: TOKEN }), port: 0, host: '127.0.0.1', dataDir })
  let browser: Browser
  try {
    browser = await sharedBrowser()
  } catch (error) {
    await server.close()
    throw error
  }
  // This file's contexts: what a test file leaves open (cookies, pages) ends with it, not with the shared browser.
  const contexts: BrowserContext[] = []
  return {
    url: server.url,
    async adminApi(method, path, body) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
      return text ? JSON.parse(text) : undefined
    },
    async newPage(options = {}) {
      const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 }, colorScheme: options.colorScheme ?? 'light', reducedMotion: 'reduce' })
      contexts.push(context)
      const page = await context.newPage()
      page.setDefaultTimeout(10_000)
      return page
    },
    async signIn(page, username, password) {
      await page.goto(`${server.url}/`)
      await page.getByLabel('Username or e-mail').fill(username)
      await page.getByLabel(/^Password/).fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
    },
    async close() {
      // The server and its folder go whatever the contexts do (a crashed Chromium): the next file in this process
      // must not find this file's server, database and jobs still running.
      try {
        await Promise.allSettled(contexts.splice(0).map((context) => context.close()))
      } finally {
        await server.close()
        await rm(dataDir, { recursive: true, force: true })
      }
    },
  }
}

const shared = globalThis as { flagpostBrowser?: Promise<Browser> }

/**
 * The Chromium of this process, launched by the first browser test file it runs and reused by the next (a launch is
 * about a second of CPU on a loaded machine); a new one when it has gone. Playwright ends it when the process exits.
 */
async function sharedBrowser(): Promise<Browser> {
  const running = await shared.flagpostBrowser?.catch(() => undefined)
  if (running?.isConnected()) return running
  shared.flagpostBrowser = chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] })
  return shared.flagpostBrowser
}

/** The violations axe-core finds in the page as it is (`colours`: only the rules a colour scheme changes). */
async function axeViolations(page: Page, colours = false): Promise<string[]> {
  // Evaluated through the browser's DevTools protocol: the console's Content-Security-Policy refuses inline scripts.
  if (!(await page.evaluate<boolean>(`typeof axe !== 'undefined'`))) await page.evaluate(axeSource)
  // A string, evaluated in the page: this file is compiled without the DOM's types. Only violations are read, so axe
  // details no other result (resultTypes): the same rules run, each pass's and incomplete's nodes are not collected.
  const options = `{ resultTypes: ['violations']${colours ? `, runOnly: ['color-contrast', 'link-in-text-block']` : ''} }`
  return page.evaluate<string[]>(
    `axe.run(document, ${options}).then((r) => r.violations.map((v) => v.id + ': ' + v.help + ' at ' + v.nodes.map((n) => JSON.stringify(n.target)).join(' ')))`,
  )
}

/**
 * The Mantine classes on the page's elements whose rules no loaded stylesheet has (the console loads Mantine's CSS per
 * component: mantine-frame-styles.ts, mantine-page-styles.ts), though Mantine's whole stylesheet has them.
 */
export async function unstyledMantineClasses(page: Page): Promise<string[]> {
  const [used, styled] = await page.evaluate<[string[], string[]]>(`(() => {
    const used = new Set()
    for (const element of document.querySelectorAll('[class*="m_"]')) for (const c of element.classList) if (/^m_[0-9a-f]{8}$/.test(c)) used.add(c)
    const styled = new Set()
    const walk = (rules) => {
      for (const rule of rules) {
        if (rule.selectorText) for (const m of rule.selectorText.matchAll(/\\.(m_[0-9a-f]{8})/g)) styled.add(m[1])
        if (rule.cssRules) walk(rule.cssRules)
      }
    }
    for (const sheet of document.styleSheets) walk(sheet.cssRules)
    return [[...used], [...styled]]
  })()`)
  const loaded = new Set(styled)
  return used.filter((c) => MANTINE_CLASSES.has(c) && !loaded.has(c)).sort()
}

/** The console's colour scheme as the page shows it (Mantine's attribute on <html>). */
export const colorSchemeOf = (page: Page) => page.evaluate<string | null>(`document.documentElement.getAttribute('data-mantine-color-scheme')`)

/**
 * The page as it settles: no axe-core violation in its colour scheme, and none of the colour rules in the other one
 * (the console follows prefers-color-scheme, or the header's switch; only contrast changes with it), and a screenshot
 * under `name` (the other scheme's of the viewport, in test-results/screenshots/other-scheme/, never in docs).
 * `otherScheme: false` leaves out the other scheme, for a test that checks the same page in both schemes itself (each
 * scheme's full pass holds its colour rules: the other-scheme pass would run them a second time).
 */
export async function checkPage(page: Page, name: string, { otherScheme = true }: { otherScheme?: boolean } = {}) {
  await page.waitForLoadState('networkidle')
  expect(await unstyledMantineClasses(page), `Mantine components without their CSS in ${name}`).toEqual([])
  expect(await axeViolations(page), `accessibility of ${name}`).toEqual([])
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
  if (!otherScheme) return
  const shown = await colorSchemeOf(page)
  if (shown === null) return
  const other = shown === 'dark' ? 'light' : 'dark'
  await page.evaluate(`document.documentElement.setAttribute('data-mantine-color-scheme', '${other}')`)
  try {
    // Colours move to the other scheme through CSS transitions (a segmented control's label, say): axe reads them settled.
    // (Polled through evaluate: the console's CSP refuses the string evaluation waitForFunction uses.)
    for (const until = Date.now() + 5_000; Date.now() < until; await page.waitForTimeout(50)) {
      if (await page.evaluate<boolean>(`document.getAnimations().every((a) => !(a instanceof CSSTransition) || a.playState !== 'running')`)) break
    }
    await page.screenshot({ path: join(OTHER_SCHEME_SCREENSHOTS, `${name}.png`) })
    expect(await axeViolations(page, true), `accessibility of ${name} in the ${other} colour scheme`).toEqual([])
  } finally {
    await page.evaluate(`document.documentElement.setAttribute('data-mantine-color-scheme', '${shown}')`)
  }
}

/** Mantine's Select and MultiSelect inputs, by their label. */
export const comboboxOf = (scope: Locator, name: string) => scope.getByRole('combobox', { name }).or(scope.getByRole('textbox', { name })).first()
