// A preview runs unreviewed code on a public URL over a copy of production's database. The scrub (scripts/scrub-preview.ts)
// says for every table what the preview keeps, empties or rewrites; these tests hold that list to the database's catalog
// and check, against the preview's own app, that no production secret works there and no person's e-mail is left.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PREVIEW_SCRUB, scrubPreview, type TableScrub } from '../scripts/scrub-preview.js'
import { bootstrapAdminTokens } from '../src/api-tokens/store.js'
import { createApp } from '../src/app.js'
import { createTestApp, answerOf, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createSegment, enableFlag, ok } from './helpers/factories.js'
import { createPat, createSignedInUser, PASSWORD, type TestUser } from './helpers/users.js'

let t: TestApp
let person: TestUser
let leaver: TestUser
const secrets: Record<string, string> = {}
/** Every e-mail address, username and name production's users had (the deleted user's too, whose row forgot them). */
let personalData: string[] = []
let flag: string
const SIGNALLER = 'signaller@example.org'
const CUSTOMER = 'customer@shop.example'

beforeAll(async () => {
  // No background work: SDK reports stay in the inbox and deliveries stay queued, as in a copy taken mid-flight.
  t = await createTestApp({ background: () => {}, signalsPerMinute: 100 })
  person = await createSignedInUser(t, 'pat.person', 'Admin', { email: 'pat.person@example.com', name: 'Pat Person' })
  leaver = await createSignedInUser(t, 'lee.leaver', 'Editor', { email: 'lee.leaver@example.com', name: 'Lee Leaver' })
  secrets.pat = await createPat(person)
  secrets.admin = (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: 'prod-admin', type: 'admin' })).body.secret
  secrets.client = (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: 'prod-sdk', type: 'client', environment: 'development', projects: ['*'] })).body.secret
  secrets.frontend = (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: 'prod-web', type: 'frontend', environment: 'development', projects: ['*'] })).body.secret
  secrets.invite = (await ok(t, 'POST', '/api/admin/invite-link/tokens', { name: 'prod-invite', expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString() })).body.secret
  const invited = await ok(t, 'POST', '/api/admin/user-admin', { email: 'ivy.invited@example.com', name: 'Ivy Invited', rootRole: 'Viewer', sendEmail: false })
  secrets.reset = new URL(invited.body.inviteLink).searchParams.get('token')!
  const endpoint = (await ok(t, 'POST', '/api/admin/signal-endpoints', { name: 'prod-alerts' })).body
  secrets.signal = (await ok(t, 'POST', `/api/admin/signal-endpoints/${endpoint.id}/tokens`, { name: 'grafana' })).body.token
  const signal = await t.call('POST', '/api/signal-endpoint/prod-alerts', { token: `Bearer ${secrets.signal}`, body: { alert: 'cpu', reporter: SIGNALLER } })
  expect(signal.status, signal.text).toBeLessThan(300)
  await ok(t, 'POST', '/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url: 'https://hooks.example.com/secret-path', authorization: 'Bearer prod-hook' }, events: ['feature-created'] })
  await ok(t, 'POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: 'https://accounts.example.com/.well-known/openid-configuration', clientId: 'flagpost', secret: 'oidc-secret-of-production' })

  // What people did: a flag with a strategy, a segment and a group, each by the signed-in person; events name them.
  const asPerson = { call: person.call }
  flag = (await createFlag(asPerson, { description: 'Ask pat.person@example.com' })).name
  await createSegment(asPerson, { constraints: [{ contextName: 'userId', operator: 'IN', values: ['42'] }] })
  await addStrategy(asPerson, flag, 'development')
  // A user's address and a customer's in a strategy: the user's is a person of the instance, the customer's is configuration.
  await addStrategy(asPerson, flag, 'production', { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: flag }, constraints: [{ contextName: 'email', operator: 'IN', values: ['pat.person@example.com', CUSTOMER] }] })
  await enableFlag(asPerson, flag, 'development')
  await ok(asPerson, 'POST', '/api/admin/groups', { name: 'prod-team', users: [{ user: { id: person.id } }, { user: { id: leaver.id } }] })
  await ok(t, 'PUT', `/api/admin/user-admin/${person.id}`, { name: 'Pat P. Person' })
  await ok(t, 'PUT', `/api/admin/user-admin/${person.id}`, { name: 'Pat Person', email: 'pat.person@example.com' })
  await leaver.call('POST', '/api/admin/projects/default/features', { body: { name: 'leavers-flag' } })
  expect((await t.call('DELETE', `/api/admin/user-admin/${leaver.id}`)).status).toBe(200)
  expect((await t.call('POST', '/api/client/register', { token: secrets.client, headers: { 'x-forwarded-for': '203.0.113.9' }, body: { appName: 'prod-app', instanceId: 'pod-1', strategies: ['default'], interval: 15000, started: new Date().toISOString() } })).status).toBe(202)

  // A single sign-on identity: a provider's subject may be an address or an employee number.
  await t.query(`update users set sso_issuer = 'https://accounts.example.com', sso_subject = 'pat.sso.subject' where id = $1`, [person.id])

  personalData = ['pat.sso.subject', 'pat.person@example.com', 'pat.person', 'Pat Person', 'Pat P. Person', 'lee.leaver@example.com', 'lee.leaver', 'Lee Leaver', 'ivy.invited@example.com', 'Ivy Invited', SIGNALLER]
  // Production holds them all before the scrub (else the scan below would prove nothing).
  const before = JSON.stringify(await everyRow())
  for (const value of personalData) expect(before, value).toContain(value)
  await scrubPreview(t.db)
})
afterAll(() => t.close())

