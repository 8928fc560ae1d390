import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, addToProject, createFlag, createProject, createSegment, createToken, createUser, enableFlag, ensureTagType, fresh, ok } from './helpers/factories.js'
import type { TestUser } from './helpers/users.js'
import { markPotentiallyStale } from '../src/feature-types/potentially-stale.js'

/*
 * One project of five flags made on five days (a4 archived) and a private project, read only: every test filters
 * by the project it asks about, so flags of other tests never count.
 */
let now = new Date('2026-01-01T10:00:00Z')
let t: TestApp
let P: string
let hidden: string
let hiddenFlag: string
let segment: string
let editor: TestUser
const f: Record<'a1' | 'a2' | 'a3' | 'a4' | 'a5', string> = { a1: '', a2: '', a3: '', a4: '', a5: '' }
const SEEN = '2026-02-20T08:00:00.000Z'

beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  await ensureTagType(t, 'team')
  P = await createProject(t)
  const day = (n: number) => (now = new Date(`2026-01-0${n}T10:00:00Z`))
  day(1)
  f.a1 = (await createFlag(t, { name: fresh('checkout'), type: 'release', description: 'The new Checkout button', tags: [{ type: 'team', value: 'web' }, { type: 'team', value: 'api' }] }, P)).name
  day(2)
  f.a2 = (await createFlag(t, { name: fresh('banner'), type: 'experiment', tags: [{ type: 'team', value: 'api' }] }, P)).name
  segment = (await createSegment(t, { name: fresh('beta-users') })).name
  await addStrategy(t, f.a2, 'development', { name: 'default', segments: [(await ok(t, 'GET', '/api/admin/segments')).body.segments.find((s: any) => s.name === segment).id] }, P)
  await enableFlag(t, f.a2, 'development', P)
  day(3)
  f.a3 = (await createFlag(t, { name: fresh('old-ops'), type: 'operational' }, P)).name
  await ok(t, 'PATCH', `/api/admin/projects/${P}/features/${f.a3}`, [{ op: 'replace', path: '/stale', value: true }])
  await ok(t, 'POST', `/api/admin/projects/${P}/features/${f.a3}/lifecycle/complete`, { status: 'kept' })
  day(4)
  f.a4 = (await createFlag(t, { name: fresh('gone'), type: 'kill-switch' }, P)).name
  await ok(t, 'DELETE', `/api/admin/projects/${P}/features/${f.a4}`)
  day(5)
  editor = await createUser(t, 'Editor')
  f.a5 = (await createFlag(editor, { name: fresh('perm'), type: 'permission' }, P)).name
  await ok(t, 'POST', `/api/admin/projects/${P}/features/${f.a5}/dependencies`, { feature: f.a1 })
  await ok(t, 'POST', `/api/admin/projects/${P}/features/${f.a5}/favorites`)
  hidden = await createProject(t, { mode: 'private' })
  hiddenFlag = (await createFlag(t, { name: fresh('secret-checkout') }, hidden)).name
  // An SDK saw a2; then the job marks a1 and a2 (past 40 days), not a3 (marked stale) nor a5 (never).
  now = new Date(SEEN)
  const sdk = (await createToken(t, { type: 'client', environment: 'development', projects: [P] })).secret as string
  const bucket = { start: SEEN, stop: SEEN, toggles: { [f.a2]: { yes: 1, no: 0 } } }
  expect((await t.call('POST', '/api/client/metrics', { token: sdk, body: { appName: fresh('app'), bucket } })).status).toBe(202)
  await t.app.idle()
  now = new Date('2026-03-01T00:00:00Z')
  await markPotentiallyStale(t.db, now)
})
afterAll(() => t.close())

const search = (params: string, as: { call: TestApp['call'] | TestUser['call'] } = t) => as.call('GET', `/api/admin/search/features?${params}`)
/** The names found (in order) and the total, for the fixture project unless the params name projects. */
async function found(params: string, as?: { call: TestApp['call'] | TestUser['call'] }) {
  const res = await search(params.includes('project=') ? params : `project=IS:${P}&${params}`, as)
  expect(res.status, res.text).toBe(200)
  const names = res.body.features.map((x: any) => x.name)
  return { names, total: res.body.total as number }
}
const only = (...keys: (keyof typeof f)[]) => ({ names: keys.map((k) => f[k]), total: keys.length })

