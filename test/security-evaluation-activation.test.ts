import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { counted, okCaller } from './helpers/evaluation-work.js'

/**
 * Strategy activation is evaluation work the request's meter charges, as constraints are: rollout hashing (by the
 * characters of `groupId:id`), address lists, strategies and dependencies visited, the playground's detail. A parent is
 * evaluated once per request and context, whatever the number of flags depending on it. Counted with regexWorkDone.
 */
let t: TestApp
let frontendToken: string
const BUDGET = 1_000_000
const GROUP = 9_990
const STRATEGIES = 30
const userId = 'u'.repeat(1000)

const ok = okCaller(() => t)
const P = '/api/admin/projects/act'
async function child(name: string) {
  await ok('POST', `${P}/features`, { name })
  await ok('POST', `${P}/features/${name}/dependencies`, { feature: 'rp', enabled: true })
  await ok('POST', `${P}/features/${name}/environments/development/on`)
}

beforeAll(async () => {
  t = await createTestApp({ evaluation: { regexWorkBudget: BUDGET } })
  await ok('POST', '/api/admin/projects', { id: 'act', name: 'Activation', environments: ['development'] })
  await ok('POST', `${P}/features`, { name: 'rp' })
  // Rollout 0.5% with long groupIds: almost every strategy hashes and stays off (the attacker's setup).
  for (let i = 0; i < STRATEGIES; i++) {
    await ok('POST', `${P}/features/rp/environments/development/strategies`, { name: 'flexibleRollout', parameters: { rollout: '1', stickiness: 'default', groupId: String(i).padStart(GROUP, 'g') } })
  }
  await ok('POST', `${P}/features/rp/environments/development/on`)
  await child('c0')
  frontendToken = (await ok('POST', '/api/admin/api-tokens', { tokenName: 'web', type: 'frontend', environment: 'development', projects: ['act'] })).secret
})
afterAll(() => t.close())

describe('strategy activation draws on the request budget', () => {
  it('the frontend API charges rollout hashing by the characters hashed', async () => {
    const { work, res } = await counted(() => t.call('GET', `/api/frontend?userId=${userId}`, { token: frontendToken }))
    expect(res.status).toBe(200)
    // At least the first strategy hashed `groupId:userId`.
    expect(work).toBeGreaterThan(GROUP + userId.length)
  })

  it('the frontend API evaluates a parent once per request, however many flags depend on it', async () => {
    const one = await counted(() => t.call('GET', `/api/frontend?userId=${userId}`, { token: frontendToken }))
    for (let i = 1; i <= 20; i++) await child(`c${i}`)
    const many = await counted(() => t.call('GET', `/api/frontend?userId=${userId}`, { token: frontendToken }))
    expect(many.res.status).toBe(200)
    // Twenty more children cost their visits and their own default strategy (hashing the 1,000-character userId),
    // not twenty more evaluations of rp's thirty strategies (about 300,000 steps each).
    expect(many.work).toBeLessThan(one.work + 20 * 2_000)
  })

  it('the advanced playground charges activation and detail, and answers 400 past the budget', async () => {
    const { work, res } = await counted(() => t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects: ['act'], context: { appName: 'web', userId: `${userId},${'v'.repeat(1000)}` } } }))
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining('the limit per request') })
    expect(work).toBeLessThanOrEqual(BUDGET + 100_000)
  })

  it('the remoteAddress strategy charges its address list', async () => {
    await ok('POST', '/api/admin/projects', { id: 'ips', name: 'Addresses', environments: ['development'] })
    const P = '/api/admin/projects/ips'
    await ok('POST', `${P}/features`, { name: 'ips' })
    const IPs = Array.from({ length: 600 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.0/24`).join(',')
    await ok('POST', `${P}/features/ips/environments/development/strategies`, { name: 'remoteAddress', parameters: { IPs } })
    await ok('POST', `${P}/features/ips/environments/development/on`)
    const { work, res } = await counted(() => t.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['ips'], context: { appName: 'web', remoteAddress: '192.168.1.1' } } }))
    expect(res.status).toBe(200)
    expect(work).toBeGreaterThan(600)
  })
})
