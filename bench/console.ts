// npm run bench:console — the web console's flags page with many flags, in Debian's Chromium (playwright-core)
// against the Node server on a fresh embedded database. For each load: from navigation to the table showing every
// flag ("N of N flags", the rows drawn), and from typing a search to the table answering it. A first visit (a new
// browser context: nothing cached, assets fetched) and a return visit (the same context: assets cached). p50/p95 over
// the runs. Then, on a throttled network (Chromium's Network.emulateNetworkConditions: 10 Mbit/s down and up, 40 ms
// latency), the project page's first row (time and bytes on the wire, first visit and cached), a flag switch's bytes,
// and a flag page's first environment card and dependencies (time and bytes, first visit and cached). Figures go to bench/RESULTS.md by hand.
//
//   BENCH_FLAGS  flags in the project, default 1000
//   BENCH_RUNS   loads per case, default 15
//   BENCH_THROTTLED_RUNS  throttled loads per case, default 5
//   BENCH_CONSOLE_DIR  the built console to serve, default console/dist (a copy lets the console be rebuilt meanwhile)
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { readConfig, startServer } from '../src/server.js'

const FLAGS = Number(process.env.BENCH_FLAGS ?? 1000)
const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const TOKEN = '*:*.bench-console-admin'
const PASSWORD = 'bench console password'

const dataDir = await mkdtemp(join(tmpdir(), 'flagpost-bench-console-'))
const server = await startServer({ ...readConfig({ FLAGPOST_ADMIN_PASSWORD: PASSWORD, INIT_ADMIN_API_TOKENS: TOKEN, FLAGPOST_SIGN_IN_RATE_LIMIT: '0' }), port: 0, host: '127.0.0.1', dataDir, consoleDir: process.env.BENCH_CONSOLE_DIR })
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] })

/** One admin call; a dropped connection (a loaded machine's) is tried again, a 4xx/5xx answer is not. */
async function api(method: string, path: string, body?: unknown) {
  for (let attempt = 1; ; attempt++) {
    let response: Response
    try {
      response = await fetch(`${server.url}${path}`, { method, headers: { authorization: TOKEN, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(300_000) })
    } catch (error) {
      if (attempt >= 5) throw error
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt))
      continue
    }
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
    return
  }
}

/**
 * The flags, seeded in bulk: one import a thousand flags (the import's most switches at once), a third switched on in
 * development. One request per flag (20 at a time) took minutes and failed on a loaded machine ("other side closed").
 */
async function seed(names: string[]) {
  for (let i = 0; i < names.length; i += 1000) {
    const chunk = names.slice(i, i + 1000)
    await api('POST', '/api/admin/features-batch/import', {
      project: 'big',
      environment: 'development',
      data: {
        features: chunk.map((name) => ({ name, type: 'release' })),
        featureStrategies: [],
        tagTypes: [],
        featureEnvironments: chunk.map((name, j) => ({ featureName: name, enabled: (i + j) % 3 === 0 })),
      },
    })
  }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
const row = (name: string, ms: number[]) => `| ${name} | ${quantile(ms, 0.5).toFixed(0)} | ${quantile(ms, 0.95).toFixed(0)} |`

/** A browser context signed in as the first admin (its own cookies and cache). */
async function signedIn(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  await page.goto(`${server.url}/sign-in`)
  await page.getByLabel('Username or e-mail').fill('admin')
  await page.locator('input[type=password]').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Your dashboard' }).waitFor()
  await page.close()
  return context
}

type Probe = { listedAt: Record<number, number>; typedAt?: number }

/**
 * Installed in every page before its scripts: the time (ms since navigation, in the page's own clock) at which the table
 * first says it lists `n` of the flags and draws a row, seen by a MutationObserver, and when the search was typed into.
 * Measured in the page because Playwright's waitFor checks again only after growing pauses (0, 20, 50, 100, 100, 500 ms…),
 * which rounded the times up to those steps (a page ready at 300 ms was seen at about 770 ms). A string: tsx would add
 * helpers to a function that the page does not have.
 */
const THROTTLED_RUNS = Number(process.env.BENCH_THROTTLED_RUNS ?? 5)
const MBIT = 1_000_000 / 8

/** A page on the throttled link, counting the bytes it receives (encoded: as on the wire, headers included). */
async function throttled(context: BrowserContext) {
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('Network.enable')
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 40, downloadThroughput: 10 * MBIT, uploadThroughput: 10 * MBIT })
  const counter = { bytes: 0, requests: [] as string[] }
  cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => void (counter.bytes += e.encodedDataLength))
  cdp.on('Network.requestWillBeSent', (e: { request: { url: string } }) => void counter.requests.push(e.request.url))
  return { page, counter }
}

