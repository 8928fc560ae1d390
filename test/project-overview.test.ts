import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { markPotentiallyStale } from '../src/feature-types/potentially-stale.js'
import { addToProject, createEnvironment, createFlag, createProject, createToken, fresh, ok } from './helpers/factories.js'

let t: TestApp
const DAY = 86_400_000
const NOW = new Date('2026-06-30T12:00:00Z')
let now = NOW
const daysAgo = (n: number) => new Date(NOW.getTime() - n * DAY)
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
})
afterAll(() => t.close())

const overview = (id: string) => t.call('GET', `/api/admin/projects/${id}`)
const at = async <T>(when: Date, action: () => Promise<T>) => {
  now = when
  try {
    return await action()
  } finally {
    now = NOW
  }
}
/** A fresh project like a web shop's, made 90 days ago, requiring two approvals in production. */
const createWeb = () =>
  at(daysAgo(90), () =>
    // Environments named, so that an environment another test makes is not added to it.
    createProject(t, { name: 'Web', description: 'The web shop', environments: ['development', 'production'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 2 }] }),
  )
/** A flag of the project (its name fresh, from `name`), made now unless told when. */
const flag = async (web: string, name: string, type = 'release') => (await createFlag(t, { name: fresh(name), type }, web)).name as string

/**
 * A web project with four flags: old-release (release, 50 days old: potentially stale), old-switch (kill-switch, 50
 * days old: never potentially stale), ops-toggle (operational, 10 days old: potentially stale) and fresh (2 days
 * old, marked stale).
 */
async function webWithFlags() {
  const web = await createWeb()
  const oldRelease = await at(daysAgo(50), () => flag(web, 'old-release'))
  const oldSwitch = await at(daysAgo(50), () => flag(web, 'old-switch', 'kill-switch'))
  const opsToggle = await at(daysAgo(10), () => flag(web, 'ops-toggle', 'operational'))
  const freshFlag = await at(daysAgo(2), () => flag(web, 'fresh'))
  await ok(t, 'PATCH', `/api/admin/projects/${web}/features/${freshFlag}`, [{ op: 'replace', path: '/stale', value: true }])
  return { web, oldRelease, oldSwitch, opsToggle, freshFlag }
}

describe('project overview (operation 2)', () => {
  it('answers 404 for an unknown project', async () => {
    const res = await overview('nope')
    expect(res.status).toBe(404)
    expect(res.body.name).toBe('NotFoundError')
  })

  it('describes an empty project, with health 100', async () => {
    const web = await createWeb()
    const res = await overview(web)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      version: 1,
      name: 'Web',
      description: 'The web shop',
      mode: 'open',
      defaultStickiness: 'default',
      featureLimit: null,
      featureNaming: { pattern: null, example: null, description: null },
      members: 0,
      health: 100,
      favorite: false,
      features: [],
      environments: [
        { environment: 'development', changeRequestsEnabled: false },
        { environment: 'production', changeRequestsEnabled: true },
      ],
      createdAt: daysAgo(90).toISOString(),
      updatedAt: null,
    })
    expect(res.body.stats).toEqual({
      avgTimeToProdCurrentWindow: 0,
      createdCurrentWindow: 0,
      createdPastWindow: 0,
      archivedCurrentWindow: 0,
      archivedPastWindow: 0,
      projectActivityCurrentWindow: 0,
      projectActivityPastWindow: 0,
      projectMembersAddedCurrentWindow: 0,
    })
  })

  it('computes health from stale and potentially stale flags', async () => {
    const { web, oldRelease, oldSwitch, opsToggle, freshFlag } = await webWithFlags()
    const res = await overview(web)
    // 5 flags would be 20% each; here 4 flags: 1 stale (25%) + 2 potentially stale (50%) → 25
    expect(res.body.health).toBe(25)
    expect(res.body.features.map((f: any) => f.name)).toEqual([freshFlag, oldRelease, oldSwitch, opsToggle])
  })

  it('counts created, archived and activity per window, and the time to production', async () => {
    const { web, oldRelease, opsToggle, freshFlag } = await webWithFlags()
    const F = `/api/admin/projects/${web}/features`
    const pastWindow = await at(daysAgo(40), () => flag(web, 'past-window'))
    await at(daysAgo(5), () => t.call('DELETE', `${F}/${pastWindow}`))
    // created 10 days ago, enabled in production 6 days later
    await at(daysAgo(4), () => t.call('POST', `${F}/${opsToggle}/environments/production/on`))
    // created 2 days ago, enabled in production 1 day later
    await at(daysAgo(1), () => t.call('POST', `${F}/${freshFlag}/environments/production/on`))
    // development does not count as production
    await at(daysAgo(1), () => t.call('POST', `${F}/${oldRelease}/environments/development/on`))
    const { stats } = (await overview(web)).body
    expect(stats.createdCurrentWindow).toBe(2) // ops-toggle, fresh
    expect(stats.createdPastWindow).toBe(3) // old-release, old-switch, past-window
    expect(stats.archivedCurrentWindow).toBe(1)
    expect(stats.archivedPastWindow).toBe(0)
    expect(stats.avgTimeToProdCurrentWindow).toBe(3.5) // (6 + 1) / 2
    const events = await t.query<{ current: number; past: number }>(
      `select count(*) filter (where created_at >= $1)::int as current, count(*) filter (where created_at < $1 and created_at >= $2)::int as past from events where project = $3`,
      [daysAgo(30), daysAgo(60), web],
    )
    expect(stats.projectActivityCurrentWindow).toBe(events[0]!.current)
    expect(stats.projectActivityPastWindow).toBe(events[0]!.past)
    expect(stats.projectActivityCurrentWindow).toBeGreaterThan(5)
  })

  it('counts members and members added in the current window', async () => {
    const web = await createWeb()
    const ann = (await ok(t, 'POST', '/api/admin/user-admin', { name: 'Ann', email: `${fresh('ann')}@example.com`, rootRole: 'Viewer' })).body.id
    // Member since 45 days (the past window), Owner since 3 days (the current one).
    await at(daysAgo(45), () => addToProject(t, web, ann, 'Member'))
    await at(daysAgo(3), () => addToProject(t, web, ann, 'Owner'))
    const res = await overview(web)
    expect(res.body.members).toBe(1)
    expect(res.body.stats.projectMembersAddedCurrentWindow).toBe(1)
  })
})