async function publicTables(): Promise<string[]> {
  return (await t.query<{ table_name: string }>("select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name")).map((r) => r.table_name)
}

/** Every row of every table, as text (all its columns). */
async function everyRow(): Promise<Record<string, string[]>> {
  const rows: Record<string, string[]> = {}
  for (const table of await publicTables()) rows[table] = (await t.query<{ row: string }>(`select r::text as row from "${table}" r order by r::text`)).map((r) => r.row)
  return rows
}

/** The app a preview deploys, on the scrubbed database: a fresh process that remembers no production credential. */
const previewApp = () => createApp({ db: () => t.db, background: () => {} })
const previewCall = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
  answerOf(await previewApp().request(path, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined }))

describe('the preview scrub list', () => {
  it('classifies every table of the database, and names only tables and columns that exist', async () => {
    const tables = await publicTables()
    const listed = Object.keys(PREVIEW_SCRUB).sort()
    expect(tables.filter((table) => !listed.includes(table)), 'tables the scrub does not classify').toEqual([])
    expect(listed.filter((table) => !tables.includes(table)), 'tables the scrub names that do not exist').toEqual([])
    for (const [table, what] of Object.entries(PREVIEW_SCRUB) as [string, TableScrub][]) {
      if (what.action !== 'rewrite') continue
      const columns = (await t.query<{ column_name: string }>("select column_name from information_schema.columns where table_schema = 'public' and table_name = $1", [table])).map((c) => c.column_name)
      for (const column of Object.keys(what.columns)) expect(columns, `${table}.${column}`).toContain(column)
    }
  })

  it('keeps no table whose text columns hold credentials, addresses or authors unrewritten', async () => {
    const sensitive = /(^|_)(email|username|password|secret|hash|token|ip)(_|$)|^created_by$/
    const columns = await t.query<{ table_name: string; column_name: string }>(
      "select table_name, column_name from information_schema.columns where table_schema = 'public' and data_type in ('text', 'jsonb', 'ARRAY', 'character varying')",
    )
    const unscrubbed = columns.filter(({ table_name, column_name }) => {
      const what = (PREVIEW_SCRUB as Record<string, TableScrub>)[table_name]
      if (!sensitive.test(column_name) || what?.action === 'empty') return false
      return !(what?.action === 'rewrite' && column_name in what.columns)
    })
    expect(unscrubbed.map((c) => `${c.table_name}.${c.column_name}`)).toEqual([])
  })
})

