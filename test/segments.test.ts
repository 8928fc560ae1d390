import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, createSegment, fresh } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
let editor: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'viv', 'Viewer')
  editor = await createSignedInUser(t, 'vera', 'Editor')
})
afterAll(() => t.close())

const S = '/api/admin/segments'
const P = '/api/admin/projects/default'
const inList = { contextName: 'userId', operator: 'IN', values: ['a', 'b'] }
const numGt = { contextName: 'age', operator: 'NUM_GT', value: '17', inverted: true }

const create = (body: unknown) => t.call('POST', S, { body })
const segmentEvents = () => t.query<{ type: string; project: string | null; data: any; pre_data: any; created_by: string }>("select * from events where type like 'segment-%' order by id")
const snapshot = () =>
  t.query(`select
    (select json_agg(s order by s.id) from segments s) as segments,
    (select json_agg(x order by x.strategy_id, x.segment_id) from feature_strategy_segments x) as links,
    (select count(*) from events) as events`)

/** A new flag whose development strategy uses the segment; answers the strategy's id. */
async function flagUsing(name: string, segmentId: number, project = 'default') {
  await createFlag(t, { name }, project)
  return (await addStrategy(t, name, 'development', { name: 'default', segments: [segmentId] }, project)).id as string
}

describe('creating segments', () => {
  it('creates a segment with normalized constraints: 201, Location and segment-created', async () => {
    const name = fresh('beta-users')
    const res = await create({ name, description: 'Beta testers', constraints: [inList, numGt] })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`${S}/${res.body.id}`)
    expect(res.body).toEqual({
      id: expect.any(Number),
      name,
      description: 'Beta testers',
      project: null,
      constraints: [
        { contextName: 'userId', operator: 'IN', caseInsensitive: false, inverted: false, values: ['a', 'b'] },
        { contextName: 'age', operator: 'NUM_GT', caseInsensitive: false, inverted: true, values: [], value: '17' },
      ],
      createdAt: expect.any(String),
      createdBy: 'test-admin',
      usedInFeatures: 0,
      usedInProjects: 0,
    })
    const [event] = (await segmentEvents()).slice(-1)
    expect(event).toMatchObject({ type: 'segment-created', project: null, created_by: 'test-admin', pre_data: null })
    expect(event!.data).toMatchObject({ id: res.body.id, name, constraints: res.body.constraints })
  })

  it('creates a project segment, with the project on its event', async () => {
    const other = await createProject(t)
    const res = await create({ name: fresh('other-users'), project: other, constraints: [] })
    expect(res.status, res.text).toBe(201)
    expect(res.body.project).toBe(other)
    expect((await segmentEvents()).at(-1)).toMatchObject({ type: 'segment-created', project: other })
  })

  it.each([
    ['no name', { constraints: [] }, /name/],
    ['an empty name', { name: '   ', constraints: [] }, /name/],
    ['a name over 100 characters', { name: 'x'.repeat(101), constraints: [] }, /name/],
    ['no constraints', { name: 'no-constraints' }, /constraints/],
    ['constraints that are not an array', { name: 'c', constraints: { contextName: 'x' } }, /constraints/],
    ['a NUM_GT constraint on a word', { name: 'c', constraints: [{ contextName: 'age', operator: 'NUM_GT', value: 'old' }] }, /number/],
    ['an unknown operator', { name: 'c', constraints: [{ contextName: 'age', operator: 'LIKE', value: 'x' }] }, /operator/],
    ['an unknown project', { name: 'c', project: 'nope', constraints: [] }, /project nope/i],
  ])('answers 400 for %s and writes nothing', async (_, body, message) => {
    const before = await snapshot()
    const res = await create(body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toMatch(message)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 409 NameExistsError for a name that is taken, and writes nothing', async () => {
    const { name } = await createSegment(t, { description: 'Beta testers', constraints: [inList, numGt] })
    const before = await snapshot()
    const res = await create({ name, constraints: [] })
    expect(res.status).toBe(409)
    expect(res.body.name).toBe('NameExistsError')
    expect(await snapshot()).toEqual(before)
  })

  it('creates exactly one of 20 concurrent creations of one name', async () => {
    const name = fresh('contended')
    const results = await Promise.all(Array.from({ length: 20 }, () => create({ name, constraints: [] })))
    expect(results.filter((r) => r.status === 201)).toHaveLength(1)
    expect(results.filter((r) => r.status === 409)).toHaveLength(19)
    expect((await segmentEvents()).filter((e) => e.data?.name === name)).toHaveLength(1)
  })

  it('answers 415 for a body that is not JSON', async () => {
    const res = await t.call('POST', S, { body: 'name=x', headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(415)
  })
})

describe('reading segments', () => {
  it('lists every segment by name, with how many flags and projects use it (archived flags included)', async () => {
    const other = await createProject(t)
    // Made in another order than listed: the list is by name.
    const otherUsers = await createSegment(t, { name: fresh('other-users'), project: other })
    const beta = await createSegment(t, { name: fresh('beta-users'), description: 'Beta testers', constraints: [inList, numGt] })
    const contended = await createSegment(t, { name: fresh('contended') })
    const flagA = fresh('seg-flag-a')
    await flagUsing(flagA, beta.id)
    await addStrategy(t, flagA, 'production', { name: 'default', segments: [beta.id] })
    await flagUsing(fresh('seg-flag-b'), beta.id, other)
    const archived = fresh('seg-flag-archived')
    await flagUsing(archived, beta.id)
    expect((await t.call('DELETE', `${P}/features/${archived}`)).status).toBe(202)

    const res = await t.call('GET', S)
    expect(res.status).toBe(200)
    // Other tests' segments are in the list too: these are the ones this test made.
    const mine = res.body.segments.filter((s: any) => [beta.name, contended.name, otherUsers.name].includes(s.name))
    expect(mine.map((s: any) => s.name)).toEqual([beta.name, contended.name, otherUsers.name])
    expect(mine[0]).toMatchObject({ name: beta.name, usedInFeatures: 3, usedInProjects: 2 })
    expect(mine[2]).toMatchObject({ name: otherUsers.name, usedInFeatures: 0, usedInProjects: 0 })
  })

  it("narrows the list for a picker: a part of the name (any case, % and _ literal), a project's usable segments, ids, a limit", async () => {
    const tag = fresh('pick')
    const project = await createProject(t)
    const other = await createProject(t)
    const global = await createSegment(t, { name: `${tag}-global` })
    const own = await createSegment(t, { name: `${tag}-own`, project })
    const foreign = await createSegment(t, { name: `${tag}-foreign`, project: other })
    const odd = await createSegment(t, { name: `${tag}-50%_off` })
    const names = async (query: string) => {
      const res = await t.call('GET', `${S}?${query}`)
      expect(res.status, res.text).toBe(200)
      return res.body.segments.map((s: any) => s.name)
    }
    expect(await names(`query=${tag.toUpperCase()}`)).toEqual([odd.name, foreign.name, global.name, own.name])
    expect(await names(`query=${tag}&project=${project}`)).toEqual([odd.name, global.name, own.name])
    expect(await names(`query=${tag}&limit=2`)).toEqual([odd.name, foreign.name])
    expect(await names(`query=${encodeURIComponent('50%_')}`)).toEqual([odd.name])
    expect(await names(`query=${encodeURIComponent(`${tag}-5%`)}`)).toEqual([])
    expect(await names(`id=${own.id},${foreign.id}`)).toEqual([foreign.name, own.name])
    // Each one found carries the same fields as in the whole list.
    const whole = (await t.call('GET', S)).body.segments.find((s: any) => s.id === own.id)
    expect((await t.call('GET', `${S}?id=${own.id}`)).body.segments).toEqual([whole])
  })

  it('answers 400 ValidationError for a bad limit or id list', async () => {
    for (const query of ['limit=0', 'limit=1001', 'limit=x', 'id=a', 'id=1,,2', `id=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`, `query=${'x'.repeat(101)}`]) {
      const res = await t.call('GET', `${S}?${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
  })

  it('reads one segment by id', async () => {
    const { id } = await createSegment(t, { description: 'Beta testers', constraints: [inList, numGt] })
    const list = (await t.call('GET', S)).body.segments.filter((s: any) => s.id === id)
    const res = await t.call('GET', `${S}/${list[0].id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual(list[0])
  })

  it('answers 404 for an unknown id and 400 for one that is not a positive integer', async () => {
    const missing = await t.call('GET', `${S}/99999`)
    expect(missing.status).toBe(404)
    expect(missing.body.name).toBe('NotFoundError')
    for (const id of ['abc', '1.5', '-1', '0', '99999999999']) {
      const res = await t.call('GET', `${S}/${id}`)
      expect(res.status, id).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
  })
})

describe('updating segments', () => {
  // Read only (the refusals below change nothing): beta-users, used by flags of the projects default and
  // other, and a segment named contended.
  let betaId: number
  beforeAll(async () => {
    for (const id of ['other', 'third']) await createProject(t, { id })
    betaId = (await createSegment(t, { name: 'beta-users', description: 'Beta testers', constraints: [numGt] })).id
    await createSegment(t, { name: 'contended' })
    await flagUsing(fresh('seg-flag-a'), betaId)
    await flagUsing('seg-flag-b', betaId, 'other')
  })
  const updateBeta = (body: unknown) => t.call('PUT', `${S}/${betaId}`, { body })

  it('replaces the segment, answers 204 and records segment-updated with the old segment as preData', async () => {
    const other = await createProject(t)
    const { id, name } = await createSegment(t, { name: fresh('other-users'), project: other })
    const renamed = fresh('other-people')
    const res = await t.call('PUT', `${S}/${id}`, { body: { name: renamed, project: other, constraints: [inList] } })
    expect(res.status, res.text).toBe(204)
    expect(res.text).toBe('')
    const after = (await t.call('GET', `${S}/${id}`)).body
    expect(after).toMatchObject({ name: renamed, project: other, description: null, constraints: [{ contextName: 'userId', operator: 'IN', values: ['a', 'b'] }] })
    const event = (await segmentEvents()).at(-1)!
    expect(event).toMatchObject({ type: 'segment-updated', project: other })
    expect(event.pre_data).toMatchObject({ id, name, project: other, constraints: [] })
    expect(event.data).toMatchObject({ id, name: renamed, project: other })
  })

  it('keeps the description when it is absent, and makes the segment global when project is absent', async () => {
    const { id, name } = await createSegment(t, { description: 'Beta testers', constraints: [inList, numGt] })
    expect((await t.call('PUT', `${S}/${id}`, { body: { name, constraints: [numGt] } })).status).toBe(204)
    const after = (await t.call('GET', `${S}/${id}`)).body
    expect(after).toMatchObject({ description: 'Beta testers', project: null, constraints: [{ operator: 'NUM_GT', value: '17' }] })
    expect((await t.call('PUT', `${S}/${id}`, { body: { name, description: null, constraints: [numGt] } })).status).toBe(204)
    expect((await t.call('GET', `${S}/${id}`)).body.description).toBeNull()
  })

  it.each([
    ['no constraints', { name: 'beta-users' }, 400, 'ValidationError'],
    ['an invalid constraint', { name: 'beta-users', constraints: [{ contextName: 'v', operator: 'SEMVER_EQ', value: 'one' }] }, 400, 'ValidationError'],
    ['an unknown project', { name: 'beta-users', project: 'nope', constraints: [] }, 400, 'ValidationError'],
    ['the name of another segment', { name: 'contended', constraints: [] }, 409, 'NameExistsError'],
    ['a move into a project while flags of other projects use it', { name: 'beta-users', project: 'third', constraints: [] }, 400, 'ValidationError'],
  ])('refuses %s and changes nothing', async (_, body, status, name) => {
    const before = await snapshot()
    const res = await updateBeta(body)
    expect(res.status, res.text).toBe(status)
    expect(res.body.name).toBe(name)
    expect(await snapshot()).toEqual(before)
  })

  it('names the flags of other projects when refusing a move', async () => {
    const res = await updateBeta({ name: 'beta-users', project: 'default', constraints: [] })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('seg-flag-b in other')
  })

  it('answers 404 for an unknown id and 400 for a non-numeric one, changing nothing', async () => {
    const before = await snapshot()
    expect((await t.call('PUT', `${S}/99999`, { body: { name: 'x', constraints: [] } })).status).toBe(404)
    expect((await t.call('PUT', `${S}/abc`, { body: { name: 'x', constraints: [] } })).status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })
})

describe('deleting segments', () => {
  it('refuses to delete a segment in use with 409 ConflictError naming the flags', async () => {
    const beta = await createSegment(t)
    const [flagA, flagB, archived] = [fresh('seg-flag-a'), fresh('seg-flag-b'), fresh('seg-flag-archived')]
    await flagUsing(flagA, beta.id)
    await flagUsing(flagB, beta.id, await createProject(t))
    await flagUsing(archived, beta.id)
    expect((await t.call('DELETE', `${P}/features/${archived}`)).status).toBe(202)
    const before = await snapshot()
    const res = await t.call('DELETE', `${S}/${beta.id}`)
    expect(res.status).toBe(409)
    expect(res.body.name).toBe('ConflictError')
    expect(res.body.message).toContain(flagA)
    expect(res.body.message).toContain(flagB)
    expect(res.body.message).toContain(archived)
    expect(await snapshot()).toEqual(before)
  })

  it('deletes an unused segment: 204 and segment-deleted with the segment as preData', async () => {
    const project = await createProject(t)
    const other = await createSegment(t, { name: fresh('other-people'), project, constraints: [inList] })
    const res = await t.call('DELETE', `${S}/${other.id}`)
    expect(res.status).toBe(204)
    expect((await t.call('GET', `${S}/${other.id}`)).status).toBe(404)
    const event = (await segmentEvents()).at(-1)!
    expect(event).toMatchObject({ type: 'segment-deleted', project, data: null })
    expect(event.pre_data).toMatchObject({ id: other.id, name: other.name })
  })

  it('answers 404 for an unknown id and 400 for a non-numeric one, changing nothing', async () => {
    const before = await snapshot()
    expect((await t.call('DELETE', `${S}/99999`)).status).toBe(404)
    expect((await t.call('DELETE', `${S}/x1`)).status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })

  it('deletes a segment once no strategy uses it any more', async () => {
    const contended = await createSegment(t)
    const flag = fresh('seg-flag-c')
    const strategy = await flagUsing(flag, contended.id)
    expect((await t.call('DELETE', `${S}/${contended.id}`)).status).toBe(409)
    expect((await t.call('DELETE', `${P}/features/${flag}/environments/development/strategies/${strategy}`)).status).toBe(200)
    expect((await t.call('DELETE', `${S}/${contended.id}`)).status).toBe(204)
  })
})

describe('segments of a project', () => {
  const strategies = (project: string, flag: string) => `/api/admin/projects/${project}/features/${flag}/environments/development/strategies`

  it('lets a strategy use a global segment and one of its own project', async () => {
    const project = await createProject(t)
    const own = await createSegment(t, { project })
    const global = await createSegment(t)
    const name = fresh('own-segments')
    await createFlag(t, { name }, project)
    const res = await t.call('POST', strategies(project, name), { body: { name: 'default', segments: [own.id, global.id] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.segments).toEqual([own.id, global.id].sort((a, b) => a - b))
  })

  it("refuses a strategy naming another project's segment with 400, adding nothing", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const foreign = await createSegment(t, { project: other })
    const name = fresh('foreign-segment')
    await createFlag(t, { name }, project)
    const before = await snapshot()
    const res = await t.call('POST', strategies(project, name), { body: { name: 'default', segments: [foreign.id] } })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining(`cannot be used in project ${project}`) })
    expect(res.body.details).toEqual([{ path: 'body.segments', message: `segment ${foreign.id} is not available in project ${project}` }])
    expect(await snapshot()).toEqual(before)
  })

  it("refuses to change a strategy to another project's segment, keeping it as it was", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const foreign = await createSegment(t, { project: other })
    const name = fresh('foreign-update')
    await createFlag(t, { name }, project)
    const strategy = await addStrategy(t, name, 'development', { name: 'default' }, project)
    const before = await snapshot()
    const res = await t.call('PUT', `${strategies(project, name)}/${strategy.id}`, { body: { name: 'default', segments: [foreign.id] } })
    expect(res.status, res.text).toBe(400)
    expect(res.body.details).toEqual([{ path: 'body.segments', message: `segment ${foreign.id} is not available in project ${project}` }])
    expect(await snapshot()).toEqual(before)
  })

  it("refuses a project's default strategy naming another project's segment", async () => {
    const [project, other] = [await createProject(t), await createProject(t)]
    const foreign = await createSegment(t, { project: other })
    const res = await t.call('PUT', `/api/admin/projects/${project}/environments/development/default-strategy`, { body: { name: 'default', segments: [foreign.id] } })
    expect(res.status, res.text).toBe(400)
    expect(res.body.details).toEqual([{ path: 'body.segments', message: `segment ${foreign.id} is not available in project ${project}` }])
  })
})

describe('segment permissions', () => {
  it('refuses a Viewer every write with 403 NoAccessError naming the permission, and changes nothing', async () => {
    const beta = await createSegment(t)
    await flagUsing(fresh('seg-flag'), beta.id)
    const before = await snapshot()
    const cases = [
      ['POST', S, { name: 'viewer-made', constraints: [] }, 'CREATE_SEGMENT'],
      ['PUT', `${S}/${beta.id}`, { name: 'viewer-renamed', constraints: [] }, 'UPDATE_SEGMENT'],
      ['DELETE', `${S}/${beta.id}`, undefined, 'DELETE_SEGMENT'],
    ] as const
    for (const [method, path, body, permission] of cases) {
      const res = await viewer.call(method, path, { body })
      expect(res.status, method).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining(`permission=${permission}`) })
    }
    expect(await snapshot()).toEqual(before)
    expect((await viewer.call('GET', S)).status).toBe(200)
  })

  it('lets an Editor create a segment, attributed to the user', async () => {
    const res = await editor.call('POST', S, { body: { name: 'editor-made', constraints: [] } })
    expect(res.status).toBe(201)
    expect(res.body.createdBy).toBe('vera')
    const [event] = await t.query<{ created_by: string; created_by_user_id: number }>("select * from events where type = 'segment-created' order by id desc limit 1")
    expect(event).toMatchObject({ created_by: 'vera', created_by_user_id: editor.id })
  })

  it('answers 401 without a token', async () => {
    expect((await t.call('GET', S, { token: null })).status).toBe(401)
    expect((await t.call('POST', S, { token: null, body: { name: 'anon', constraints: [] } })).status).toBe(401)
  })
})
