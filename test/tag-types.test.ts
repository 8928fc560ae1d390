// The tag registry: tag types (/api/admin/tag-types), tags (/api/admin/tags), tagging that honours them, and
// tagging many flags at once (PUT a flag's tags, PUT a project's tags), all or nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
let editor: TestUser
let admin: TestUser
let member: TestUser
beforeAll(async () => {
  t = await createTestApp()
  viewer = await createSignedInUser(t, 'vic', 'Viewer')
  editor = await createSignedInUser(t, 'eddie', 'Editor')
  admin = await createSignedInUser(t, 'adele', 'Admin')
  member = await createSignedInUser(t, 'manu', 'Viewer')
})
afterAll(() => t.close())

const TT = '/api/admin/tag-types'
const flagTags = (flag: string) => `/api/admin/features/${flag}/tags`
const newType = async (body: Record<string, unknown> = {}) => {
  const name = fresh('kind')
  await ok(t, 'POST', TT, { name, ...body })
  return name
}
type EventRow = { type: string; project: string | null; feature_name: string | null; data: any; pre_data: any; tags: any }
const eventsAfter = (id: number) => t.query<EventRow>('select type, project, feature_name, data, pre_data, tags from events where id > $1 order by id', [id])
const lastEventId = async () => (await t.query<{ id: number }>('select coalesce(max(id), 0)::int as id from events'))[0]!.id
/** Everything a tag write may touch, to show a refused one wrote nothing. */
const snapshot = () =>
  t.query(`select
    (select json_agg(x order by x.name) from tag_types x) as types,
    (select json_agg(x order by x.type, x.value) from tags x) as tags,
    (select json_agg(x order by x.feature_name, x.tag_type, x.tag_value) from feature_tags x) as flag_tags,
    (select json_agg(x.version order by x.name) from features x) as versions,
    (select count(*) from events) as events`)