describe('a scrubbed preview database', () => {
  it("accepts no production API token, personal access token, session or password (in the preview's own app)", async () => {
    expect((await previewCall('GET', '/api/admin/projects', { authorization: secrets.admin! })).status).toBe(401)
    expect((await previewCall('GET', '/api/admin/projects', { authorization: secrets.pat! })).status).toBe(401)
    expect((await previewCall('GET', '/api/admin/projects', { cookie: person.cookie })).status).toBe(401)
    expect((await previewCall('GET', '/api/client/features', { authorization: secrets.client! })).status).toBe(401)
    expect((await previewCall('GET', '/api/frontend', { authorization: secrets.frontend! })).status).toBe(401)
    for (const username of ['pat.person', 'pat.person@example.com', 'user-' + person.id]) {
      expect((await previewCall('POST', '/auth/simple/login', {}, { username, password: PASSWORD })).status, username).toBe(401)
    }
  })

  it('opens no production invite link or password link, and takes no signal with a production token', async () => {
    expect((await previewCall('GET', `/invite/${secrets.invite}/validate`)).status).toBe(400)
    const signUp = await previewCall('POST', `/invite/${secrets.invite}/signup`, {}, { email: 'new@example.net', name: 'New', password: 'a long enough password' })
    expect(signUp.status, signUp.text).toBe(400)
    expect((await previewCall('GET', `/auth/reset/validate?token=${secrets.reset}`)).status).toBeGreaterThanOrEqual(400)
    const reset = await previewCall('POST', '/auth/reset/password', {}, { token: secrets.reset, password: 'set on a preview' })
    expect(reset.status).toBeGreaterThanOrEqual(400)
    expect(reset.status).toBeLessThan(500)
    expect((await previewCall('POST', '/api/signal-endpoint/prod-alerts', { authorization: `Bearer ${secrets.signal}` }, { alert: 'x' })).status).toBe(401)
  })

  it('holds no e-mail address, username or name of a person in any column of any table, nor any production secret', async () => {
    const rows = await everyRow()
    for (const [table, texts] of Object.entries(rows)) {
      const all = texts.join('\n').toLowerCase()
      for (const value of [...personalData, ...Object.values(secrets)]) expect(all, `${table} holds ${value}`).not.toContain(value.toLowerCase())
      for (const secret of ['oidc-secret-of-production', 'prod-hook', 'secret-path', '203.0.113.9']) expect(all, `${table} holds ${secret}`).not.toContain(secret)
      // Any e-mail address left is a placeholder, or the flags' configuration (a customer targeted by a strategy).
      const left = all.match(/[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)+/g)?.filter((address) => !address.endsWith('@preview.invalid')) ?? []
      expect(left, table).toEqual(table === 'feature_strategies' ? [CUSTOMER] : [])
    }
  })

  it("keeps the flags, their strategies and history, with authors rewritten to the users' placeholders", async () => {
    await bootstrapAdminTokens(t.db, new Date(), ['*:*.preview-admin-secret-for-this-test'])
    const admin = { authorization: '*:*.preview-admin-secret-for-this-test' }
    const read = await previewCall('GET', `/api/admin/projects/default/features/${flag}`, admin)
    expect(read.status, read.text).toBe(200)
    expect(read.body.environments.find((e: { name: string }) => e.name === 'development')).toMatchObject({ enabled: true, strategies: [expect.objectContaining({ name: 'default' })] })
    const production = read.body.environments.find((e: { name: string }) => e.name === 'production')
    expect(production.strategies[0].constraints[0].values).toEqual([`user-${person.id}@preview.invalid`, CUSTOMER])
    expect(read.body.description).toBe(`Ask user-${person.id}@preview.invalid`)
    const [user] = await t.query<{ email: string; name: string; username: string }>('select email, name, username from users where id = $1', [person.id])
    expect(user).toEqual({ email: `user-${person.id}@preview.invalid`, name: `User ${person.id}`, username: `user-${person.id}` })
    const created = await t.query<{ created_by: string; summary: string }>("select created_by, summary from events where type = 'feature-created' and feature_name = $1", [flag])
    expect(created).toEqual([{ created_by: user!.email, summary: expect.stringContaining(`**${user!.email}**`) }])
    expect((await previewCall('GET', `/api/admin/search/events?createdBy=IS:${person.id}&type=IS:feature-created`, admin)).body.events).toEqual([expect.objectContaining({ createdBy: user!.email, featureName: flag })])
    const collaborators = await t.query('select created_by from feature_collaborators where feature_name = $1', [flag])
    expect(collaborators).toEqual([{ created_by: user!.email }])
  })

  it('changes nothing when scrubbed again (the workflow scrubs on every push)', async () => {
    await scrubPreview(t.db)
    const before = await everyRow()
    await scrubPreview(t.db)
    expect(await everyRow()).toEqual(before)
  })
})

