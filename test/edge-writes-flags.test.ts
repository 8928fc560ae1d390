// The flag-scoped writes at the edge (archiving, reviving, tags, favorites, lifecycle, dependencies): each reads
// what it decides from, then writes in one statement checked against it, over HTTP, with no WebSocket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { archiveFeature } from '../src/flags/store.js'
import { addTag } from '../src/tags/store.js'
import { setFeatureFavorite } from '../src/favorites/store.js'
import { completeFeature } from '../src/lifecycle/store.js'
import { addDependency } from '../src/dependencies/store.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createFlag, createProject, enableFlag, ok, ensureTagType } from './helpers/factories.js'
import { racing } from './helpers/racing.js'

let t: EdgeApp
let project: string
beforeAll(async () => {
  t = await createEdgeApp()
  // Flags here are tagged with the tag type `team`, which (as in Unleash) must exist first.
  await ensureTagType(t, 'team')
  project = await createProject(t)
})
afterAll(() => t.close())

const F = (flag: string) => `/api/admin/projects/${project}/features/${flag}`
const tagsPath = (flag: string) => `/api/admin/features/${flag}/tags`
const depsPath = (child: string) => `${F(child)}/dependencies`
const newFlag = async (body: Record<string, unknown> = {}) => (await createFlag(t, body, project)).name as string
const eventsOf = (flag: string) => t.query<{ type: string; environment: string | null; data: any; pre_data: any; tags: any }>('select type, environment, data, pre_data, tags from events where feature_name = $1 order by id', [flag])
const author = () => ({ actor: SYSTEM_ACTOR, now: new Date() })
const anyone = async () => {}

/**
 * Makes the request with the principal remembered (tag, revive and project favorite writes make the app forget it),
 * so the round trips counted are the route's own.
 */
async function measured(method: string, path: string, body?: unknown) {
  await t.call('GET', '/api/admin/projects')
  const res = await t.call(method, path, { body })
  expect(res.status >= 200 && res.status < 300, `${method} ${path} answered ${res.status}: ${res.text}`).toBe(true)
  return res
}
const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

describe('archiving and reviving at the edge', () => {
  it('archives with DELETE in a read and one statement', async () => {
    const flag = await newFlag({ tags: [{ value: 'kept' }] })
    const res = await measured('DELETE', F(flag))
    expect(res.status).toBe(202)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(flag))).body).toMatchObject({ archived: true, lifecycle: { stage: 'archived' } })
    expect((await eventsOf(flag)).at(-1)).toMatchObject({
      type: 'feature-archived',
      data: { name: flag, project, archived: true },
      pre_data: { name: flag, project, archived: false },
      tags: [{ type: 'simple', value: 'kept' }],
    })
    expect((await t.call('DELETE', F(flag))).status).toBe(404)
  })

  it('archives with a patch of /archived (and the metadata it changes) in a read and one statement, answering the archived flag', async () => {
    const flag = await newFlag({ description: 'before' })
    const res = await measured('PATCH', F(flag), [
      { op: 'replace', path: '/description', value: 'after' },
      { op: 'replace', path: '/archived', value: true },
    ])
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.body).toMatchObject({ description: 'after', archived: true, lifecycle: { stage: 'archived' } })
    expect(res.body).toEqual((await t.call('GET', F(flag))).body)
    const events = (await eventsOf(flag)).slice(-2)
    expect(events.map((e) => e.type)).toEqual(['feature-metadata-updated', 'feature-archived'])
    expect(events[1]).toMatchObject({ data: { description: 'after', archived: true }, pre_data: { description: 'after', archived: false } })
  })

  it('revives in a read and one statement, switching every environment off', async () => {
    const flag = await newFlag({ tags: [{ value: 'back' }] })
    await enableFlag(t, flag, 'development', project)
    await ok(t, 'DELETE', F(flag))
    const res = await measured('POST', `/api/admin/archive/revive/${flag}`)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    const revived = (await t.call('GET', F(flag))).body
    expect(revived).toMatchObject({ archived: false, enabled: false })
    expect(revived.lifecycle.stage).not.toBe('archived')
    expect((await eventsOf(flag)).slice(-2)).toMatchObject([
      { type: 'feature-revived', data: { archived: false }, pre_data: { archived: true }, tags: [{ type: 'simple', value: 'back' }] },
      { type: 'feature-environment-disabled', environment: 'development', data: { enabled: false }, pre_data: { enabled: true }, tags: [{ type: 'simple', value: 'back' }] },
    ])
  })

  it('archives what is there when the flag changes between its read and its write', async () => {
    const flag = await newFlag()
    const race = racing(t.db, () => t.call('POST', tagsPath(flag), { body: { value: 'late' } }))
    await archiveFeature(race.db, author(), project, flag)
    expect(race.state.raced).toBe(true)
    expect((await eventsOf(flag)).map((e) => [e.type, e.tags])).toEqual([
      ['feature-created', []],
      ['feature-tagged', [{ type: 'simple', value: 'late' }]],
      ['feature-archived', [{ type: 'simple', value: 'late' }]],
    ])
  })

  it('archives once when two requests archive the flag at the same time', async () => {
    const flag = await newFlag()
    const results = await Promise.all([t.call('DELETE', F(flag)), t.call('DELETE', F(flag))])
    expect(results.map((r) => r.status).sort()).toEqual([202, 404])
    expect(results.every((r) => r.webSocket === 0)).toBe(true)
    expect((await eventsOf(flag)).filter((e) => e.type === 'feature-archived')).toHaveLength(1)
  })
})