describe('GET /api/admin/search/features', () => {
  it('lists the live flags oldest first, each as Unleash shows it', async () => {
    expect(await found('')).toEqual(only('a1', 'a2', 'a3', 'a5'))
    const res = await search(`project=IS:${P}`)
    const [a1, a2, a3, a5] = res.body.features
    expect(a2).toEqual({
      name: f.a2,
      type: 'experiment',
      description: null,
      dependencyType: null,
      project: P,
      stale: false,
      potentiallyStale: true,
      favorite: false,
      impressionData: false,
      createdAt: '2026-01-02T10:00:00.000Z',
      archivedAt: null,
      environments: [
        { name: 'development', environment: 'development', featureName: f.a2, type: 'development', enabled: true, sortOrder: expect.any(Number), variantCount: 0, lastSeenAt: SEEN, hasStrategies: true, hasEnabledStrategies: true },
        { name: 'production', environment: 'production', featureName: f.a2, type: 'production', enabled: false, sortOrder: expect.any(Number), variantCount: 0, lastSeenAt: null, hasStrategies: false, hasEnabledStrategies: false },
      ],
      segments: [segment],
      tags: [{ type: 'team', value: 'api' }],
      lifecycle: { stage: 'pre-live', enteredStageAt: '2026-01-02T10:00:00.000Z' },
      createdBy: { id: expect.any(Number), name: 'test-admin', imageUrl: expect.any(String) },
    })
    expect(a1).toMatchObject({ dependencyType: 'parent', tags: [{ type: 'team', value: 'api' }, { type: 'team', value: 'web' }], lifecycle: { stage: 'initial' }, segments: [] })
    expect(a3).toMatchObject({ stale: true, lifecycle: { stage: 'completed', status: 'kept' } })
    expect(a5).toMatchObject({ dependencyType: 'child', favorite: true, createdBy: { id: editor.id } })
  })

  it('query: name, description and tags, case-insensitively; commas separate terms', async () => {
    expect(await found('query=CHECKOUT')).toEqual(only('a1'))
    expect(await found('query=new%20checkout%20button')).toEqual(only('a1'))
    expect(await found('query=team:api')).toEqual(only('a1', 'a2'))
    expect(await found(`query=nothing-like-it,${f.a3}`)).toEqual(only('a3'))
    expect(await found('query=%25')).toEqual(only())
  })

  it('project and type with IS, IS_NOT, IS_ANY_OF and IS_NONE_OF', async () => {
    expect(await found(`project=IS_ANY_OF:${P},${hidden}&query=checkout`)).toEqual({ names: [f.a1, hiddenFlag], total: 2 })
    expect(await found(`project=IS_NOT:${P}&query=${f.a1}`)).toEqual(only())
    expect(await found(`project=IS_NONE_OF:${P},${hidden}&query=checkout`)).toEqual(only())
    expect(await found('type=IS:release')).toEqual(only('a1'))
    expect(await found('type=IS_NOT:release')).toEqual(only('a2', 'a3', 'a5'))
    expect(await found('type=IS_ANY_OF:experiment,permission')).toEqual(only('a2', 'a5'))
    expect(await found('type=IS_NONE_OF:experiment,permission')).toEqual(only('a1', 'a3'))
  })

  it('state: active, stale and potentially-stale, as Unleash combines them', async () => {
    expect(await found('state=IS:stale')).toEqual(only('a3'))
    expect(await found('state=IS:active')).toEqual(only('a1', 'a2', 'a5'))
    expect(await found('state=IS:potentially-stale')).toEqual(only('a1', 'a2'))
    expect(await found('state=IS_NOT:potentially-stale')).toEqual(only('a3', 'a5'))
    expect(await found('state=IS_ANY_OF:stale,potentially-stale')).toEqual(only('a1', 'a2', 'a3'))
    expect(await found('state=IS_NONE_OF:stale,potentially-stale')).toEqual(only('a5'))
    const marks = (await search(`project=IS:${P}`)).body.features.map((x: any) => [x.name, x.potentiallyStale])
    expect(marks).toEqual([
      [f.a1, true],
      [f.a2, true],
      [f.a3, false],
      [f.a5, false],
    ])
  })

  it('lifecycle and archived: archived=IS:true lists the archive', async () => {
    expect(await found('archived=IS:true')).toEqual(only('a4'))
    expect(await found('archived=IS:false')).toEqual(only('a1', 'a2', 'a3', 'a5'))
    expect(await found('lifecycle=IS:pre-live')).toEqual(only('a2'))
    expect(await found('lifecycle=IS_NOT:initial')).toEqual(only('a2', 'a3'))
    expect(await found('lifecycle=IS:archived')).toEqual(only('a4'))
    expect(await found('lifecycle=IS_ANY_OF:initial,archived')).toEqual(only('a1', 'a4', 'a5'))
    expect(await found('lifecycle=IS_NONE_OF:completed,pre-live')).toEqual(only('a1', 'a5'))
    expect(await found('lifecycle=IS:initial&archived=IS:true')).toEqual(only())
  })

  it('tag with INCLUDE, DO_NOT_INCLUDE, INCLUDE_ALL_OF, INCLUDE_ANY_OF, EXCLUDE_IF_ANY_OF and EXCLUDE_ALL', async () => {
    expect(await found('tag=INCLUDE:team:web')).toEqual(only('a1'))
    expect(await found('tag=DO_NOT_INCLUDE:team:web')).toEqual(only('a2', 'a3', 'a5'))
    expect(await found('tag=INCLUDE_ALL_OF:team:web,team:api')).toEqual(only('a1'))
    expect(await found('tag=INCLUDE_ANY_OF:team:web,team:api')).toEqual(only('a1', 'a2'))
    expect(await found('tag=EXCLUDE_IF_ANY_OF:team:api')).toEqual(only('a3', 'a5'))
    expect(await found('tag=EXCLUDE_ALL:team:web,team:api')).toEqual(only('a2', 'a3', 'a5'))
  })

  it('segment by name, with the same operators', async () => {
    expect(await found(`segment=INCLUDE:${segment}`)).toEqual(only('a2'))
    expect(await found(`segment=DO_NOT_INCLUDE:${segment}`)).toEqual(only('a1', 'a3', 'a5'))
    expect(await found(`segment=INCLUDE_ALL_OF:${segment},nope`)).toEqual(only())
  })

  it('createdAt and lastSeenAt with IS_BEFORE and IS_ON_OR_AFTER; createdBy by user id', async () => {
    expect(await found('createdAt=IS_BEFORE:2026-01-03')).toEqual(only('a1', 'a2'))
    expect(await found('createdAt=IS_ON_OR_AFTER:2026-01-03')).toEqual(only('a3', 'a5'))
    expect(await found('lastSeenAt=IS_ON_OR_AFTER:2026-02-20')).toEqual(only('a2'))
    expect(await found('lastSeenAt=IS_BEFORE:2026-02-20')).toEqual(only())
    expect(await found(`createdBy=IS:${editor.id}`)).toEqual(only('a5'))
    expect(await found(`createdBy=IS_NOT:${editor.id}`)).toEqual(only('a1', 'a2', 'a3'))
  })

  it("status per environment, the caller's favorites, and favorites first", async () => {
    expect(await found('status=development:enabled')).toEqual(only('a2'))
    expect(await found('status=development:disabled&status=production:enabled')).toEqual(only('a1', 'a3', 'a5'))
    expect(await found('favorite=IS:true')).toEqual(only('a5'))
    expect(await found('favorite=IS:false')).toEqual(only('a1', 'a2', 'a3'))
    expect(await found('favorite=IS_ANY_OF:true,false')).toEqual(only('a1', 'a2', 'a3', 'a5'))
    expect(await found('favoritesFirst=true')).toEqual(only('a5', 'a1', 'a2', 'a3'))
    // Favorites are the caller's own.
    expect(await found('favorite=IS:true', await createUser(t, 'Editor'))).toEqual(only())
  })

  it('sorts by createdAt, name, type, stale, lastSeenAt and an environment, either way', async () => {
    expect(await found('sortOrder=desc')).toEqual(only('a5', 'a3', 'a2', 'a1'))
    const byName = [...[f.a1, f.a2, f.a3, f.a5]].sort()
    expect((await found('sortBy=name')).names).toEqual(byName)
    expect((await found('sortBy=name&sortOrder=desc')).names).toEqual([...byName].reverse())
    expect(await found('sortBy=type')).toEqual(only('a2', 'a3', 'a5', 'a1'))
    expect(await found('sortBy=stale&sortOrder=desc')).toEqual(only('a3', 'a1', 'a2', 'a5'))
    expect(await found('sortBy=lastSeenAt&sortOrder=desc')).toEqual(only('a2', 'a1', 'a3', 'a5'))
    expect(await found('sortBy=environment:development&sortOrder=desc')).toEqual(only('a2', 'a1', 'a3', 'a5'))
    expect(await found('sortBy=whatever')).toEqual(only('a1', 'a2', 'a3', 'a5'))
  })

  it('pages with offset and limit; total counts every match', async () => {
    expect(await found('limit=2')).toEqual({ names: [f.a1, f.a2], total: 4 })
    expect(await found('limit=2&offset=2')).toEqual({ names: [f.a3, f.a5], total: 4 })
    expect(await found('offset=10')).toEqual({ names: [], total: 4 })
    expect(await found('limit=0')).toEqual({ names: [], total: 4 })
  })

  it("leaves out private projects' flags for those who may not read them, in the total too", async () => {
    const viewer = await createUser(t, 'Viewer')
    expect(await found(`project=IS:${hidden}`)).toEqual({ names: [hiddenFlag], total: 1 })
    expect(await found(`project=IS:${hidden}`, viewer)).toEqual({ names: [], total: 0 })
    expect(await found(`project=IS_ANY_OF:${P},${hidden}&query=checkout`, viewer)).toEqual({ names: [f.a1], total: 1 })
    await addToProject(t, hidden, viewer.id)
    expect(await found(`project=IS:${hidden}`, viewer)).toEqual({ names: [hiddenFlag], total: 1 })
  })

  it('answers 400 naming the parameter for a malformed filter, 401 without credentials', async () => {
    for (const params of [
      'project=FOO:x',
      'project=IS:',
      'project=IS:,',
      'type=release',
      'state=IS:gone',
      'lifecycle=IS:later',
      'tag=INCLUDE:web',
      'tag=IS:team:web',
      'segment=IS:beta',
      'createdBy=IS:alice',
      'createdAt=IS:2026-01-01',
      'createdAt=IS_BEFORE:2026-13-45',
      'lastSeenAt=IS_AFTER:2026-01-01',
      'favorite=IS:maybe',
      'archived=IS:yes',
      'status=development:on',
      'sortOrder=up',
      'favoritesFirst=yes',
      'limit=1001',
      'offset=-1',
      // Bounded work: 51 repeated statuses, or a filter of more than 4,000 characters.
      Array.from({ length: 51 }, (_, i) => `status=env-${i}:enabled`).join('&'),
      `project=IS:${'p,'.repeat(2000)}p`,
    ]) {
      const res = await search(params)
      expect(res.status, params).toBe(400)
      expect(res.body.name).toBe('ValidationError')
      expect(res.body.message, params).toContain(params.split('=')[0])
    }
    expect((await t.call('GET', '/api/admin/search/features', { token: null })).status).toBe(401)
  })
})

