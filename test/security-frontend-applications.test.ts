import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FRONTEND_NEW_APPLICATIONS_PER_DAY } from '../src/metrics/aggregate.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createToken } from './helpers/factories.js'

// A frontend token is public (it ships in browsers): what it can create is bounded.

let t: TestApp
/** The app's clock: the real time unless a test sets another. */
let now: Date | undefined
beforeAll(async () => {
  t = await createTestApp({ now: () => now ?? new Date() })
})
afterAll(() => t.close())

/** A fresh token of the type, for every project in development: its secret and its name. */
const token = async (type: string) => {
  const created = await createToken(t, { type, environment: 'development', projects: ['*'] })
  return { secret: created.secret as string, name: created.tokenName as string }
}
const register = (token: string, appName: string, path: string) =>
  t.call('POST', path, { token, body: { appName, instanceId: 'i', interval: 30000, started: new Date().toISOString(), strategies: [] } })
const applicationsBy = (tokenName: string) => t.query<{ app_name: string }>('select app_name from client_applications where created_by = $1 order by app_name', [tokenName])
const createdEvents = (tokenName: string) => t.query<{ n: number }>("select count(*)::int as n from events where type = 'application-created' and created_by = $1", [tokenName])
/** Reports `n` applications nobody knows yet with a frontend token, named after the token. */
async function reportRandom(frontend: { secret: string; name: string }, n: number) {
  for (let i = 0; i < n; i++) expect((await register(frontend.secret, `${frontend.name}-random-${i}`, '/api/frontend/client/register')).status).toBe(200)
  await t.app.idle()
}

describe('applications a frontend token creates', () => {
  it('are at most a handful a day, however many random appNames it reports; each answer is still 200', async () => {
    const frontend = await token('frontend')
    await reportRandom(frontend, 200)
    expect(await applicationsBy(frontend.name)).toHaveLength(FRONTEND_NEW_APPLICATIONS_PER_DAY)
    expect((await createdEvents(frontend.name))[0]!.n).toBe(FRONTEND_NEW_APPLICATIONS_PER_DAY)
  })

  it('still reports applications it already created', async () => {
    const frontend = await token('frontend')
    now = new Date('2020-01-01T00:00:00Z')
    try {
      await reportRandom(frontend, FRONTEND_NEW_APPLICATIONS_PER_DAY + 5)
    } finally {
      now = undefined
    }
    const [first] = await applicationsBy(frontend.name)
    const seenAt = async () => (await t.query<{ seen_at: Date }>('select seen_at from client_applications where app_name = $1', [first!.app_name]))[0]!.seen_at
    expect(await seenAt()).toEqual(new Date('2020-01-01T00:00:00Z'))
    expect((await register(frontend.secret, first!.app_name, '/api/frontend/client/register')).status).toBe(200)
    await t.app.idle()
    expect((await seenAt()).getTime()).toBeGreaterThan(new Date('2025-01-01T00:00:00Z').getTime())
  })

  it('does not limit server SDKs with a client token', async () => {
    const client = await token('client')
    for (let i = 0; i < 30; i++) expect((await register(client.secret, `${client.name}-service-${i}`, '/api/client/register')).status).toBeLessThan(300)
    await t.app.idle()
    expect(await applicationsBy(client.name)).toHaveLength(30)
  })
})