/** The time (ms since navigation, the page's clock) at which the flags table first drew a flag's row. */
const firstRowProbe = `(() => {
  const probe = (window.flagpostFirstRow = {})
  new MutationObserver(() => {
    if (probe.at === undefined && document.querySelector('[role=table][aria-label=Flags] [role=row] a')) probe.at = performance.now()
  }).observe(document, { childList: true, subtree: true })
})()`

async function until<T>(read: () => Promise<T | undefined>, what: string, timeout = 60_000): Promise<T> {
  const end = Date.now() + timeout
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`never: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The project page on the throttled link: first row time and bytes; then one switch's bytes (and whether the list was read again). */
async function throttledProject(context: BrowserContext, withSwitch: boolean) {
  const { page, counter } = await throttled(context)
  // A first visit: nothing cached (the sign-in page of this context loaded the console's files).
  if (!withSwitch) await (await context.newCDPSession(page)).send('Network.clearBrowserCache')
  await page.addInitScript({ content: firstRowProbe })
  await page.goto(`${server.url}/projects/big`, { waitUntil: 'commit', timeout: 120_000 })
  const firstRow = await until(() => page.evaluate<number | undefined>('window.flagpostFirstRow.at'), 'the first row')
  const bytes = counter.bytes
  let switchBytes: number | undefined
  let listReads: number | undefined
  if (withSwitch) {
    await page.waitForLoadState('networkidle')
    const toggle = page.getByRole('switch', { name: `flag-0001 in development` })
    const before = counter.bytes
    counter.requests.length = 0
    const checked = await toggle.isChecked()
    await toggle.click({ force: true })
    await until(async () => ((await toggle.isChecked()) !== checked ? true : undefined), 'the switch')
    await page.waitForLoadState('networkidle')
    await new Promise((resolve) => setTimeout(resolve, 300))
    switchBytes = counter.bytes - before
    listReads = counter.requests.filter((u) => u.includes('/api/admin/search/features')).length
  }
  await page.close()
  return { firstRow, bytes, switchBytes, listReads }
}

/**
 * A flag page on the throttled link: until its first environment card shows its heading, and until its dependencies'
 * section (the parent picker) is drawn.
 */
async function throttledFlag(context: BrowserContext, cold: boolean) {
  const { page, counter } = await throttled(context)
  if (cold) await (await context.newCDPSession(page)).send('Network.clearBrowserCache')
  const started = Date.now()
  await page.goto(`${server.url}/projects/big/flags/flag-0002`, { waitUntil: 'commit', timeout: 120_000 })
  await page.getByRole('region', { name: 'Environment development' }).getByRole('heading', { name: 'development' }).waitFor({ timeout: 60_000 })
  const environments = Date.now() - started
  await page.getByRole('region', { name: 'Dependencies' }).getByText('Parent flag', { exact: true }).waitFor({ timeout: 60_000 })
  const shown = Date.now() - started
  await page.waitForLoadState('networkidle')
  const bytes = counter.bytes
  await page.close()
  return { environments, shown, bytes }
}

const kb = (bytes: number[]) => `${(quantile(bytes, 0.5) / 1024).toFixed(0)} KB`

const probe = (counts: number[]) => `(() => {
  const probe = (window.flagpostBench = { listedAt: {} })
  const check = () => {
    const text = document.body ? document.body.textContent : ''
    for (const n of ${JSON.stringify(counts)})
      if (probe.listedAt[n] === undefined && new RegExp('(^|\\\\D)' + n + ' of ${FLAGS} flags').test(text) && document.querySelectorAll('[role=table][aria-label=Flags] [role=row]').length > 1)
        probe.listedAt[n] = performance.now()
  }
  new MutationObserver(check).observe(document, { childList: true, subtree: true, characterData: true })
  addEventListener('input', (e) => { if (probe.typedAt === undefined) probe.typedAt = e.timeStamp }, true)
})()`
const probed = (page: Page) => page.evaluate<Probe>('window.flagpostBench')

/** What the probe saw once the table listed `count` flags. */
async function listedAt(page: Page, count: number, timeout: number): Promise<Probe> {
  const until = Date.now() + timeout
  for (;;) {
    const seen = await probed(page)
    if (seen?.listedAt[count] !== undefined) return seen
    if (Date.now() > until) throw new Error(`the table never listed ${count} of ${FLAGS} flags`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** One load of the flags page: until every flag is listed, then until a search is answered. */
async function load(context: BrowserContext) {
  const page = await context.newPage()
  await page.addInitScript({ content: probe([FLAGS, 1]) })
  await page.goto(`${server.url}/projects/big`, { waitUntil: 'commit', timeout: 120_000 })
  const shown = (await listedAt(page, FLAGS, 30_000)).listedAt[FLAGS]!
  await page.getByLabel('Search').fill(`flag-${String(FLAGS - 1).padStart(4, '0')}`)
  const after = await listedAt(page, 1, 10_000)
  const searched = after.listedAt[1]! - after.typedAt!
  await page.close()
  return { shown, searched }
}

try {
  console.log(`Creating ${FLAGS} flags...`)
  await api('POST', '/api/admin/projects', { id: 'big', name: 'Big' })
  const names = Array.from({ length: FLAGS }, (_, i) => `flag-${String(i).padStart(4, '0')}`)
  const seeding = Date.now()
  await seed(names)
  console.log(`seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`)

  const first = { shown: [] as number[], searched: [] as number[] }
  const again = { shown: [] as number[], searched: [] as number[] }
  const warm = await signedIn()
  await load(warm)
  for (let i = 0; i < RUNS; i++) {
    const fresh = await signedIn()
    const a = await load(fresh)
    await fresh.close()
    first.shown.push(a.shown)
    first.searched.push(a.searched)
    const b = await load(warm)
    again.shown.push(b.shown)
    again.searched.push(b.searched)
  }
  console.log(`\nThe flags page of a project with ${FLAGS} flags (a third on in development), ${RUNS} loads per case.\n`)
  console.log('| case | p50 ms | p95 ms |\n|---|---:|---:|')
  console.log(row('first visit: navigation to every flag listed', first.shown))
  console.log(row('return visit: navigation to every flag listed', again.shown))
  console.log(row('a search answered (first visit)', first.searched))
  console.log(row('a search answered (return visit)', again.searched))

  const cold = { firstRow: [] as number[], bytes: [] as number[] }
  const cached = { firstRow: [] as number[], bytes: [] as number[], switchBytes: [] as number[], listReads: [] as number[] }
  const flagPage = { environments: [] as number[], shown: [] as number[], bytes: [] as number[] }
  const flagCold = { environments: [] as number[], shown: [] as number[], bytes: [] as number[] }
  for (let i = 0; i < THROTTLED_RUNS; i++) {
    const fresh = await signedIn()
    const a = await throttledProject(fresh, false)
    cold.firstRow.push(a.firstRow)
    cold.bytes.push(a.bytes)
    const b = await throttledProject(fresh, true)
    cached.firstRow.push(b.firstRow)
    cached.bytes.push(b.bytes)
    cached.switchBytes.push(b.switchBytes!)
    cached.listReads.push(b.listReads!)
    const f = await throttledFlag(fresh, false)
    flagPage.environments.push(f.environments)
    flagPage.shown.push(f.shown)
    flagPage.bytes.push(f.bytes)
    await fresh.close()
    // A flag page as the first page of a visit: a new context, its cache emptied.
    const other = await signedIn()
    const g = await throttledFlag(other, true)
    flagCold.environments.push(g.environments)
    flagCold.shown.push(g.shown)
    flagCold.bytes.push(g.bytes)
    await other.close()
  }
  console.log(`\nThrottled: 10 Mbit/s down and up, 40 ms latency; ${THROTTLED_RUNS} loads per case (p50 / p95 ms, p50 bytes on the wire).\n`)
  console.log('| case | p50 ms | p95 ms | bytes |\n|---|---:|---:|---:|')
  console.log(`${row('project page, first visit: first row', cold.firstRow)} ${kb(cold.bytes)} |`)
  console.log(`${row('project page, cached assets: first row', cached.firstRow)} ${kb(cached.bytes)} |`)
  console.log(`| a flag switched | | | ${kb(cached.switchBytes)} (list reads: ${Math.max(...cached.listReads)}) |`)
  console.log(`${row('flag page, first visit: first environment card drawn', flagCold.environments)} |`)
  console.log(`${row('flag page, first visit: dependencies drawn', flagCold.shown)} ${kb(flagCold.bytes)} |`)
  console.log(`${row('flag page, cached assets: first environment card drawn', flagPage.environments)} |`)
  console.log(`${row('flag page, cached assets: dependencies drawn', flagPage.shown)} ${kb(flagPage.bytes)} |`)
} finally {
  await browser.close()
  await server.close()
  await rm(dataDir, { recursive: true, force: true })
}
