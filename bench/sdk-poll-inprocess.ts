// In-process CPU per unchanged SDK poll (app.fetch, no socket) against a bare Hono route: ROOT=<checkout> npx tsx bench/sdk-poll-inprocess.ts (NOBARE=1 skips the bare route). Compare two checkouts by ROOT.
import { Hono } from 'hono'
const ROOT = process.env.ROOT!
const { createApp } = await import(ROOT + '/src/app.ts')
const { openPglite } = await import(ROOT + '/src/db-node.ts')
const { withConsole } = await import(ROOT + '/src/console-node.ts')
const { withCompression } = await import(ROOT + '/src/compression-node.ts')

const database = await openPglite({})
await database.migrate()
const app = createApp({ db: () => database.db })
const { bootstrapAdminTokens } = await import(ROOT + '/src/api-tokens/store.ts').catch(() => ({} as any))
const admin = '*:*.microadmin0123456789abcdef0123'
if (bootstrapAdminTokens) await bootstrapAdminTokens(database.db, new Date(), [admin])
const h = { authorization: admin, 'content-type': 'application/json' }
for (let i = 0; i < 50; i++) await app.request('/api/admin/projects/default/features', { method: 'POST', headers: h, body: JSON.stringify({ name: `f${i}` }) })
const tok = (await (await app.request('/api/admin/api-tokens', { method: 'POST', headers: h, body: JSON.stringify({ tokenName: 'sdk', type: 'client', environment: 'development', projects: ['*'] }) })).json()).secret
const sdkh = { authorization: tok, 'unleash-appname': 'bench', 'unleash-client-spec': '5.2.0' }
const etag = (await app.request('/api/client/features', { headers: sdkh })).headers.get('etag')!
const full = withCompression(withConsole(app.fetch, ROOT + '/console/dist'))
const bare = new Hono(); bare.get('/api/client/features', (c) => c.body(null, 304, { etag: '"x"' }))
async function run(name: string, f: (r: Request) => Response | Promise<Response>, n = 30000) {
  for (let i = 0; i < 3000; i++) await f(new Request('http://x/api/client/features', { headers: { ...sdkh, 'if-none-match': etag } }))
  let best = Infinity
  for (let k = 0; k < 5; k++) {
    const t = process.cpuUsage()
    for (let i = 0; i < n / 5; i++) { const r = await f(new Request('http://x/api/client/features', { headers: { ...sdkh, 'if-none-match': etag } })); if (r.status !== 304) throw new Error(name + ' ' + r.status) }
    const u = process.cpuUsage(t); best = Math.min(best, (u.user + u.system) / (n / 5))
  }
  console.log(name.padEnd(20), best.toFixed(1), 'µs CPU/req (best of 5)')
}
for (let k = 0; k < 2; k++) { if (!process.env.NOBARE) await run('bare', bare.fetch); await run('app', app.fetch); await run('full', full) }
process.exit(0)
