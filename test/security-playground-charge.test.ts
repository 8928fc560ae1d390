import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_MAX_EVALUATIONS, EVALUATIONS_PER_MINUTE, evaluationCharge, playgroundEvaluationsPerMinute } from '../src/playground/service.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * The advanced playground at Unleash's limit (15,000 evaluations) costs about 100 ms of CPU, and any signed-in user
 * (a Viewer) could ask for it again and again: one caller held a core. The playgrounds now charge each caller the
 * evaluations they make, EVALUATIONS_PER_MINUTE a minute, refused before anything is evaluated.
 */

let t: TestApp
let viewer: TestUser
let other: TestUser
const FLAGS = 50
const COMBINATIONS = DEFAULT_MAX_EVALUATIONS / FLAGS

beforeAll(async () => {
  t = await createTestApp()
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await t.call(method, path, { body })
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBeLessThan(300)
    return res.body
  }
  await ok('POST', '/api/admin/projects', { id: 'many', name: 'many', environments: ['development'] })
  const features = Array.from({ length: FLAGS }, (_, i) => ({ name: `many-${i}`, type: 'release' }))
  const featureStrategies = features.map((f) => ({ name: 'flexibleRollout', featureName: f.name, parameters: { rollout: '50', stickiness: 'default', groupId: f.name }, constraints: [{ contextName: 'userId', operator: 'IN', values: ['u1', 'u2'] }] }))
  const featureEnvironments = features.map((f) => ({ featureName: f.name, name: f.name, enabled: true, variants: [] }))
  await ok('POST', '/api/admin/features-batch/import', { project: 'many', environment: 'development', data: { features, featureStrategies, featureEnvironments, tagTypes: [], featureTags: [] } })
  viewer = await createSignedInUser(t, 'vera', 'Viewer')
  other = await createSignedInUser(t, 'otto', 'Viewer')
})
afterAll(() => t.close())

/** An advanced playground call of exactly Unleash's limit of evaluations (FLAGS flags × COMBINATIONS userIds). */
const atTheLimit = (user: TestUser, round: number) =>
  user.call('POST', '/api/admin/playground/advanced', {
    body: { environments: ['development'], projects: ['many'], context: { appName: 'web', userId: Array.from({ length: COMBINATIONS }, (_, i) => `r${round}-u${i}`).join(',') } },
  })

describe('the playgrounds charge each caller the evaluations they make', () => {
  it('answers a caller at the limit until its minute’s evaluations are made, then 429 with Retry-After before evaluating; another caller is not held to it', async () => {
    const allowed = EVALUATIONS_PER_MINUTE / DEFAULT_MAX_EVALUATIONS
    for (let round = 0; round < allowed; round++) {
      const res = await atTheLimit(viewer, round)
      expect(res.status, res.text.slice(0, 200)).toBe(200)
      expect(res.body.features).toHaveLength(FLAGS)
    }
    const refused = await atTheLimit(viewer, allowed)
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ id: expect.any(String), name: 'TooManyRequestsError', message: expect.stringContaining(`past the ${EVALUATIONS_PER_MINUTE} the playgrounds make for one caller in a minute`) })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    // The basic playground and the change-request preview draw on the same charge.
    const basic = await viewer.call('POST', '/api/admin/playground', { body: { environment: 'development', projects: ['many'], context: { appName: 'web' } } })
    expect(basic.status).toBe(429)
    // Another user (and the admin token) still get their own.
    expect((await atTheLimit(other, 0)).status).toBe(200)
    expect((await t.call('POST', '/api/admin/playground/advanced', { body: { environments: ['development'], projects: ['many'], context: { appName: 'web', userId: 'a,b' } } })).status).toBe(200)
  })

  it('takes its minute from FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE: unset the default, 0 no limit, anything but a whole number refused at start', () => {
    expect(playgroundEvaluationsPerMinute(undefined)).toBeUndefined()
    expect(playgroundEvaluationsPerMinute('')).toBeUndefined()
    expect(playgroundEvaluationsPerMinute('30000')).toBe(30_000)
    expect(playgroundEvaluationsPerMinute('0')).toBe(0)
    for (const bad of ['-1', '1.5', 'many']) expect(() => playgroundEvaluationsPerMinute(bad)).toThrow(/FLAGPOST_PLAYGROUND_EVALUATIONS_PER_MINUTE/)
    const retries: number[] = []
    const refused = (retryAfter: number) => retries.push(retryAfter)
    const limited = evaluationCharge(20)('caller', 0, refused)
    limited(15)
    expect(() => limited(15)).toThrow(/past the 20/)
    expect(retries).toEqual([60])
    const unlimited = evaluationCharge(0)('caller', 0, refused)
    for (let i = 0; i < 100; i++) unlimited(DEFAULT_MAX_EVALUATIONS)
    expect(retries).toEqual([60])
  })
})
