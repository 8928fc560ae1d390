import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FRONTEND_NEW_APPLICATIONS_PER_DAY } from '../src/metrics/aggregate.js'
import { createTestApp, type TestApp } from './helpers/app.js'

// A frontend token is public (it ships in browsers): what it can create is bounded.

let t: TestApp
let frontend: string
let client: string
beforeAll(async () => {
  t = await createTestApp()
  const token = async (type: string, tokenName: string) => {
    const res = await t.call('POST', '/api/admin/api-tokens', { body: { tokenName, type, environment: 'development', projects: ['*'] } })
    expect(res.status, res.text).toBe(201)
    return res.body.secret as string
  }
  frontend = await token('frontend', 'browser')
  client = await token('client', 'backend')
})
afterAll(() => t.close())

const register = (token: string, appName: string, path: string) =>
  t.call('POST', path, { token, body: { appName, instanceId: 'i', interval: 30000, started: new Date().toISOString(), strategies: [] } })
const applicationsBy = (tokenName: string) => t.query<{ app_name: string }>('select app_name from client_applications where created_by = $1 order by app_name', [tokenName])
const createdEvents = () => t.query<{ n: number }>("select count(*)::int as n from events where type = 'application-created' and created_by = 'browser'")

describe('applications a frontend token creates', () => {
  it('are at most a handful a day, however many random appNames it reports; each answer is still 200', async () => {
    for (let i = 0; i < 200; i++) expect((await register(frontend, `random-${i}`, '/api/frontend/client/register')).status).toBe(200)
    await t.app.idle()
    expect(await applicationsBy('browser')).toHaveLength(FRONTEND_NEW_APPLICATIONS_PER_DAY)
    expect((await createdEvents())[0]!.n).toBe(FRONTEND_NEW_APPLICATIONS_PER_DAY)
  })

  it('still reports applications it already created', async () => {
    const [first] = await applicationsBy('browser')
    await t.query('update client_applications set seen_at = $1 where app_name = $2', [new Date('2020-01-01T00:00:00Z'), first!.app_name])
    expect((await register(frontend, first!.app_name, '/api/frontend/client/register')).status).toBe(200)
    await t.app.idle()
    const [row] = await t.query<{ seen_at: Date }>('select seen_at from client_applications where app_name = $1', [first!.app_name])
    expect(row!.seen_at.getTime()).toBeGreaterThan(new Date('2025-01-01T00:00:00Z').getTime())
  })

  it('does not limit server SDKs with a client token', async () => {
    for (let i = 0; i < 30; i++) expect((await register(client, `service-${i}`, '/api/client/register')).status).toBeLessThan(300)
    await t.app.idle()
    expect(await applicationsBy('backend')).toHaveLength(30)
  })
})