describe('the scrub, on data made to break it or to slip through', () => {
  /** A fresh production database, the admin's calls to it, and every row of it as text after the scrub. */
  async function production(options: Parameters<typeof createTestApp>[0] = { background: () => {} }) {
    const p = await createTestApp(options)
    const rows = async () => {
      const tables = (await p.query<{ table_name: string }>("select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'")).map((r) => r.table_name)
      const all: string[] = []
      for (const table of tables) all.push(...(await p.query<{ row: string }>(`select r::text as row from "${table}" r`)).map((r) => `${table}: ${r.row}`))
      return all.sort().join('\n')
    }
    return { p, rows }
  }
  const user = async (p: TestApp, body: Record<string, unknown>): Promise<number> => (await ok(p, 'POST', '/api/admin/user-admin', { rootRole: 'Editor', sendEmail: false, ...body })).body.id

  it("is not broken by users who hold other users' placeholders (e-mails and usernames, one taken or two swapped)", async () => {
    const { p } = await production()
    try {
      const [a, b, c, d, e] = [
        await user(p, { email: 'alice@example.com', username: 'alice' }),
        await user(p, { username: 'bob' }),
        await user(p, { username: 'carol' }),
        await user(p, { username: 'dan' }),
        await user(p, { username: 'eve' }),
      ]
      // e takes a's placeholder address (as a sign-up through an invite link could); b and c swap theirs, d and e their usernames.
      await ok(p, 'PUT', `/api/admin/user-admin/${e}`, { email: `USER-${a}@preview.invalid` })
      await ok(p, 'PUT', `/api/admin/user-admin/${b}`, { email: `user-${c}@preview.invalid` })
      await ok(p, 'PUT', `/api/admin/user-admin/${c}`, { email: `user-${b}@preview.invalid` })
      await ok(p, 'PUT', `/api/admin/user-admin/${d}`, { username: `user-${e}` })
      await ok(p, 'PUT', `/api/admin/user-admin/${e}`, { username: `user-${d}` })
      await scrubPreview(p.db)
      const users = await p.query<{ id: number; email: string | null; username: string | null }>('select id, email, username from users where id = any($1) order by id', [[a, b, c, d, e]])
      expect(users).toEqual([
        { id: a, email: `user-${a}@preview.invalid`, username: `user-${a}` },
        { id: b, email: `user-${b}@preview.invalid`, username: `user-${b}` },
        { id: c, email: `user-${c}@preview.invalid`, username: `user-${c}` },
        { id: d, email: null, username: `user-${d}` },
        { id: e, email: `user-${e}@preview.invalid`, username: `user-${e}` },
      ])
      // a's events still name a, not the user who held a's placeholder.
      expect((await p.query<{ data: unknown }>("select data from events where type = 'user-created' and data->>'id' = $1", [String(a)]))[0]!.data).toMatchObject({ email: `user-${a}@preview.invalid` })
    } finally {
      await p.close()
    }
  })

  it("replaces users' addresses in any script and with any character, whole and only whole, in free text, constraints and events", async () => {
    const { p, rows } = await production()
    try {
      const emails = ['jöhn.dœ@exämple.com', 'ünï@example.com', "o'brien@example.com", 'first!last@example.com', 'ann@example.com', 'joann@example.com', 'MiXeD.Case@Example.COM']
      const ids: number[] = []
      for (const email of emails) ids.push(await user(p, { email }))
      const placeholder = (email: string) => `user-${ids[emails.indexOf(email)]}@preview.invalid`
      const description = `Ask JÖHN.DŒ@EXÄMPLE.COM, ünï@example.com, '${"o'brien@example.com"}', user=first!last@example.com; joann@example.com or ann@example.com (mixed.case@example.com).`
      const flag = (await createFlag(p, { description })).name
      await addStrategy(p, flag, 'development', { name: 'default', constraints: [{ contextName: 'email', operator: 'IN', values: [...emails, 'x.ann@example.com'] }] })
      // A change request's title and an event's payload: the address inside a longer text.
      await ok(p, 'PATCH', `/api/admin/projects/default/features/${flag}`, [{ op: 'replace', path: '/description', value: `Now ask ${emails.join(' ')}` }])
      const before = (await rows()).toLowerCase()
      for (const email of emails) expect(before).toContain(email.toLowerCase())
      await scrubPreview(p.db)
      // x.ann@example.com (kept: not a user's) holds ann's address as text, not as an address.
      const after = (await rows()).toLowerCase().replaceAll('x.ann@example.com', 'a customer')
      for (const email of emails) expect(after, email).not.toContain(email.toLowerCase())
      for (const part of ['jöhn', 'exämple', 'ünï', "o'", 'first!', 'jouser', 'mixed.case']) expect(after, part).not.toContain(part)
      const [read] = await p.query<{ description: string }>('select description from features where name = $1', [flag])
      expect(read!.description).toBe(`Now ask ${emails.map(placeholder).join(' ')}`)
      const [{ constraints }] = (await p.query<{ constraints: { values: string[] }[] }>('select constraints from feature_strategies where feature_name = $1', [flag])) as [{ constraints: { values: string[] }[] }]
      // x.ann@example.com is not ann's address: a customer's, left as the flags' configuration.
      expect(constraints[0]!.values).toEqual([...emails.map(placeholder), 'x.ann@example.com'])
      const scrubbed = await rows()
      await scrubPreview(p.db)
      expect(await rows(), 'a second scrub changes nothing').toBe(scrubbed)
      const created = await p.query<{ data: { description: string } }>("select data from events where type = 'feature-created' and feature_name = $1", [flag])
      expect(created[0]!.data.description).toBe(
        `Ask ${placeholder('jöhn.dœ@exämple.com')}, ${placeholder('ünï@example.com')}, '${placeholder("o'brien@example.com")}', user=${placeholder('first!last@example.com')}; ${placeholder('joann@example.com')} or ${placeholder('ann@example.com')} (${placeholder('MiXeD.Case@Example.COM')}).`,
      )
    } finally {
      await p.close()
    }
  })

  it('gives addresses no user has, in any script, a placeholder of their own in the rewritten texts', async () => {
    const { p, rows } = await production()
    try {
      // john.smith@preview.invalid is no placeholder: a name in the reserved domain.
      const strangers = ['zoë.çedilla@exämple.org', "d'arcy@example.org", 'a+b!c@example.org', 'john.smith@preview.invalid']
      const flag = (await createFlag(p, { description: `Asked ${strangers.join(', ')}.` })).name
      await scrubPreview(p.db)
      const [created] = await p.query<{ data: { description: string } }>("select data from events where type = 'feature-created' and feature_name = $1", [flag])
      expect(created!.data.description).toMatch(/^Asked (person-[0-9a-f]{12}@preview\.invalid, ){3}person-[0-9a-f]{12}@preview\.invalid\.$/)
      const events = (await rows()).split('\n').filter((row) => row.startsWith('events:')).join('\n')
      for (const part of ['zoë', 'exämple', "d'arcy", 'a+b!c', 'john.smith']) expect(events, part).not.toContain(part)
    } finally {
      await p.close()
    }
  })

  it("is not broken by a user's address that keys other rows (a tag on a flag)", async () => {
    const { p, rows } = await production()
    try {
      const id = await user(p, { email: 'tagged.person@example.com' })
      const flag = (await createFlag(p)).name
      await ok(p, 'POST', `/api/admin/features/${flag}/tags`, { type: 'simple', value: 'tagged.person@example.com' })
      await scrubPreview(p.db)
      expect(await rows()).not.toContain('tagged.person@example.com')
      expect(await p.query('select email from users where id = $1', [id])).toEqual([{ email: `user-${id}@preview.invalid` }])
    } finally {
      await p.close()
    }
  })

  it("rewrites SDK instances' ids (an SDK's default id names its OS user and host), and still changes nothing when scrubbed again", async () => {
    // Background work on, so that the registrations are folded from the inbox into the instances.
    const { p, rows } = await production({})
    try {
      const client = (await ok(p, 'POST', '/api/admin/api-tokens', { tokenName: 'sdk', type: 'client', environment: 'development', projects: ['*'] })).body.secret
      for (const instanceId of ['jsmith-MacBook-Pro.local-4242', `instance-${'0'.repeat(32)}`]) {
        const registered = await p.call('POST', '/api/client/register', { token: client, body: { appName: 'app-x', instanceId, strategies: ['default'], interval: 15000, started: new Date().toISOString() } })
        expect(registered.status, registered.text).toBe(202)
      }
      await p.app.idle()
      expect(await p.query("select instance_id from client_instances where app_name = 'app-x'")).toHaveLength(2)
      await scrubPreview(p.db)
      const after = await rows()
      for (const part of ['jsmith', 'MacBook']) expect(after).not.toContain(part)
      const instances = await p.query<{ instance_id: string }>("select instance_id from client_instances where app_name = 'app-x' order by instance_id")
      expect(instances).toHaveLength(2)
      expect(instances.map((i) => i.instance_id)).toContain(`instance-${'0'.repeat(32)}`)
      for (const { instance_id } of instances) expect(instance_id).toMatch(/^instance-[0-9a-f]{32}$/)
      await scrubPreview(p.db)
      expect(await rows()).toBe(after)
    } finally {
      await p.close()
    }
  })
})