describe("a project's flags from the search's cache (flags/search-cache.ts)", () => {
  // A search limited to one project is kept serialized by revision: every answer must still be what searching afresh gives.
  const flagsOf = async (project: string, as: { call: TestApp['call'] | TestUser['call'] } = t) => {
    const res = await search(`project=IS:${project}&sortBy=name&limit=1000`, as)
    expect(res.status, res.text).toBe(200)
    return res.body
  }

  it('shows a change made through the API at once, and answers as searching afresh does', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    const before = await flagsOf(project)
    expect(await flagsOf(project)).toEqual(before)
    await ok(t, 'PATCH', `/api/admin/projects/${project}/features/${flag}`, [{ op: 'replace', path: '/description', value: 'changed just now' }])
    await enableFlag(t, flag, 'development', project)
    const after = await flagsOf(project)
    expect(after.features[0]).toMatchObject({ description: 'changed just now', environments: expect.arrayContaining([expect.objectContaining({ name: 'development', enabled: true, hasEnabledStrategies: true })]) })
    // The same query written another way, and a search of two projects (never cached), agree.
    expect((await search(`limit=1000&sortBy=name&project=IS:${project}`)).body).toEqual(after)
    expect((await search(`project=IS_ANY_OF:${project},${project}&sortBy=name&limit=1000`)).body).toEqual(after)
  })

  it('shows lastSeenAt moved by metrics, which write no event', async () => {
    const project = await createProject(t)
    const [seenFirst, seenLater] = [(await createFlag(t, {}, project)).name, (await createFlag(t, {}, project)).name]
    const sdk = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
    const appName = fresh('app')
    const report = async (flag: string) => {
      const at = now.toISOString()
      expect((await t.call('POST', '/api/client/metrics', { token: sdk, body: { appName, bucket: { start: at, stop: at, toggles: { [flag]: { yes: 1, no: 0 } } } } })).status).toBe(202)
      await t.app.idle()
    }
    await report(seenFirst)
    const lastSeen = async (flag: string) => (await flagsOf(project)).features.find((x: { name: string }) => x.name === flag).environments.find((e: { name: string }) => e.name === 'development').lastSeenAt
    expect(await lastSeen(seenLater)).toBeNull()
    const events = await t.query('select count(*)::int as n from events')
    await report(seenLater)
    expect(await t.query('select count(*)::int as n from events')).toEqual(events)
    expect(await lastSeen(seenLater)).toEqual(expect.any(String))
  })

  it("answers each caller with their own favorites, and a private project's flags only to those who may read it", async () => {
    const project = await createProject(t, { mode: 'private' })
    const flag = (await createFlag(t, {}, project)).name
    // Editors and the admin token both see every project: only the caller tells their answers apart.
    const fan = await createUser(t, 'Editor')
    await ok(fan, 'POST', `/api/admin/projects/${project}/features/${flag}/favorites`)
    expect((await flagsOf(project, fan)).features.map((x: { favorite: boolean }) => x.favorite)).toEqual([true])
    expect((await flagsOf(project)).features.map((x: { favorite: boolean }) => x.favorite)).toEqual([false])
    const member = await createUser(t, 'Viewer')
    const outsider = await createUser(t, 'Viewer')
    await addToProject(t, project, member.id)
    expect((await flagsOf(project, member)).total).toBe(1)
    expect(await flagsOf(project, outsider)).toEqual({ features: [], total: 0 })
  })
})