describe('updating a project', () => {
  it('sets the settings, records project-updated with the old ones, and shows them in the overview', async () => {
    const web = await createWeb()
    const res = await t.call('PUT', `/api/admin/projects/${web}`, {
      body: { name: 'Web shop', mode: 'protected', featureLimit: 10, featureNaming: { pattern: 'web-[a-z0-9-]+', example: 'web-cart', description: 'web- and a name' } },
    })
    expect(res.status, res.text).toBe(200)
    const body = (await overview(web)).body
    expect(body).toMatchObject({ name: 'Web shop', mode: 'protected', featureLimit: 10, description: 'The web shop', featureNaming: { pattern: 'web-[a-z0-9-]+', example: 'web-cart' }, updatedAt: NOW.toISOString() })
    const event = (await t.query<{ data: any; pre_data: any }>("select * from events where type = 'project-updated' and project = $1", [web]))[0]!
    expect(event.pre_data).toMatchObject({ name: 'Web', mode: 'open', featureLimit: null })
    expect(event.data).toMatchObject({ name: 'Web shop', mode: 'protected', featureLimit: 10 })
    const create = (name: string) => t.call('POST', `/api/admin/projects/${web}/features`, { body: { name } })
    expect((await create(fresh('not-matching'))).status).toBe(400)
    expect((await create(fresh('web-matching'))).status).toBe(201)
  })

  it.each([
    ['a pattern that does not compile', { name: 'x', featureNaming: { pattern: '([a-z' } }],
    ['an example that does not match', { name: 'x', featureNaming: { pattern: 'web-.+', example: 'app-x' } }],
    ['a negative limit', { name: 'x', featureLimit: -1 }],
    ['an unknown mode', { name: 'x', mode: 'closed' }],
    ['no name', { description: 'x' }],
  ])('answers 400 for %s and changes nothing', async (_, body) => {
    const web = await createWeb()
    const before = await t.query('select * from projects where id = $1', [web])
    const res = await t.call('PUT', `/api/admin/projects/${web}`, { body })
    expect(res.status).toBe(400)
    expect(await t.query('select * from projects where id = $1', [web])).toEqual(before)
  })

  it('answers 404 for an unknown project', async () => {
    expect((await t.call('PUT', '/api/admin/projects/nope', { body: { name: 'x' } })).status).toBe(404)
  })
})