describe('tags at the edge', () => {
  it('adds a tag in a read and one statement; one already there in the read alone', async () => {
    const flag = await newFlag({ tags: [{ type: 'team', value: 'aa' }] })
    const res = await measured('POST', tagsPath(flag), { value: 'bb' })
    expect(res.status).toBe(201)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', tagsPath(flag))).body.tags).toEqual([{ type: 'simple', value: 'bb' }, { type: 'team', value: 'aa' }])
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-tagged', data: { type: 'simple', value: 'bb' }, tags: [{ type: 'simple', value: 'bb' }, { type: 'team', value: 'aa' }] })

    const again = await measured('POST', tagsPath(flag), { value: 'bb' })
    expect(again.status).toBe(201)
    expect(trips(again)).toEqual({ http: 1, webSocket: 0 })
    expect((await eventsOf(flag)).filter((e) => e.type === 'feature-tagged')).toHaveLength(1)
  })

  it('removes a tag in a read and one statement', async () => {
    const flag = await newFlag({ tags: [{ value: 'gone' }, { value: 'stays' }] })
    const res = await measured('DELETE', `${tagsPath(flag)}/simple/gone`)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', tagsPath(flag))).body.tags).toEqual([{ type: 'simple', value: 'stays' }])
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-untagged', data: null, pre_data: { type: 'simple', value: 'gone' }, tags: [{ type: 'simple', value: 'gone' }, { type: 'simple', value: 'stays' }] })
  })

  it('gives the event the tags added between its read and its write', async () => {
    const flag = await newFlag()
    const race = racing(t.db, () => t.call('POST', tagsPath(flag), { body: { value: 'first' } }))
    await addTag(race.db, author(), flag, { value: 'second' }, anyone)
    expect(race.state.raced).toBe(true)
    expect((await eventsOf(flag)).filter((e) => e.type === 'feature-tagged').map((e) => e.tags)).toEqual([
      [{ type: 'simple', value: 'first' }],
      [{ type: 'simple', value: 'first' }, { type: 'simple', value: 'second' }],
    ])
  })

  it('writes both of two tags added at the same time, the later event carrying both', async () => {
    const flag = await newFlag()
    const results = await Promise.all([t.call('POST', tagsPath(flag), { body: { value: 'left' } }), t.call('POST', tagsPath(flag), { body: { value: 'right' } })])
    expect(results.map((r) => [r.status, r.webSocket])).toEqual([
      [201, 0],
      [201, 0],
    ])
    const events = (await eventsOf(flag)).filter((e) => e.type === 'feature-tagged')
    expect(events).toHaveLength(2)
    expect(events[1]!.tags).toEqual([{ type: 'simple', value: 'left' }, { type: 'simple', value: 'right' }])
    expect(events[0]!.tags).toEqual([{ type: 'simple', value: events[0]!.data.value }])
  })
})

