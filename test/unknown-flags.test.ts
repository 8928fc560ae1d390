import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Db } from '../src/db.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createToken, createUser, fresh, ok } from './helpers/factories.js'

/* GET /api/admin/metrics/unknown-flags: names SDKs report in metrics that no flag has, recorded when reports are folded. */

let t: TestApp
const START = new Date('2026-03-01T10:30:00.000Z')
let now = START
const pending: ((db: Db) => Promise<unknown>)[] = []
let dev: string
let prod: string

async function flush() {
  while (pending.length > 0) await pending.shift()!(t.db)
}
async function report(secret: string, appName: string, names: string[]) {
  const toggles = Object.fromEntries(names.map((n) => [n, { yes: 1, no: 0 }]))
  const res = await t.call('POST', '/api/client/metrics', { token: secret, body: { appName, instanceId: 'pod-1', bucket: { start: now.toISOString(), stop: now.toISOString(), toggles } } })
  expect(res.status, res.text).toBe(202)
  await flush()
}
const unknown = async (token?: string | null) => {
  const res = await t.call('GET', '/api/admin/metrics/unknown-flags', token === undefined ? {} : { token })
  expect(res.status, res.text).toBe(200)
  return res.body.unknownFlags as { name: string; lastSeenAt: string; lastEventAt: string | null; reports: { appName: string; environments: { environment: string; seenAt: string }[] }[] }[]
}
const named = async (name: string) => (await unknown()).find((u) => u.name === name)

beforeAll(async () => {
  t = await createTestApp({ now: () => now, background: (_c, task) => pending.push(task) })
  dev = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret
  prod = (await createToken(t, { type: 'client', environment: 'production', projects: ['*'] })).secret
})
afterAll(() => t.close())
beforeEach(() => {
  now = START
})

describe('GET /api/admin/metrics/unknown-flags', () => {
  it('lists the names no flag has, per application and environment, and leaves real flags out', async () => {
    const real = (await createFlag(t, {})).name as string
    const ghost = fresh('ghost')
    await report(dev, 'shop', [real, ghost])
    now = new Date('2026-03-01T11:00:00.000Z')
    await report(prod, 'shop', [ghost])
    await report(dev, 'billing', [ghost])
    const list = await unknown()
    expect(list.some((u) => u.name === real)).toBe(false)
    expect(list.find((u) => u.name === ghost)).toEqual({
      name: ghost,
      lastSeenAt: '2026-03-01T11:00:00.000Z',
      lastEventAt: null,
      reports: [
        { appName: 'billing', environments: [{ environment: 'development', seenAt: '2026-03-01T11:00:00.000Z' }] },
        {
          appName: 'shop',
          environments: [
            { environment: 'development', seenAt: '2026-03-01T10:30:00.000Z' },
            { environment: 'production', seenAt: '2026-03-01T11:00:00.000Z' },
          ],
        },
      ],
    })
  })

  it('drops a name once a flag has it, and never lists an archived flag', async () => {
    const ghost = fresh('ghost')
    const archived = (await createFlag(t, {})).name as string
    await ok(t, 'DELETE', `/api/admin/projects/default/features/${archived}`)
    await report(dev, 'shop', [ghost, archived])
    expect(await named(ghost)).toBeDefined()
    expect(await named(archived)).toBeUndefined()
    await createFlag(t, { name: ghost })
    expect(await named(ghost)).toBeUndefined()
  })

  it("gives a deleted flag's last event only to callers who may read its project", async () => {
    const vault = await createProject(t, { mode: 'private' })
    const name = (await createFlag(t, {}, vault)).name as string
    await ok(t, 'DELETE', `/api/admin/projects/${vault}/features/${name}`)
    await ok(t, 'DELETE', `/api/admin/archive/${name}`)
    await report(dev, 'shop', [name])
    expect((await named(name))?.lastEventAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    const viewer = await createUser(t, 'Viewer')
    const seen = ((await viewer.call('GET', '/api/admin/metrics/unknown-flags')).body.unknownFlags as { name: string; lastEventAt: string | null }[]).find((u) => u.name === name)
    expect(seen).toMatchObject({ name, lastEventAt: null })
  })

  it('shows no event of a private project deleted and made again, open, under the same id', async () => {
    const vault = await createProject(t, { mode: 'private' })
    const name = (await createFlag(t, {}, vault)).name as string
    await ok(t, 'DELETE', `/api/admin/projects/${vault}/features/${name}`)
    await ok(t, 'DELETE', `/api/admin/archive/${name}`)
    await ok(t, 'DELETE', `/api/admin/projects/${vault}`)
    await ok(t, 'POST', '/api/admin/projects', { id: vault, name: vault })
    await report(dev, 'shop', [name])
    const viewer = await createUser(t, 'Viewer')
    const seen = ((await viewer.call('GET', '/api/admin/metrics/unknown-flags')).body.unknownFlags as { name: string; lastEventAt: string | null }[]).find((u) => u.name === name)
    expect(seen).toMatchObject({ name, lastEventAt: null })
  })

  it('keeps at most 100 names per application and environment, and forgets them after a day', async () => {
    const app = fresh('noisy')
    const names = Array.from({ length: 105 }, (_, i) => `${app}-${String(i).padStart(3, '0')}`)
    await report(dev, app, names)
    const kept = (await unknown()).filter((u) => u.reports.some((r) => r.appName === app))
    expect(kept).toHaveLength(100)
    expect((await t.query(`select count(*)::int as n from unknown_flags where app_name = $1`, [app]))[0]).toEqual({ n: 100 })
    // The same application in another environment has room of its own; a known name still moves on.
    now = new Date('2026-03-01T12:00:00.000Z')
    await report(prod, app, [names[104]!, names[0]!])
    expect((await named(names[104]!))?.reports[0]?.environments).toEqual([{ environment: 'production', seenAt: '2026-03-01T12:00:00.000Z' }])
    expect((await named(names[0]!))?.lastSeenAt).toBe('2026-03-01T12:00:00.000Z')
    // A day on, the next fold prunes what nobody reported since.
    now = new Date('2026-03-02T11:00:00.000Z')
    await report(dev, fresh('other'), [fresh('ghost')])
    expect((await t.query(`select count(*)::int as n from unknown_flags where app_name = $1`, [app]))[0]).toEqual({ n: 2 })
    expect((await unknown()).filter((u) => u.reports.some((r) => r.appName === app)).map((u) => u.name)).toEqual([names[0], names[104]])
  })

  it('needs admin-API credentials', async () => {
    expect((await t.call('GET', '/api/admin/metrics/unknown-flags', { token: null })).status).toBe(401)
    expect((await t.call('GET', '/api/admin/metrics/unknown-flags', { token: dev })).status).toBe(403)
  })
})