describe('default strategy of a project environment', () => {
  const path = (web: string) => `/api/admin/projects/${web}/environments/development/default-strategy`

  it('sets it, records default-strategy-updated, shows it in the overview and uses it when enabling', async () => {
    const web = await createWeb()
    const webMatching = await flag(web, 'web-matching')
    const res = await t.call('PUT', path(web), { body: { name: 'flexibleRollout', parameters: { rollout: '30' }, constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.parameters).toEqual({ rollout: '30', stickiness: 'default' })
    const env = (await overview(web)).body.environments.find((e: any) => e.environment === 'development')
    expect(env.defaultStrategy).toMatchObject({ name: 'flexibleRollout', parameters: { rollout: '30', stickiness: 'default' } })
    const event = (await t.query<{ environment: string; pre_data: unknown }>("select * from events where type = 'default-strategy-updated' and project = $1", [web]))[0]!
    expect(event).toMatchObject({ environment: 'development', pre_data: null })
    const enabled = await t.call('POST', `/api/admin/projects/${web}/features/${webMatching}/environments/development/on`)
    const strategies = enabled.body.environments.find((e: any) => e.name === 'development').strategies
    expect(strategies[0].parameters).toEqual({ rollout: '30', stickiness: 'default', groupId: webMatching })
    expect(strategies[0].constraints[0]).toMatchObject({ contextName: 'country', values: ['NO'] })
  })

  it('also accepts POST, as Unleash does', async () => {
    expect((await t.call('POST', path(await createWeb()), { body: { name: 'default' } })).status).toBe(200)
  })

  it('answers 400 for an invalid strategy and 404 for an environment the project does not have', async () => {
    const web = await createWeb()
    expect((await t.call('PUT', path(web), { body: { name: 'flexibleRollout', parameters: { rollout: '300' } } })).status).toBe(400)
    expect((await t.call('PUT', path(web), { body: { name: 'default', segments: [12345] } })).status).toBe(400)
    const qa = (await createEnvironment(t, { type: 'test' })).name
    expect((await t.call('PUT', `/api/admin/projects/${web}/environments/${qa}/default-strategy`, { body: { name: 'default' } })).status).toBe(404)
  })
})

describe('the overview served from its cache', () => {
  // The overview is kept serialized per project and revision (src/projects/overview.ts): every answer
  // must still be what building it afresh gives.
  it('fills in each viewer their own favorites', async () => {
    const web = await createWeb()
    const webMatching = await flag(web, 'web-matching')
    const secondAdmin = (await createToken(t, { tokenName: fresh('second'), type: 'admin', projects: ['*'], environment: '*' })).secret as string
    expect((await t.call('POST', `/api/admin/projects/${web}/features/${webMatching}/favorites`)).status).toBe(200)
    expect((await t.call('POST', `/api/admin/projects/${web}/favorites`, { token: secondAdmin })).status).toBe(200)
    const mine = (await overview(web)).body
    const theirs = (await t.call('GET', `/api/admin/projects/${web}`, { token: secondAdmin })).body
    const favorites = (body: any) => body.features.filter((f: any) => f.favorite).map((f: any) => f.name)
    expect(favorites(mine)).toEqual([webMatching])
    expect(mine.favorite).toBe(false)
    expect(favorites(theirs)).toEqual([])
    expect(theirs.favorite).toBe(true)
    const { favorite: _, ...rest } = mine
    expect({ ...theirs, favorite: false, features: theirs.features.map((f: any) => ({ ...f, favorite: f.name === webMatching })) }).toEqual({ ...rest, favorite: false })
  })

  it('shows a change made through the API at once', async () => {
    const web = await createWeb()
    const webMatching = await flag(web, 'web-matching')
    const before = (await overview(web)).body
    expect((await t.call('PATCH', `/api/admin/projects/${web}/features/${webMatching}`, { body: [{ op: 'replace', path: '/description', value: 'changed just now' }] })).status).toBe(200)
    const after = (await overview(web)).body
    expect(after.features.find((f: any) => f.name === webMatching).description).toBe('changed just now')
    expect(after.stats.projectActivityCurrentWindow).toBe(before.stats.projectActivityCurrentWindow + 1)
  })

  it('shows lastSeenAt moved by metrics, which write no event', async () => {
    const web = await createWeb()
    const webMatching = await flag(web, 'web-matching')
    const sdk = (await createToken(t, { type: 'client', environment: 'development', projects: [web] })).secret as string
    expect((await overview(web)).body.features[0].lastSeenAt).toBeNull()
    const seen = new Date(NOW.getTime() - 60_000)
    const bucket = { start: seen.toISOString(), stop: seen.toISOString(), toggles: { [webMatching]: { yes: 1, no: 0 } } }
    expect((await at(seen, () => t.call('POST', '/api/client/metrics', { token: sdk, body: { appName: fresh('web-app'), bucket } }))).status).toBe(202)
    await t.app.idle()
    const shown = (await overview(web)).body.features.find((f: any) => f.name === webMatching)
    expect(shown.environments.find((e: any) => e.name === 'development').lastSeenAt).toBe(seen.toISOString())
    expect(shown.lastSeenAt).toBe(seen.toISOString())
  })

  it('follows the clock: potentially stale flags (once the job marks them), health and the windows move with it', async () => {
    const web = await createWeb()
    const webMatching = await flag(web, 'web-matching')
    const later = new Date(NOW.getTime() + 400 * DAY)
    expect((await at(later, () => overview(web))).body.features.find((f: any) => f.name === webMatching).potentiallyStale).toBe(false)
    await markPotentiallyStale(t.db, later)
    const body = (await at(later, () => overview(web))).body
    expect(body.features.find((f: any) => f.name === webMatching).potentiallyStale).toBe(true)
    expect(body.stats.createdCurrentWindow).toBe(0)
    expect(body.health).toBeLessThan((await overview(web)).body.health)
  })
})

describe('the project overview without its flags (GET /api/admin/projects/{projectId}/overview)', () => {
  const summary = (id: string) => t.call('GET', `/api/admin/projects/${id}/overview`)

  it('answers 404 for an unknown project', async () => {
    const res = await summary('nope')
    expect(res.status).toBe(404)
    expect(res.body.name).toBe('NotFoundError')
  })

  it('shows what the deprecated overview shows but the flags, with the flags per type and technicalDebt', async () => {
    const { web } = await webWithFlags()
    const full = (await overview(web)).body
    const res = await summary(web)
    expect(res.status).toBe(200)
    const { features, ...head } = full
    expect(features).toHaveLength(4)
    expect(res.body).toEqual({
      ...head,
      technicalDebt: 100 - full.health,
      featureTypeCounts: [
        { type: 'kill-switch', count: 1 },
        { type: 'operational', count: 1 },
        { type: 'release', count: 2 },
      ],
      archivedAt: null,
      onboardingStatus: expect.any(Object),
    })
    expect(res.body).not.toHaveProperty('features')
  })

  it('tells the onboarding: started, then the first flag (archived ones too), then onboarded once an SDK saw a flag', async () => {
    const web = await createWeb()
    expect((await summary(web)).body.onboardingStatus).toEqual({ status: 'onboarding-started' })
    const first = await at(daysAgo(3), () => flag(web, 'first'))
    await flag(web, 'second')
    expect((await t.call('DELETE', `/api/admin/projects/${web}/features/${first}`)).status).toBe(202)
    expect((await summary(web)).body).toMatchObject({ onboardingStatus: { status: 'first-flag-created', feature: first }, featureTypeCounts: [{ type: 'release', count: 1 }] })
    const sdk = (await createToken(t, { type: 'client', environment: 'development', projects: [web] })).secret as string
    const seen = new Date(NOW.getTime() - 60_000)
    const bucket = { start: seen.toISOString(), stop: seen.toISOString(), toggles: { [first]: { yes: 1, no: 0 } } }
    expect((await at(seen, () => t.call('POST', '/api/client/metrics', { token: sdk, body: { appName: fresh('web-app'), bucket } }))).status).toBe(202)
    await t.app.idle()
    expect((await summary(web)).body.onboardingStatus).toEqual({ status: 'onboarded' })
  })

  it("stays what reading it afresh gives: a change at once, each viewer's own favorite", async () => {
    const web = await createWeb()
    const first = await summary(web)
    expect((await summary(web)).body).toEqual(first.body)
    await flag(web, 'added')
    const after = (await summary(web)).body
    expect(after.featureTypeCounts).toEqual([{ type: 'release', count: 1 }])
    expect(after.stats.projectActivityCurrentWindow).toBe(first.body.stats.projectActivityCurrentWindow + 1)
    const secondAdmin = (await createToken(t, { tokenName: fresh('second'), type: 'admin', projects: ['*'], environment: '*' })).secret as string
    expect((await t.call('POST', `/api/admin/projects/${web}/favorites`, { token: secondAdmin })).status).toBe(200)
    expect((await t.call('GET', `/api/admin/projects/${web}/overview`, { token: secondAdmin })).body.favorite).toBe(true)
    expect((await summary(web)).body.favorite).toBe(false)
  })

  it('answers for an archived project, with when it was archived, where the deprecated overview answers 404', async () => {
    const web = await createWeb()
    const gone = await flag(web, 'gone')
    expect((await t.call('DELETE', `/api/admin/projects/${web}/features/${gone}`)).status).toBe(202)
    await ok(t, 'POST', `/api/admin/projects/archive/${web}`)
    expect((await overview(web)).status).toBe(404)
    const res = await summary(web)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ name: 'Web', archivedAt: NOW.toISOString(), featureTypeCounts: [], health: 100 })
  })
})
