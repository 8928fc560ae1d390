import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * Integration secrets never leave the database in clear (responses, addon-config-* events, delivery logs), and the
 * event log is read as its projects are: account and settings events (users' e-mails, tokens) by admins only.
 */

const SLACK_URL_SECRET = 'T000/B000/capabilitysecret'
const HEADER_SECRET = 'k3y-in-a-header'
const AUTH_SECRET = 'Bearer auth-s3cret'

let t: TestApp
let viewer: TestUser
let editor: TestUser
let admin: TestUser
let receiver: Server
let hookUrl: string

beforeAll(async () => {
  // A local receiver stands for Slack: the capability is the path (and query) of the URL.
  receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('ok')))
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/services/${SLACK_URL_SECRET}?token=${SLACK_URL_SECRET}`
  t = await createTestApp({ delivery: { allowPrivateTargets: true, timeoutMs: 1000 } })
  viewer = await createSignedInUser(t, 'vera', 'Viewer', { email: 'vera@example.com' })
  editor = await createSignedInUser(t, 'eddie', 'Editor', { email: 'eddie@example.com' })
  admin = await createSignedInUser(t, 'adele', 'Admin', { email: 'adele@example.com' })
})
afterAll(async () => {
  await t.close()
  await new Promise((resolve) => receiver.close(resolve))
})

const secrets = [SLACK_URL_SECRET, HEADER_SECRET, AUTH_SECRET]
const expectNoSecret = (text: string) => {
  for (const secret of secrets) expect(text).not.toContain(secret)
}

async function createWebhook() {
  const res = await t.call('POST', '/api/admin/addons', {
    body: {
      provider: 'webhook',
      enabled: true,
      parameters: { url: hookUrl, authorization: AUTH_SECRET, customHeaders: JSON.stringify({ 'X-Api-Key': HEADER_SECRET }), contentType: 'application/json' },
      events: ['feature-created'],
    },
  })
  expect(res.status, res.text).toBe(200)
  return res.body
}

describe('sensitive integration parameters', () => {
  it('are masked in the webhook responses: url, authorization and customHeaders show *****', async () => {
    const created = await createWebhook()
    expect(created.parameters).toEqual({ url: '*****', authorization: '*****', customHeaders: '*****', contentType: 'application/json' })
    const list = await t.call('GET', '/api/admin/addons')
    expectNoSecret(list.text)
    expect(list.body.providers[0].parameters.filter((p: any) => p.sensitive).map((p: any) => p.name)).toEqual(['url', 'authorization', 'customHeaders'])
    expectNoSecret((await t.call('GET', `/api/admin/addons/${created.id}`)).text)
  })

  it('are stored masked in addon-config-created/updated/deleted events, and sending the masks back keeps the stored values', async () => {
    const created = await createWebhook()
    const update = await t.call('PUT', `/api/admin/addons/${created.id}`, {
      body: { provider: 'webhook', enabled: true, parameters: { url: '*****', authorization: '*****', customHeaders: '*****', contentType: 'text/plain' }, events: ['feature-created'] },
    })
    expect(update.status, update.text).toBe(200)
    const [stored] = await t.query<{ parameters: Record<string, string> }>('select parameters from addons where id = $1', [created.id])
    expect(stored!.parameters).toEqual({ url: hookUrl, authorization: AUTH_SECRET, customHeaders: JSON.stringify({ 'X-Api-Key': HEADER_SECRET }), contentType: 'text/plain' })
    expect((await t.call('DELETE', `/api/admin/addons/${created.id}`)).status).toBe(200)
    const events = await t.query("select data, pre_data from events where type like 'addon-config-%'")
    expectNoSecret(JSON.stringify(events))
    const own = await t.query<{ type: string }>("select type from events where type like 'addon-config-%' and coalesce(data, pre_data)->>'id' = $1 order by id", [String(created.id)])
    expect(own.map((e) => e.type)).toEqual(['addon-config-created', 'addon-config-updated', 'addon-config-deleted'])
    const search = await t.call('GET', '/api/admin/search/events?type=IS_ANY_OF:addon-config-created,addon-config-updated,addon-config-deleted')
    expect(search.body.total).toBeGreaterThanOrEqual(3)
    expectNoSecret(search.text)
  })

  it('are masked in the delivery log (GET /api/admin/addons/{id}/events): the URL a delivery went to shows *****', async () => {
    const created = await createWebhook()
    await createFlag(t)
    let log: any[] = []
    for (let i = 0; i < 200 && log.length === 0; i++) {
      log = (await t.call('GET', `/api/admin/addons/${created.id}/events`)).body.integrationEvents
      if (log.length === 0) await new Promise((r) => setTimeout(r, 25))
    }
    expect(log[0]).toMatchObject({ state: 'success', details: { url: '*****' } })
    expectNoSecret(JSON.stringify(log))
  })

  it('stored in clear by earlier versions are masked by migration 0012', async () => {
    // As an earlier version wrote it: the API masks these today.
    const clear = { id: 99, provider: 'webhook', parameters: { url: hookUrl, authorization: AUTH_SECRET, customHeaders: `{"X-Api-Key":"${HEADER_SECRET}"}`, contentType: 'application/json' } }
    const [old] = await t.query<{ id: number }>("insert into events (type, created_by, data, pre_data) values ('addon-config-updated', 'old', $1, $1) returning id", [JSON.stringify(clear)])
    const migration = await readFile(new URL('../schema/migrations/0012_mask_addon_events.sql', import.meta.url), 'utf8')
    for (const statement of migration.split('--> statement-breakpoint')) await t.query(statement)
    const [row] = await t.query<{ data: any; pre_data: any }>('select data, pre_data from events where id = $1', [old!.id])
    expect(row!.data.parameters).toEqual({ url: '*****', authorization: '*****', customHeaders: '*****', contentType: 'application/json' })
    expect(row!.pre_data.parameters).toEqual(row!.data.parameters)
  })
})

describe('reading the event log', () => {
  it("user-created events (users' e-mails) are read by admins only, not by Viewers or Editors", async () => {
    for (const user of [viewer, editor]) {
      const res = await user.call('GET', '/api/admin/search/events?type=IS:user-created')
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ events: [], total: 0 })
      const everything = await user.call('GET', '/api/admin/search/events?limit=1000')
      expect(everything.body.events.map((e: any) => e.type)).not.toContain('user-created')
      expect(everything.text).not.toContain('adele@example.com')
      expect(everything.body.total).toBe(everything.body.events.length)
    }
    const seen = await admin.call('GET', '/api/admin/search/events?type=IS:user-created')
    expect(seen.body.total).toBe(3)
    expect(seen.text).toContain('vera@example.com')
  })

  it('addon-config events are read by admins only', async () => {
    await createWebhook()
    expect((await viewer.call('GET', '/api/admin/search/events?type=IS:addon-config-created')).body.total).toBe(0)
    expect((await admin.call('GET', '/api/admin/search/events?type=IS:addon-config-created')).body.total).toBeGreaterThan(0)
  })

  it('events of open projects and flags stay readable by every signed-in caller', async () => {
    const shop = await createProject(t, { name: 'Shop' })
    const open = (await createFlag(t, {}, shop)).name
    const res = await viewer.call('GET', `/api/admin/events/${open}`)
    expect(res.body.totalEvents).toBe(1)
    expect((await viewer.call('GET', `/api/admin/search/events?project=IS:${shop}&type=IS:feature-created`)).body.total).toBeGreaterThan(0)
  })
})
