// Instance banners (/api/admin/banners): admins write them, with their events; every signed-in user reads the
// enabled ones; links are only http(s) URLs, paths of the console, or the banner's dialog.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
let admin: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'vic', 'Viewer')
  admin = await createSignedInUser(t, 'adele', 'Admin')
})
afterAll(() => t.close())

const B = '/api/admin/banners'
type EventRow = { type: string; created_by: string; data: any; pre_data: any }
const lastEventId = async () => (await t.query<{ id: number }>('select coalesce(max(id), 0)::int as id from events'))[0]!.id
const eventsAfter = (id: number) => t.query<EventRow>('select type, created_by, data, pre_data from events where id > $1 order by id', [id])
const bannerRows = () => t.query('select * from banners order by id')

describe('banners', () => {
  it('creates a banner with its defaults and banner-created, and lists it', async () => {
    const message = fresh('Maintenance on Saturday')
    const since = await lastEventId()
    const res = await admin.call('POST', B, { body: { message } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({
      id: expect.any(Number),
      message,
      variant: 'info',
      sticky: false,
      icon: null,
      link: null,
      linkText: null,
      dialogTitle: null,
      dialog: null,
      enabled: true,
      createdAt: expect.any(String),
    })
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt)
    expect(await eventsAfter(since)).toEqual([{ type: 'banner-created', created_by: 'adele', data: res.body, pre_data: null }])
    const listed = (await admin.call('GET', B)).body.banners
    expect(listed).toContainEqual(res.body)
    expect(listed[0].id).toBe(res.body.id)
  })

  it('shows every signed-in user the enabled banners, and only admins the disabled ones', async () => {
    const shown = (await ok(t, 'POST', B, { message: fresh('shown'), variant: 'warning', link: 'https://status.example.com/', linkText: 'Status' })).body
    const hidden = (await ok(t, 'POST', B, { message: fresh('hidden'), enabled: false })).body
    const seen = (await viewer.call('GET', B)).body.banners.map((b: { id: number }) => b.id)
    expect(seen).toContain(shown.id)
    expect(seen).not.toContain(hidden.id)
    expect((await admin.call('GET', B)).body.banners.map((b: { id: number }) => b.id)).toContain(hidden.id)
  })

  it('replaces a banner with PUT (enabled kept when left out) with banner-updated carrying before and after', async () => {
    const before = (await ok(t, 'POST', B, { message: fresh('old'), variant: 'error', sticky: true, enabled: false, icon: 'build' })).body
    const since = await lastEventId()
    const res = await admin.call('PUT', `${B}/${before.id}`, { body: { message: 'new text', link: 'dialog', dialog: 'Line one\n<script>alert(1)</script>', dialogTitle: 'Details' } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ ...before, message: 'new text', variant: 'info', sticky: false, icon: null, link: 'dialog', dialog: 'Line one\n<script>alert(1)</script>', dialogTitle: 'Details', enabled: false })
    expect(await eventsAfter(since)).toEqual([{ type: 'banner-updated', created_by: 'adele', data: res.body, pre_data: before }])
  })

  it('switches a banner on and off with banner-updated, and records nothing when it already is so', async () => {
    const banner = (await ok(t, 'POST', B, { message: fresh('switch') })).body
    const since = await lastEventId()
    const off = await admin.call('POST', `${B}/${banner.id}/off`)
    expect(off.status, off.text).toBe(200)
    expect(off.body).toEqual({ ...banner, enabled: false })
    const again = await admin.call('POST', `${B}/${banner.id}/off`)
    expect(again.body).toEqual({ ...banner, enabled: false })
    const on = await admin.call('POST', `${B}/${banner.id}/on`)
    expect(on.body).toEqual(banner)
    expect((await eventsAfter(since)).map((e) => [e.type, e.pre_data.enabled, e.data.enabled])).toEqual([
      ['banner-updated', true, false],
      ['banner-updated', false, true],
    ])
  })

  it('deletes a banner with banner-deleted carrying it', async () => {
    const banner = (await ok(t, 'POST', B, { message: fresh('gone') })).body
    const since = await lastEventId()
    expect((await admin.call('DELETE', `${B}/${banner.id}`)).status).toBe(200)
    expect(await eventsAfter(since)).toEqual([{ type: 'banner-deleted', created_by: 'adele', data: null, pre_data: banner }])
    expect((await admin.call('GET', B)).body.banners.map((b: { id: number }) => b.id)).not.toContain(banner.id)
  })

  it('answers 404 for an unknown banner, writing nothing', async () => {
    const since = await lastEventId()
    for (const [method, path, body] of [
      ['PUT', `${B}/999999`, { message: 'x' }],
      ['POST', `${B}/999999/on`, undefined],
      ['POST', `${B}/999999/off`, undefined],
      ['DELETE', `${B}/999999`, undefined],
      ['DELETE', `${B}/not-a-number`, undefined],
    ] as const) {
      const res = await admin.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await eventsAfter(since)).toEqual([])
  })

  it('refuses unsafe links and bad input with 400, writing nothing', async () => {
    const before = await bannerRows()
    const since = await lastEventId()
    for (const body of [
      { message: 'x', link: 'javascript:alert(1)' },
      { message: 'x', link: 'data:text/html,<b>x</b>' },
      { message: 'x', link: '//evil.example.com' },
      { message: 'x', link: '/\\evil.example.com' },
      { message: 'x', link: 'ftp://files.example.com' },
      { message: 'x', link: 'dialog' },
      { message: 'x', variant: 'purple' },
      { message: 'x', icon: '<img>' },
      { message: '   ' },
      {},
    ]) {
      const res = await admin.call('POST', B, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await admin.call('POST', B, { body: 'message=x', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    expect(await bannerRows()).toEqual(before)
    expect(await eventsAfter(since)).toEqual([])
  })

  it('takes http(s) URLs and paths of the console as links', async () => {
    for (const link of ['https://example.com/a?b=c', 'http://intranet.example/x', '/projects/default']) {
      expect((await admin.call('POST', B, { body: { message: fresh('link'), link } })).body.link).toBe(link)
    }
  })

  it('refuses every write to a non-admin with 403', async () => {
    const banner = (await ok(t, 'POST', B, { message: fresh('mine') })).body
    const since = await lastEventId()
    for (const [method, path, body] of [
      ['POST', B, { message: 'x' }],
      ['PUT', `${B}/${banner.id}`, { message: 'x' }],
      ['POST', `${B}/${banner.id}/off`, undefined],
      ['DELETE', `${B}/${banner.id}`, undefined],
    ] as const) {
      const res = await viewer.call(method, path, { body })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.message).toContain('permission=ADMIN')
    }
    expect(await eventsAfter(since)).toEqual([])
  })
})