describe('the tag registry and bulk tagging at the edge', () => {
  it("sets a flag's tags with PUT, a new tag created with it, in a read and one batch", async () => {
    const flag = await newFlag({ tags: [{ value: 'old' }] })
    const value = `new-${flag}`
    const res = await measured('PUT', tagsPath(flag), { addedTags: [{ type: 'team', value }], removedTags: [{ type: 'simple', value: 'old' }] })
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.body).toEqual({ version: 1, tags: [{ type: 'team', value }] })
  })

  it("tags a project's flags with PUT in a read and one batch", async () => {
    const flags = [await newFlag(), await newFlag()]
    const res = await measured('PUT', `/api/admin/projects/${project}/tags`, { features: flags, tags: { addedTags: [{ type: 'team', value: 'bulk' }], removedTags: [] } })
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    for (const flag of flags) expect((await t.call('GET', tagsPath(flag))).body.tags).toEqual([{ type: 'team', value: 'bulk' }])
  })

  it('creates a tag and a tag type in one round trip each; updates and deletes them in a read and one statement or batch', async () => {
    const name = `kind-${project}`
    expect(trips(await measured('POST', '/api/admin/tag-types', { name }))).toEqual({ http: 1, webSocket: 0 })
    expect(trips(await measured('PUT', `/api/admin/tag-types/${name}`, { color: '#AABBCC' }))).toEqual({ http: 2, webSocket: 0 })
    expect(trips(await measured('POST', '/api/admin/tags', { type: name, value: 'solo' }))).toEqual({ http: 1, webSocket: 0 })
    const flag = await newFlag()
    await ok(t, 'POST', tagsPath(flag), { type: name, value: 'used' })
    expect(trips(await measured('DELETE', `/api/admin/tags/${name}/solo`))).toEqual({ http: 2, webSocket: 0 })
    expect(trips(await measured('DELETE', `/api/admin/tag-types/${name}`))).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', tagsPath(flag))).body.tags).toEqual([])
  })

  it('creates a tag once when it is created while a flag is being tagged with it', async () => {
    const flag = await newFlag()
    const value = `raced-${flag}`
    const race = racing(t.db, () => t.call('POST', '/api/admin/tags', { body: { type: 'team', value } }))
    await addTag(race.db, author(), flag, { type: 'team', value }, anyone)
    expect(race.state.raced).toBe(true)
    expect(await t.query("select type from events where type = 'tag-created' and data->>'value' = $1", [value])).toHaveLength(1)
    expect((await t.call('GET', tagsPath(flag))).body.tags).toEqual([{ type: 'team', value }])
  })
})

describe('favorites at the edge', () => {
  it('makes a flag a favorite and not, each in a read and one statement', async () => {
    const flag = await newFlag({ tags: [{ value: 'starred' }] })
    const res = await measured('POST', `${F(flag)}/favorites`)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(flag))).body.favorite).toBe(true)
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-favorited', data: { feature: flag, favorite: true }, pre_data: { feature: flag, favorite: false }, tags: [{ type: 'simple', value: 'starred' }] })

    const again = await measured('POST', `${F(flag)}/favorites`)
    expect(trips(again)).toEqual({ http: 1, webSocket: 0 })

    const removed = await measured('DELETE', `${F(flag)}/favorites`)
    expect(trips(removed)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(flag))).body.favorite).toBe(false)
    expect((await eventsOf(flag)).map((e) => e.type).filter((type) => type.endsWith('favorited'))).toEqual(['feature-favorited', 'feature-unfavorited'])
  })

  it('makes a project a favorite and not, each in one statement', async () => {
    const res = await measured('POST', `/api/admin/projects/${project}/favorites`)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    const removed = await measured('DELETE', `/api/admin/projects/${project}/favorites`)
    expect(trips(removed)).toEqual({ http: 1, webSocket: 0 })
    const missing = await t.call('POST', '/api/admin/projects/nope/favorites')
    expect(missing.status).toBe(404)
    const events = await t.query<{ type: string; data: any }>("select type, data from events where project = $1 and type like 'project-%favorited' order by id", [project])
    expect(events).toEqual([
      { type: 'project-favorited', data: { project, favorite: true } },
      { type: 'project-unfavorited', data: { project, favorite: false } },
    ])
  })

  it('writes one event when the same favorite is set between its read and its write', async () => {
    const flag = await newFlag()
    const race = racing(t.db, () => t.call('POST', `${F(flag)}/favorites`))
    const { key } = await principalOfAdminToken()
    await setFeatureFavorite(race.db, author(), key, project, flag, true)
    expect(race.state.raced).toBe(true)
    expect((await eventsOf(flag)).filter((e) => e.type === 'feature-favorited')).toHaveLength(1)
    expect((await t.call('GET', F(flag))).body.favorite).toBe(true)
  })
})

