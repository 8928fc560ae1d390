// npm run bench:console — the web console's flags page with many flags, in Debian's Chromium (playwright-core)
// against the Node server on a fresh embedded database. For each load: from navigation to the table showing every
// flag ("N of N flags", the rows drawn), and from typing a search to the table answering it. A first visit (a new
// browser context: nothing cached, assets fetched) and a return visit (the same context: assets cached). p50/p95 over
// the runs. Figures go to bench/RESULTS.md by hand.
//
//   BENCH_FLAGS  flags in the project, default 1000
//   BENCH_RUNS   loads per case, default 15
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
const server = await startServer({ ...readConfig({ FLAGPOST_ADMIN_PASSWORD: PASSWORD, INIT_ADMIN_API_TOKENS: TOKEN, FLAGPOST_SIGN_IN_RATE_LIMIT: '0' }), port: 0, host: '127.0.0.1', dataDir })
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] })

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: TOKEN, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
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
  await page.goto(`${server.url}/projects/big`)
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
  for (let i = 0; i < names.length; i += 10) await Promise.all(names.slice(i, i + 10).map((name) => api('POST', '/api/admin/projects/big/features', { name })))
  for (const name of names.filter((_, i) => i % 3 === 0)) await api('POST', `/api/admin/projects/big/features/${name}/environments/development/on`)

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
} finally {
  await browser.close()
  await server.close()
  await rm(dataDir, { recursive: true, force: true })
}
