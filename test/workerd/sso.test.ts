// Single sign-on in the deployable worker bundle (workerd): the worker discovers a real OpenID provider on a local
// port, redeems the code and checks the ID token against its JWKS over workerd's own fetch, then signs the user in
// with a session that works on the admin API. Workerd reaches loopback addresses (as it reaches the local Postgres's
// SQL-over-HTTP endpoint, NEON_FETCH_ENDPOINT), and the settings accept plain http only to such a provider.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLocalPostgres, type LocalPostgres } from '../../dev/local-postgres.js'
import { createToken } from '../../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../../src/core/principal.js'
import { builtWorker, readWranglerConfig, workerModuleOptions } from './build.js'
import { migratedTemplate } from '../helpers/data-dir.js'
import { browserAgent, startTestProvider, type TestAccount, type TestProvider } from '../helpers/oidc-provider.js'

const ORIGIN = 'http://flagpost.test'
let tempDir: string | undefined
let postgres: LocalPostgres | undefined
let provider: TestProvider | undefined
let mf: Miniflare | undefined
let adminToken: string
const edgePerson: TestAccount = { email: 'edge.person@example.com', name: 'Edge Person', groups: ['edge-team', 'elsewhere'] }

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'flagpost-workerd-sso-'))
  const config = await readWranglerConfig()
  const [built, started, idp] = await Promise.allSettled([
    builtWorker(),
    migratedTemplate().then((loadDataDir) => startLocalPostgres({ loadDataDir, migrate: true })),
    startTestProvider({ redirectUris: [`${ORIGIN}/auth/oidc/callback`], accounts: [edgePerson] }),
  ])
  if (started.status === 'fulfilled') postgres = started.value
  if (idp.status === 'fulfilled') provider = idp.value
  for (const result of [built, started, idp]) if (result.status === 'rejected') throw result.reason
  const scriptPath = (built as PromiseFulfilledResult<string>).value
  adminToken = (await createToken(postgres!.database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'workerd-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  mf = new Miniflare({
    ...workerModuleOptions(scriptPath, config),
    bindings: { DATABASE_URL: postgres!.databaseUrl, NEON_WS_PROXY: postgres!.wsProxy, NEON_FETCH_ENDPOINT: postgres!.fetchEndpoint },
  })
  await mf.ready
})

afterAll(async () => {
  await mf?.dispose()
  await provider?.close()
  await postgres?.close()
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

const worker = async (request: Request) =>
  (await mf!.dispatchFetch(request.url, { method: request.method, headers: Object.fromEntries(request.headers), body: request.body ? await request.text() : undefined, redirect: 'manual' })) as unknown as Response

async function admin(method: string, path: string, body?: unknown) {
  const res = await worker(new Request(`${ORIGIN}${path}`, { method, headers: { authorization: adminToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) }))
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any }
}

describe('single sign-on in workerd', () => {
  it('signs a new person in through the provider, creates them with the default root role, and syncs their groups', async () => {
    const team = await admin('POST', '/api/admin/groups', { name: 'Edge team', mappingsSSO: ['edge-team'] })
    expect(team.status, JSON.stringify(team.body)).toBe(201)
    const saved = await admin('POST', '/api/admin/auth/oidc/settings', {
      enabled: true,
      discoverUrl: provider!.discoverUrl,
      clientId: provider!.clientId,
      secret: provider!.clientSecret,
      autoCreate: true,
      defaultRootRole: 'Viewer',
      enableGroupSyncing: true,
      groupJsonPath: 'groups',
      addGroupsScope: true,
    })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const options = await worker(new Request(`${ORIGIN}/api/admin/user`))
    expect(((await options.json()) as { options: unknown[] }).options).toEqual([{ type: 'oidc', message: 'Sign in with OpenID Connect', path: '/auth/oidc/login' }])

    const agent = browserAgent(ORIGIN, worker)
    const start = await agent.send(`${ORIGIN}/auth/oidc/login?redirect=/events`)
    expect(start.status, await start.clone().text()).toBe(302)
    expect(start.headers.get('location')!.startsWith(provider!.issuer)).toBe(true)
    const page = await agent.follow(start.headers.get('location')!)
    expect(page.response.status).toBe(200)
    const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email: 'edge.person@example.com' }) }, (url) => url.origin === ORIGIN && url.pathname !== '/auth/oidc/callback')
    expect(back.url).toBe(`${ORIGIN}/events`)

    const session = agent.cookie('flagpost.test', 'flagpost-session')
    expect(session).toBeTruthy()
    const me = await worker(new Request(`${ORIGIN}/api/admin/user`, { headers: { cookie: `flagpost-session=${session}` } }))
    expect(me.status).toBe(200)
    expect(((await me.json()) as { user: unknown }).user).toMatchObject({ email: 'edge.person@example.com', name: 'Edge Person', rootRole: 3 })
    expect(await postgres!.database.client.query(`select created_by from events where type = 'user-created' and data->>'email' = 'edge.person@example.com'`).then((r) => r.rows)).toEqual([{ created_by: 'system' }])
    // The user joined the group their provider's group maps to, in the statement that created them.
    const userId = await postgres!.database.client.query(`select id from users where email = 'edge.person@example.com'`).then((r) => (r.rows[0] as { id: number }).id)
    const group = await admin('GET', `/api/admin/groups/${team.body.id}`)
    expect(group.body.users.map((u: { createdBy: string; user: { id: number } }) => [u.user.id, u.createdBy])).toEqual([[userId, 'SSO']])
    expect(await postgres!.database.client.query(`select created_by, data from events where type = 'group-user-added'`).then((r) => r.rows)).toEqual([{ created_by: 'system', data: { groupId: team.body.id, userId } }])
  })

  it('refuses an ID token for another audience, sending the browser back to the sign-in page', async () => {
    provider!.tamper((claims) => ({ ...claims, aud: 'someone-else' }))
    try {
      const agent = browserAgent(ORIGIN, worker)
      const start = await agent.send(`${ORIGIN}/auth/oidc/login`)
      const page = await agent.follow(start.headers.get('location')!)
      const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email: 'edge.person@example.com' }) }, (url) => url.origin === ORIGIN && url.pathname !== '/auth/oidc/callback')
      const landed = new URL(back.url)
      expect(landed.pathname).toBe('/sign-in')
      expect(landed.searchParams.get('errorMsg')).toMatch(/aud/)
      expect(agent.cookie('flagpost.test', 'flagpost-session')).toBeUndefined()
    } finally {
      provider!.tamper(undefined)
    }
  })
})
