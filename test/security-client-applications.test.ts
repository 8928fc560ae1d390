import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLIENT_NEW_APPLICATIONS_PER_DAY, clientNewApplicationsPerDay } from '../src/metrics/aggregate.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createToken } from './helpers/factories.js'

// A client token may create only so many new applications a day (FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY); its SDKs
// are answered as ever (202), so none of them breaks or retries.

const QUOTA = 5
let t: TestApp
let now: Date | undefined
beforeAll(async () => {
  t = await createTestApp({ now: () => now ?? new Date(), sdk: { clientNewApplicationsPerDay: QUOTA } })
})
afterAll(() => t.close())

const clientToken = async () => {
  const created = await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })
  return { secret: created.secret as string, name: created.tokenName as string }
}
const register = (token: string, appName: string) =>
  t.call('POST', '/api/client/register', { token, body: { appName, instanceId: 'i', interval: 30000, started: new Date().toISOString(), strategies: [] } })
const applicationsBy = (tokenName: string) => t.query<{ app_name: string }>('select app_name from client_applications where created_by = $1 order by app_name', [tokenName])
const createdEvents = async (tokenName: string) => (await t.query<{ n: number }>("select count(*)::int as n from events where type = 'application-created' and created_by = $1", [tokenName]))[0]!.n

describe('new applications a client token creates', () => {
  it('are at most the daily quota through /client/register and /client/metrics; every report is still answered 202', async () => {
    const client = await clientToken()
    for (let i = 0; i < QUOTA + 4; i++) expect((await register(client.secret, `${client.name}-app-${i}`)).status).toBe(202)
    const metrics = await t.call('POST', '/api/client/metrics', { token: client.secret, body: { appName: `${client.name}-metrics-only`, instanceId: 'i', bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: {} } } })
    expect(metrics.status).toBe(202)
    await t.app.idle()
    expect(await applicationsBy(client.name)).toHaveLength(QUOTA)
    expect(await createdEvents(client.name)).toBe(QUOTA)
  })

  it('through bulk metrics (Unleash Edge) too: 100 applications in one request create only what is left of the quota', async () => {
    const client = await clientToken()
    const applications = Array.from({ length: 100 }, (_, i) => ({ appName: `${client.name}-edge-${i}`, instanceId: 'edge', environment: 'development', interval: 30000, started: new Date().toISOString(), strategies: [] }))
    const res = await t.call('POST', '/api/client/metrics/bulk', { token: client.secret, body: { applications, metrics: [] } })
    expect(res.status, res.text).toBe(202)
    await t.app.idle()
    expect(await applicationsBy(client.name)).toHaveLength(QUOTA)
  })

  it('still reports the applications it created, and gets a new quota the next day', async () => {
    const client = await clientToken()
    now = new Date(Date.now() - 2 * 24 * 3600_000)
    try {
      for (let i = 0; i < QUOTA + 2; i++) expect((await register(client.secret, `${client.name}-old-${i}`)).status).toBe(202)
      await t.app.idle()
    } finally {
      now = undefined
    }
    expect(await applicationsBy(client.name)).toHaveLength(QUOTA)
    const first = (await applicationsBy(client.name))[0]!.app_name
    expect((await register(client.secret, first)).status).toBe(202)
    for (let i = 0; i < 2; i++) expect((await register(client.secret, `${client.name}-new-${i}`)).status).toBe(202)
    await t.app.idle()
    const seen = (await t.query<{ seen_at: Date }>('select seen_at from client_applications where app_name = $1', [first]))[0]!.seen_at
    expect(seen.getTime()).toBeGreaterThan(Date.now() - 3600_000)
    expect(await applicationsBy(client.name)).toHaveLength(QUOTA + 2)
  })

  it(`has a default of ${CLIENT_NEW_APPLICATIONS_PER_DAY} a day, set by FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY (anything but a whole number refused at start)`, () => {
    expect(clientNewApplicationsPerDay(undefined)).toBe(200)
    expect(clientNewApplicationsPerDay('1000')).toBe(1000)
    expect(() => clientNewApplicationsPerDay('many')).toThrow(/FLAGPOST_CLIENT_NEW_APPLICATIONS_PER_DAY/)
  })
})