describe('tag types', () => {
  it('lists the built-in simple type with version 1', async () => {
    const res = await t.call('GET', TT)
    expect(res.status).toBe(200)
    expect(res.body.version).toBe(1)
    expect(res.body.tagTypes).toContainEqual({ name: 'simple', description: 'Used to simplify filtering of features', icon: '#', color: null })
  })

  it('creates a tag type with 201 and tag-type-created, then reads it; 409 for a taken name', async () => {
    const name = fresh('colour')
    const since = await lastEventId()
    const res = await t.call('POST', TT, { body: { name, description: 'Colours', color: '#A0b0C0' } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({ name, description: 'Colours', icon: null, color: '#A0b0C0' })
    expect(await eventsAfter(since)).toEqual([{ type: 'tag-type-created', project: null, feature_name: null, data: res.body, pre_data: null, tags: [] }])
    expect((await t.call('GET', `${TT}/${name}`)).body).toEqual(res.body)
    expect((await t.call('GET', TT)).body.tagTypes).toContainEqual(res.body)

    const before = await snapshot()
    const again = await t.call('POST', TT, { body: { name } })
    expect(again.status).toBe(409)
    expect(again.body.name).toBe('NameExistsError')
    expect(await snapshot()).toEqual(before)
  })

  it.each([
    ['a one-character name', { name: 'x' }],
    ['a name over 50 characters', { name: 'x'.repeat(51) }],
    ['a name that is not URL-friendly', { name: 'two words' }],
    ['no name', { description: 'nameless' }],
    ['a color that is not #RRGGBB', { name: 'fine-name', color: 'red' }],
  ])('answers 400 for %s and writes nothing', async (_, body) => {
    const before = await snapshot()
    const res = await t.call('POST', TT, { body })
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(await snapshot()).toEqual(before)
  })

  it('answers 415 for a body that is not JSON', async () => {
    expect((await t.call('POST', TT, { body: 'name=x', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
  })

  it('validates a tag type without creating it: 200 when free, 409 when taken, 400 when invalid', async () => {
    const before = await snapshot()
    const free = await viewer.call('POST', `${TT}/validate`, { body: { name: fresh('unused') } })
    expect(free.status, free.text).toBe(200)
    expect(free.body.valid).toBe(true)
    expect((await viewer.call('POST', `${TT}/validate`, { body: { name: 'simple' } })).status).toBe(409)
    expect((await viewer.call('POST', `${TT}/validate`, { body: { name: 'x' } })).status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for an unknown tag type', async () => {
    expect((await t.call('GET', `${TT}/nope`)).status).toBe(404)
    expect((await t.call('PUT', `${TT}/nope`, { body: { description: 'x' } })).status).toBe(404)
    expect((await t.call('DELETE', `${TT}/nope`)).status).toBe(404)
  })

  it('updates description, icon and color, keeping what is absent, with tag-type-updated', async () => {
    const name = await newType({ description: 'Before', color: '#000000' })
    const since = await lastEventId()
    const res = await t.call('PUT', `${TT}/${name}`, { body: { icon: 'star' } })
    expect(res.status, res.text).toBe(200)
    const after = { name, description: 'Before', icon: 'star', color: '#000000' }
    expect((await t.call('GET', `${TT}/${name}`)).body).toEqual(after)
    expect(await eventsAfter(since)).toMatchObject([{ type: 'tag-type-updated', data: after, pre_data: { ...after, icon: null } }])
    expect((await t.call('PUT', `${TT}/${name}`, { body: { color: '#12345' } })).status).toBe(400)
  })

  it('deletes a tag type with its tags and removes them from the flags that have them, recording only tag-type-deleted', async () => {
    const name = await newType()
    const flag = (await createFlag(t)).name
    await ok(t, 'POST', flagTags(flag), { type: name, value: 'one' })
    await ok(t, 'POST', flagTags(flag), { value: 'kept' })
    await ok(t, 'POST', '/api/admin/tags', { type: name, value: 'unused' })
    const version = (await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!.version
    const since = await lastEventId()
    const res = await t.call('DELETE', `${TT}/${name}`)
    expect(res.status, res.text).toBe(200)
    expect((await t.call('GET', `${TT}/${name}`)).status).toBe(404)
    expect((await t.call('GET', `/api/admin/tags/${name}`)).body.tags).toEqual([])
    expect((await t.call('GET', flagTags(flag))).body.tags).toEqual([{ type: 'simple', value: 'kept' }])
    expect(await eventsAfter(since)).toEqual([{ type: 'tag-type-deleted', project: null, feature_name: null, data: null, pre_data: { name, description: '', icon: null, color: null }, tags: [] }])
    // The flag changed: its version moves on, so what is cached of it is read again.
    expect((await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!.version).toBeGreaterThan(version)
  })

  it('is an admin’s: Viewers and Editors get 403 and nothing is written; an admin user and the admin token may', async () => {
    const name = await newType()
    const before = await snapshot()
    for (const who of [viewer, editor]) {
      for (const [method, path, body] of [
        ['POST', TT, { name: fresh('nope') }],
        ['PUT', `${TT}/${name}`, { description: 'x' }],
        ['DELETE', `${TT}/${name}`, undefined],
      ] as const) {
        const res = await who.call(method, path, { body })
        expect(res.status, `${method} ${path}`).toBe(403)
        expect(res.body.message).toMatch(/permission=(CREATE|UPDATE|DELETE)_TAG_TYPE/)
      }
    }
    expect(await snapshot()).toEqual(before)
    expect((await admin.call('POST', TT, { body: { name: fresh('by-admin') } })).status).toBe(201)
    expect((await admin.call('PUT', `${TT}/${name}`, { body: { description: 'x' } })).status).toBe(200)
    expect((await admin.call('DELETE', `${TT}/${name}`)).status).toBe(200)
    expect((await viewer.call('GET', TT)).status).toBe(200)
  })
})

describe('tags', () => {
  it('creates a tag with 201 and tag-created; lists it, by type and alone; 409 when it exists, 400 for an unknown type', async () => {
    const type = await newType()
    const since = await lastEventId()
    const res = await t.call('POST', '/api/admin/tags', { body: { type, value: '  spaced  ' } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toEqual({ version: 1, tag: { type, value: 'spaced' } })
    expect(await eventsAfter(since)).toEqual([{ type: 'tag-created', project: null, feature_name: null, data: { type, value: 'spaced' }, pre_data: null, tags: [] }])
    expect((await t.call('GET', '/api/admin/tags')).body.tags).toContainEqual({ type, value: 'spaced' })
    expect((await t.call('GET', `/api/admin/tags/${type}`)).body).toEqual({ version: 1, tags: [{ type, value: 'spaced' }] })
    expect((await t.call('GET', `/api/admin/tags/${type}/spaced`)).body).toEqual({ version: 1, tag: { type, value: 'spaced' } })
    expect((await t.call('GET', `/api/admin/tags/${type}/other`)).status).toBe(404)
    expect((await t.call('GET', '/api/admin/tags/no-such-type')).body).toEqual({ version: 1, tags: [] })

    const before = await snapshot()
    const taken = await t.call('POST', '/api/admin/tags', { body: { type, value: 'spaced' } })
    expect(taken.status).toBe(409)
    expect(taken.body.name).toBe('NameExistsError')
    const unknown = await t.call('POST', '/api/admin/tags', { body: { type: 'no-such-type', value: 'x1' } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.message).toBe("Tag type 'no-such-type' does not exist")
    expect((await t.call('POST', '/api/admin/tags', { body: { type, value: 'x' } })).status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })

  it('deletes a tag and removes it from every flag, recording only tag-deleted; 404 for an unknown tag', async () => {
    const type = await newType()
    const flags = [(await createFlag(t)).name, (await createFlag(t)).name]
    for (const flag of flags) await ok(t, 'POST', flagTags(flag), { type, value: 'doomed' })
    const since = await lastEventId()
    const res = await editor.call('DELETE', `/api/admin/tags/${type}/doomed`)
    expect(res.status, res.text).toBe(200)
    for (const flag of flags) expect((await t.call('GET', flagTags(flag))).body.tags).toEqual([])
    expect(await eventsAfter(since)).toEqual([{ type: 'tag-deleted', project: null, feature_name: null, data: null, pre_data: { type, value: 'doomed' }, tags: [] }])
    expect((await t.call('DELETE', `/api/admin/tags/${type}/doomed`)).status).toBe(404)
  })

  it('takes UPDATE_FEATURE to create or delete: a Viewer gets 403, an Editor may', async () => {
    const type = await newType()
    const before = await snapshot()
    expect((await viewer.call('POST', '/api/admin/tags', { body: { type, value: 'nope' } })).status).toBe(403)
    expect((await viewer.call('DELETE', `/api/admin/tags/simple/anything`)).status).toBe(403)
    expect(await snapshot()).toEqual(before)
    expect((await editor.call('POST', '/api/admin/tags', { body: { type, value: 'ok' } })).status).toBe(201)
    expect((await viewer.call('GET', '/api/admin/tags')).status).toBe(200)
  })
})

describe('tagging a flag through the registry', () => {
  it('refuses a tag of an unknown type with 400, writing nothing', async () => {
    const flag = (await createFlag(t)).name
    const before = await snapshot()
    const res = await t.call('POST', flagTags(flag), { body: { type: 'ghost-type', value: 'x1' } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: "Tag type 'ghost-type' does not exist" })
    const put = await t.call('PUT', flagTags(flag), { body: { addedTags: [{ value: 'fine' }, { type: 'ghost-type', value: 'x1' }], removedTags: [] } })
    expect(put.status).toBe(400)
    const created = await t.call('POST', '/api/admin/projects/default/features', { body: { name: fresh('ghostly'), tags: [{ type: 'ghost-type', value: 'x1' }] } })
    expect(created.status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })

  it('creates a new tag with tag-created in the same write as feature-tagged, and only once', async () => {
    const type = await newType()
    const [a, b] = [(await createFlag(t)).name, (await createFlag(t)).name]
    const since = await lastEventId()
    await ok(t, 'POST', flagTags(a), { type, value: 'fresh' })
    await ok(t, 'POST', flagTags(b), { type, value: 'fresh' })
    expect((await eventsAfter(since)).map((e) => [e.type, e.feature_name])).toEqual([
      ['tag-created', null],
      ['feature-tagged', a],
      ['feature-tagged', b],
    ])
    expect((await t.call('GET', `/api/admin/tags/${type}`)).body.tags).toEqual([{ type, value: 'fresh' }])
  })

  it('registers the new tags of a flag created with them', async () => {
    const type = await newType()
    const since = await lastEventId()
    const flag = (await createFlag(t, { tags: [{ type, value: 'born' }] })).name
    expect((await eventsAfter(since)).map((e) => [e.type, e.feature_name])).toEqual([
      ['tag-created', null],
      ['feature-created', flag],
    ])
    expect((await t.call('GET', `/api/admin/tags/${type}/born`)).status).toBe(200)
  })
})

describe("PUT a flag's tags", () => {
  it('adds then removes in one write, with an event per real change, and answers the tags', async () => {
    const type = await newType()
    const flag = (await createFlag(t)).name
    await ok(t, 'POST', flagTags(flag), { value: 'old' })
    await ok(t, 'POST', flagTags(flag), { value: 'kept' })
    const since = await lastEventId()
    const res = await t.call('PUT', flagTags(flag), {
      body: { addedTags: [{ type, value: 'new' }, { value: 'kept' }, { value: 'both' }], removedTags: [{ value: 'old' }, { value: 'never-there' }, { value: 'both' }] },
    })
    expect(res.status, res.text).toBe(200)
    const after = [{ type, value: 'new' }, { type: 'simple', value: 'kept' }].sort((x, y) => (x.type < y.type ? -1 : 1))
    expect(res.body).toEqual({ version: 1, tags: after })
    expect((await t.call('GET', flagTags(flag))).body.tags).toEqual(after)
    const events = await eventsAfter(since)
    expect(events.map((e) => [e.type, e.data ?? e.pre_data])).toEqual([
      ['tag-created', { type, value: 'new' }],
      ['tag-created', { type: 'simple', value: 'both' }],
      ['feature-tagged', { type, value: 'new' }],
      ['feature-untagged', { type: 'simple', value: 'old' }],
    ])
    expect(events[2]!.tags).toEqual(after)
    expect(events[3]!.tags).toEqual([{ type: 'simple', value: 'kept' }, { type: 'simple', value: 'old' }])
  })

  it('answers 404 for an unknown flag and 403 to a Viewer, writing nothing', async () => {
    const flag = (await createFlag(t)).name
    const before = await snapshot()
    expect((await t.call('PUT', flagTags('nope'), { body: { addedTags: [{ value: 'x1' }], removedTags: [] } })).status).toBe(404)
    expect((await viewer.call('PUT', flagTags(flag), { body: { addedTags: [{ value: 'x1' }], removedTags: [] } })).status).toBe(403)
    expect((await t.call('PUT', flagTags(flag), { body: { addedTags: [{ value: 'x1' }] } })).status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })
})

describe("PUT a project's tags", () => {
  it('tags and untags every flag named in one write', async () => {
    const project = await createProject(t)
    const flags = [(await createFlag(t, {}, project)).name, (await createFlag(t, {}, project)).name]
    await ok(t, 'POST', flagTags(flags[0]), { value: 'old' })
    const since = await lastEventId()
    const res = await t.call('PUT', `/api/admin/projects/${project}/tags`, { body: { features: flags, tags: { addedTags: [{ value: 'bulk' }], removedTags: [{ value: 'old' }] } } })
    expect(res.status, res.text).toBe(200)
    for (const flag of flags) expect((await t.call('GET', flagTags(flag))).body.tags).toEqual([{ type: 'simple', value: 'bulk' }])
    expect((await eventsAfter(since)).map((e) => [e.type, e.project, e.feature_name])).toEqual([
      ['tag-created', null, null],
      ['feature-tagged', project, flags[0]],
      ['feature-untagged', project, flags[0]],
      ['feature-tagged', project, flags[1]],
    ])
  })

  it('changes nothing when one flag is of another project (400) or unknown or archived (404)', async () => {
    const project = await createProject(t)
    const mine = (await createFlag(t, {}, project)).name
    const elsewhere = (await createFlag(t)).name
    const archived = (await createFlag(t, {}, project)).name
    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${archived}`)
    const before = await snapshot()
    const bulk = (features: string[]) => t.call('PUT', `/api/admin/projects/${project}/tags`, { body: { features, tags: { addedTags: [{ value: fresh('never') }], removedTags: [] } } })
    const other = await bulk([mine, elsewhere])
    expect(other.status).toBe(400)
    expect(other.body.message).toContain(elsewhere)
    expect((await bulk([mine, 'no-such-flag'])).status).toBe(404)
    expect((await bulk([mine, archived])).status).toBe(404)
    expect((await bulk([])).status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for a flag of a private project the caller may not read, and 403 without UPDATE_FEATURE in the project', async () => {
    const project = await createProject(t)
    const vault = await createProject(t, { mode: 'private' })
    const mine = (await createFlag(t, {}, project)).name
    const secret = (await createFlag(t, {}, vault)).name
    await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [5], users: [member.id] })
    const before = await snapshot()
    const body = (features: string[]) => ({ body: { features, tags: { addedTags: [{ value: 'probe' }], removedTags: [] } } })
    const hidden = await member.call('PUT', `/api/admin/projects/${project}/tags`, body([mine, secret]))
    expect(hidden.status, hidden.text).toBe(404)
    expect(hidden.body.name).toBe('NotFoundError')
    expect((await member.call('PUT', `/api/admin/projects/${vault}/tags`, body([secret]))).status).toBe(404)
    expect((await viewer.call('PUT', `/api/admin/projects/${project}/tags`, body([mine]))).status).toBe(403)
    expect(await snapshot()).toEqual(before)
    expect((await member.call('PUT', `/api/admin/projects/${project}/tags`, body([mine]))).status).toBe(200)
  })
})