/** The admin token's principal key (`token:<id>`): whose favorites its requests set. */
async function principalOfAdminToken() {
  const [row] = await t.query<{ id: number }>("select id from api_tokens where token_name = 'edge-admin'")
  return { key: `token:${row!.id}` }
}

describe('lifecycle at the edge', () => {
  it('completes and uncompletes, each in a read and one statement', async () => {
    const flag = await newFlag()
    const res = await measured('POST', `${F(flag)}/lifecycle/complete`, { status: 'kept', statusValue: 'on' })
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', `${F(flag)}/lifecycle`)).body.at(-1)).toMatchObject({ stage: 'completed', status: 'kept' })
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-completed', data: { stage: 'completed', status: 'kept', statusValue: 'on' }, pre_data: { stage: 'initial' } })

    const back = await measured('POST', `${F(flag)}/lifecycle/uncomplete`)
    expect(trips(back)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(flag))).body.lifecycle.stage).toBe('initial')
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-uncompleted', data: { stage: 'initial' }, pre_data: { stage: 'completed', status: 'kept', statusValue: 'on' } })
  })

  it('completes from the stage that is there when another completion lands between its read and its write', async () => {
    const flag = await newFlag()
    const race = racing(t.db, () => t.call('POST', `${F(flag)}/lifecycle/complete`, { body: { status: 'kept' } }))
    await completeFeature(race.db, author(), project, flag, { status: 'discarded' })
    expect(race.state.raced).toBe(true)
    expect((await eventsOf(flag)).filter((e) => e.type === 'feature-completed').map((e) => [e.pre_data, e.data])).toEqual([
      [{ stage: 'initial' }, { stage: 'completed', status: 'kept' }],
      [{ stage: 'completed', status: 'kept' }, { stage: 'completed', status: 'discarded' }],
    ])
  })
})

describe('dependencies at the edge', () => {
  it('adds, removes one and removes all, each in a read and one statement', async () => {
    const [parent, child] = [await newFlag(), await newFlag({ tags: [{ value: 'dep' }] })]
    const added = await measured('POST', depsPath(child), { feature: parent, variants: ['blue'] })
    expect(trips(added)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(child))).body.dependencies).toEqual([{ feature: parent, enabled: true, variants: ['blue'] }])
    expect((await eventsOf(child)).at(-1)).toMatchObject({ type: 'feature-dependency-added', data: { feature: parent, enabled: true, variants: ['blue'] }, pre_data: null, tags: [{ type: 'simple', value: 'dep' }] })

    const removed = await measured('DELETE', `${depsPath(child)}/${parent}`)
    expect(trips(removed)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(parent))).body.children).toEqual([])
    expect((await eventsOf(child)).at(-1)).toMatchObject({ type: 'feature-dependency-removed', data: null, pre_data: { feature: parent, enabled: true, variants: ['blue'] } })

    await ok(t, 'POST', depsPath(child), { feature: parent, enabled: false })
    const all = await measured('DELETE', depsPath(child))
    expect(trips(all)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(child))).body.dependencies).toEqual([])
    expect((await eventsOf(child)).at(-1)).toMatchObject({ type: 'feature-dependencies-removed', pre_data: { dependencies: [{ feature: parent, enabled: false, variants: [] }] } })
    const none = await measured('DELETE', depsPath(child))
    expect(trips(none)).toEqual({ http: 1, webSocket: 0 })
  })

  it('refuses a chain made between its read and its write', async () => {
    const [a, b, c] = [await newFlag(), await newFlag(), await newFlag()]
    const race = racing(t.db, () => t.call('POST', depsPath(b), { body: { feature: c } }))
    await expect(addDependency(race.db, author(), project, a, { feature: b })).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringContaining(`${b} itself depends on ${c}`) })
    expect(race.state.raced).toBe(true)
    expect(await t.query('select child, parent from feature_dependencies where child = any($1)', [[a, b, c]])).toEqual([{ child: b, parent: c }])
  })

  it('never lets two crossing requests build a chain', async () => {
    const [a, b, c] = [await newFlag(), await newFlag(), await newFlag()]
    const results = await Promise.all([t.call('POST', depsPath(a), { body: { feature: b } }), t.call('POST', depsPath(b), { body: { feature: c } })])
    expect(results.map((r) => r.status).sort()).toEqual([200, 400])
    expect(results.every((r) => r.webSocket === 0)).toBe(true)
    expect(await t.query('select child, parent from feature_dependencies where child = any($1)', [[a, b, c]])).toHaveLength(1)
  })
})
