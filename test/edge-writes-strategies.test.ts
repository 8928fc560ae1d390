import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Caller } from '../src/core/principal.js'
import type { Db } from '../src/db.js'
import { setSortOrder, updateFlagStrategy } from '../src/strategies/store.js'
import { updateSegment } from '../src/segments/store.js'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { addStrategy, createFlag, createProject, createSegment, enableFlag, fresh } from './helpers/factories.js'
import { racing } from './helpers/racing.js'

// The strategy and segment writes at the edge: at most two round trips over Neon's HTTP, no WebSocket, and the
// same answers and events as anywhere else.

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const trips = (r: { http: number; webSocket: number }) => ({ http: r.http, webSocket: r.webSocket })
const strategiesOf = (flag: string, environment = 'development', project = 'default') => `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`
const eventsOf = (flag: string) =>
  t.query<{ type: string; environment: string | null; data: any; pre_data: any; tags: any }>('select type, environment, data, pre_data, tags from events where feature_name = $1 order by id', [flag])
const segmentEvents = (id: number) =>
  t.query<{ type: string; project: string | null; data: any; pre_data: any }>(
    "select type, project, data, pre_data from events where type like 'segment-%' and coalesce(data, pre_data)->>'id' = $1 order by id",
    [String(id)],
  )
const environmentOf = async (flag: string, environment = 'development') => (await t.call('GET', `/api/admin/projects/default/features/${flag}`)).body.environments.find((e: any) => e.name === environment)
/** Segment writes make the app forget the admin token (they may change who may do what): looked up again here, so a count is the route's own. */
const warm = () => t.call('GET', '/api/admin/segments')

/** As `racing`, for a write whose read is a transaction of its own (a batch, on Node): `meanwhile` runs once that read is done. */
function afterFirstTransaction(db: Db, meanwhile: () => Promise<unknown>) {
  const state = { raced: false }
  const raced = new Proxy(db, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (key !== 'transaction') return typeof value === 'function' ? value.bind(target) : value
      return async (...args: Parameters<Db['transaction']>) => {
        const result = await target.transaction(...args)
        if (!state.raced) {
          state.raced = true
          await meanwhile()
        }
        return result
      }
    },
  })
  return { db: raced, state }
}

const tester = (): Caller => ({ principal: { kind: 'admin-token', tokenId: 0, name: 'tester', rootRole: 'Admin' }, actor: { createdBy: 'tester', createdByUserId: -1337 }, key: 'tester', now: new Date() })

/** A flag with two strategies in development (the first with a segment), whose state the app knows (it wrote them). */
async function flagWithTwo() {
  const { name } = await createFlag(t)
  const segment = await createSegment(t)
  const first = await addStrategy(t, name, 'development', { name: 'flexibleRollout', title: 'first', segments: [segment.id] })
  const second = await addStrategy(t, name, 'development', { name: 'default', title: 'second' })
  return { name, segment, first, second, base: strategiesOf(name) }
}

describe('strategy writes at the edge', () => {
  it('adds a strategy in one round trip when the app knows the flag, two when it reads it first', async () => {
    const { name } = await createFlag(t)
    const first = await t.call('POST', strategiesOf(name), { body: { name: 'default' } })
    expect(first.status, first.text).toBe(200)
    expect(trips(first)).toEqual({ http: 2, webSocket: 0 })
    const second = await t.call('POST', strategiesOf(name), { body: { name: 'flexibleRollout' } })
    expect(second.status, second.text).toBe(200)
    expect(trips(second)).toEqual({ http: 1, webSocket: 0 })
    expect((await environmentOf(name)).strategies.map((s: any) => [s.id, s.sortOrder])).toEqual([
      [first.body.id, 0],
      [second.body.id, 1],
    ])
    expect((await eventsOf(name)).filter((e) => e.type === 'feature-strategy-add').map((e) => e.data.id)).toEqual([first.body.id, second.body.id])
  })

  it('names unknown segments (400) and writes nothing, without a lock', async () => {
    const { name } = await createFlag(t)
    const before = await eventsOf(name)
    const res = await t.call('POST', strategiesOf(name), { body: { name: 'default', segments: [987654, 987653] } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: 'Unknown segment(s): 987654, 987653' })
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(await eventsOf(name)).toEqual(before)
    expect((await environmentOf(name)).strategies).toEqual([])
  })

  it('adding a disabled strategy to an environment on without an enabled one switches it off in the same statement', async () => {
    const { name } = await createFlag(t)
    const { id } = await addStrategy(t, name, 'development', { name: 'default' })
    await enableFlag(t, name, 'development')
    // Stored on without an enabled strategy, as before the rule (behind the API's back, and the app's memory of the flag).
    await t.query('update feature_strategies set disabled = true where id = $1', [id])
    await t.query('update features set version = version + 1 where name = $1', [name])
    const res = await t.call('POST', strategiesOf(name), { body: { name: 'default', disabled: true } })
    expect(res.status, res.text).toBe(200)
    // What the app knew of the flag is out of date: a failed attempt, then a read and the write.
    expect(trips(res)).toEqual({ http: 3, webSocket: 0 })
    expect((await environmentOf(name)).enabled).toBe(false)
    expect((await eventsOf(name)).slice(-2).map((e) => [e.type, e.environment])).toEqual([
      ['feature-strategy-add', 'development'],
      ['feature-environment-disabled', 'development'],
    ])
  })

  it('replaces a strategy (PUT) in one round trip, with feature-strategy-update and its segments replaced', async () => {
    const { name, first, base } = await flagWithTwo()
    const other = await createSegment(t)
    await warm()
    const res = await t.call('PUT', `${base}/${first.id}`, { body: { name: 'default', title: 'replaced', segments: [other.id] } })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    expect(res.body).toMatchObject({ id: first.id, name: 'default', title: 'replaced', sortOrder: 0, segments: [other.id], featureName: name })
    expect((await t.call('GET', `${base}/${first.id}`)).body).toEqual(res.body)
    expect(await t.query('select segment_id from feature_strategy_segments where strategy_id = $1', [first.id])).toEqual([{ segment_id: other.id }])
    const event = (await eventsOf(name)).at(-1)!
    expect(event).toMatchObject({ type: 'feature-strategy-update', environment: 'development', data: res.body, pre_data: first })
  })

  it('keeps the segments a replaced strategy still names, and adds the new ones', async () => {
    const { first, base, segment } = await flagWithTwo()
    const other = await createSegment(t)
    const res = await t.call('PUT', `${base}/${first.id}`, { body: { name: 'default', segments: [other.id, segment.id] } })
    expect(res.status, res.text).toBe(200)
    expect(res.body.segments).toEqual([segment.id, other.id].sort((a, b) => a - b))
    expect(await t.query('select segment_id from feature_strategy_segments where strategy_id = $1 order by segment_id', [first.id])).toEqual(
      [segment.id, other.id].sort((a, b) => a - b).map((segment_id) => ({ segment_id })),
    )
  })

  it('refuses a replacement naming an unknown segment or an unknown strategy, writing nothing', async () => {
    const { name, first, base } = await flagWithTwo()
    const before = await eventsOf(name)
    const unknownSegment = await t.call('PUT', `${base}/${first.id}`, { body: { name: 'default', segments: [987654] } })
    expect(unknownSegment.status).toBe(400)
    expect(unknownSegment.body.message).toBe('Unknown segment(s): 987654')
    expect(unknownSegment.webSocket).toBe(0)
    const unknownStrategy = await t.call('PUT', `${base}/00000000-0000-0000-0000-000000000000`, { body: { name: 'default' } })
    expect(unknownStrategy.status).toBe(404)
    expect(unknownStrategy.webSocket).toBe(0)
    expect(await eventsOf(name)).toEqual(before)
  })

  it('disabling the last enabled strategy of an enabled environment switches it off in the same round trip', async () => {
    const { name } = await createFlag(t)
    const { id } = await addStrategy(t, name, 'development', { name: 'default' })
    await enableFlag(t, name, 'development')
    const res = await t.call('PUT', `${strategiesOf(name)}/${id}`, { body: { name: 'default', disabled: true } })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    expect((await environmentOf(name)).enabled).toBe(false)
    expect((await eventsOf(name)).slice(-2).map((e) => [e.type, e.data])).toEqual([
      ['feature-strategy-update', res.body],
      ['feature-environment-disabled', { enabled: false }],
    ])
  })

  it('switches off when the last enabled strategy is disabled and moved to another one\'s sort order, then reads the flag again', async () => {
    const { name } = await createFlag(t)
    const { id } = await addStrategy(t, name, 'development', { name: 'default' })
    const other = await addStrategy(t, name, 'development', { name: 'default', disabled: true })
    await enableFlag(t, name, 'development')
    const res = await t.call('PUT', `${strategiesOf(name)}/${id}`, { body: { name: 'default', disabled: true, sortOrder: other.sortOrder } })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    const environment = await environmentOf(name)
    expect(environment.enabled).toBe(false)
    expect(environment.strategies.map((s: any) => s.id)).toEqual([id, other.id])
    // A tie of sort orders goes by creation, which the app does not know: the next write's answer is from a fresh read.
    const next = await t.call('POST', `/api/admin/projects/default/features/${name}/environments/development/on`)
    expect(next.status, next.text).toBe(200)
    expect(next.body.environments.find((e: any) => e.name === 'development').strategies.slice(0, 2).map((s: any) => s.id)).toEqual([id, other.id])
  })

  it('deletes a strategy in one round trip, and switches off an environment it leaves with none', async () => {
    const { name, first, second, base } = await flagWithTwo()
    await enableFlag(t, name, 'development')
    const one = await t.call('DELETE', `${base}/${first.id}`)
    expect(one.status, one.text).toBe(200)
    expect(trips(one)).toEqual({ http: 1, webSocket: 0 })
    expect((await environmentOf(name)).enabled).toBe(true)
    const last = await t.call('DELETE', `${base}/${second.id}`)
    expect(last.status, last.text).toBe(200)
    expect(trips(last)).toEqual({ http: 1, webSocket: 0 })
    expect(await environmentOf(name)).toMatchObject({ enabled: false, strategies: [] })
    expect((await eventsOf(name)).slice(-3).map((e) => [e.type, e.pre_data?.id ?? e.pre_data])).toEqual([
      ['feature-strategy-remove', first.id],
      ['feature-strategy-remove', second.id],
      ['feature-environment-disabled', { enabled: true }],
    ])
    const again = await t.call('DELETE', `${base}/${second.id}`)
    expect(again.status).toBe(404)
    expect(again.webSocket).toBe(0)
  })

  it('sets the sort order in two round trips (the flag and the strategies by creation, then the write), ties by creation', async () => {
    const { name, first, second, base } = await flagWithTwo()
    const third = await addStrategy(t, name, 'development', { name: 'default', title: 'third' })
    // second and third tie at 7: by creation, second first.
    const res = await t.call('POST', `${base}/set-sort-order`, { body: [{ id: third.id, sortOrder: 7 }, { id: second.id.toUpperCase(), sortOrder: 7 }, { id: first.id, sortOrder: 9 }] })
    expect(res.status, res.text).toBe(200)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.body.map((s: any) => [s.id, s.sortOrder])).toEqual([
      [second.id, 7],
      [third.id, 7],
      [first.id, 9],
    ])
    expect((await t.call('GET', base)).body).toEqual(res.body)
    const event = (await eventsOf(name)).at(-1)!
    expect(event.type).toBe('strategy-order-changed')
    expect(event.pre_data).toEqual({ strategyIds: [first.id, second.id, third.id] })
    expect(event.data).toEqual({ strategyIds: res.body.map((s: any) => s.id) })
    const unknown = await t.call('POST', `${base}/set-sort-order`, { body: [{ id: '00000000-0000-0000-0000-000000000000', sortOrder: 1 }] })
    expect(unknown.status).toBe(404)
    expect(unknown.webSocket).toBe(0)
  })

  it('two concurrent replacements of strategies of one flag both land, each event with the state it changed', async () => {
    const { name, first, second, base } = await flagWithTwo()
    const [a, b] = await Promise.all([
      t.call('PUT', `${base}/${first.id}`, { body: { name: 'default', title: 'a' } }),
      t.call('PUT', `${base}/${second.id}`, { body: { name: 'default', title: 'b' } }),
    ])
    expect([a.status, b.status]).toEqual([200, 200])
    expect(a.webSocket + b.webSocket).toBe(0)
    expect((await environmentOf(name)).strategies.map((s: any) => s.title)).toEqual(['a', 'b'])
    const updates = (await eventsOf(name)).filter((e) => e.type === 'feature-strategy-update')
    expect(updates.map((e) => e.data.title).sort()).toEqual(['a', 'b'])
    expect(updates.map((e) => e.pre_data.title).sort()).toEqual(['first', 'second'])
  })

  it('of two concurrent deletions of one strategy, one deletes (its event once) and the other finds it gone', async () => {
    const { name, first, base } = await flagWithTwo()
    const answers = await Promise.all([t.call('DELETE', `${base}/${first.id}`), t.call('DELETE', `${base}/${first.id}`)])
    expect(answers.map((r) => r.status).sort()).toEqual([200, 404])
    expect(answers.every((r) => r.webSocket === 0)).toBe(true)
    expect((await eventsOf(name)).filter((e) => e.type === 'feature-strategy-remove')).toHaveLength(1)
  })

  it('replaces what is there when another change lands between its read and its write', async () => {
    const { name, first, second, base } = await flagWithTwo()
    const race = racing(t.db, () => t.call('PUT', `${base}/${second.id}`, { body: { name: 'default', title: 'meanwhile' } }))
    const target = { projectId: 'default', featureName: name, environment: 'development' }
    const view = await updateFlagStrategy(race.db, tester(), { ...target, strategyId: first.id }, { name: 'default', title: 'raced' })
    expect(race.state.raced).toBe(true)
    expect(view).toMatchObject({ id: first.id, title: 'raced' })
    expect((await environmentOf(name)).strategies.map((s: any) => s.title)).toEqual(['raced', 'meanwhile'])
    const updates = (await eventsOf(name)).filter((e) => e.type === 'feature-strategy-update')
    expect(updates.map((e) => [e.pre_data.title, e.data.title])).toEqual([
      ['second', 'meanwhile'],
      ['first', 'raced'],
    ])
  })

  it('orders what is there when a strategy is added between its read and its write', async () => {
    const { name, first, second, base } = await flagWithTwo()
    // Its two reads are made together: the strategy is added once, after the first.
    let added: Promise<unknown> | undefined
    const race = racing(t.db, () => (added ??= t.call('POST', base, { body: { name: 'default', title: 'late', sortOrder: 0 } })))
    const target = { projectId: 'default', featureName: name, environment: 'development' }
    const after = await setSortOrder(race.db, tester(), target, [{ id: first.id, sortOrder: 5 }])
    expect(race.state.raced).toBe(true)
    expect(after.map((s) => [s.title, s.sortOrder])).toEqual([
      ['late', 0],
      ['second', 1],
      ['first', 5],
    ])
    expect((await t.call('GET', base)).body).toEqual(after)
    const event = (await eventsOf(name)).at(-1)!
    expect(event.type).toBe('strategy-order-changed')
    // The strategy added in between is in what the order was, too.
    expect(event.pre_data).toEqual({ strategyIds: [first.id, after[0]!.id, second.id] })
    expect(event.data).toEqual({ strategyIds: [after[0]!.id, second.id, first.id] })
  })
})

describe('segment writes at the edge', () => {
  it('creates a segment in two round trips (its name, project and id read, then the write), with segment-created', async () => {
    const project = await createProject(t)
    await warm()
    const name = fresh('edge-segment')
    const res = await t.call('POST', '/api/admin/segments', { body: { name, project, description: 'at the edge', constraints: [{ contextName: 'userId', operator: 'IN', values: ['a'] }] } })
    expect(res.status, res.text).toBe(201)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    expect(res.headers.get('location')).toBe(`/api/admin/segments/${res.body.id}`)
    await warm()
    expect((await t.call('GET', `/api/admin/segments/${res.body.id}`)).body).toEqual(res.body)
    const [event] = await segmentEvents(res.body.id)
    expect(event).toMatchObject({ type: 'segment-created', project, pre_data: null })
    const { usedInFeatures: _f, usedInProjects: _p, ...state } = res.body
    expect(event!.data).toEqual(state)
  })

  it('refuses a taken name (409) and an unknown project (400) from its read, in one round trip', async () => {
    const { name } = await createSegment(t)
    await warm()
    const taken = await t.call('POST', '/api/admin/segments', { body: { name, constraints: [] } })
    expect(taken.status).toBe(409)
    expect(trips(taken)).toEqual({ http: 1, webSocket: 0 })
    const noProject = await t.call('POST', '/api/admin/segments', { body: { name: fresh('edge-segment'), project: 'nope', constraints: [] } })
    expect(noProject.status).toBe(400)
    expect(trips(noProject)).toEqual({ http: 1, webSocket: 0 })
  })

  it('of concurrent creations of one name, one creates it and the others are told it is taken', async () => {
    const name = fresh('contended')
    const answers = await Promise.all(Array.from({ length: 4 }, () => t.call('POST', '/api/admin/segments', { body: { name, constraints: [] } })))
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409])
    expect(answers.every((r) => r.webSocket === 0)).toBe(true)
    const id = answers.find((r) => r.status === 201)!.body.id
    expect(await segmentEvents(id)).toHaveLength(1)
  })

  it('updates a segment in two round trips (the segment, its users and the check, then the write), with segment-updated', async () => {
    const segment = await createSegment(t, { description: 'kept' })
    await warm()
    const renamed = fresh('renamed')
    const res = await t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: renamed, constraints: [{ contextName: 'age', operator: 'NUM_GT', value: '17' }] } })
    expect(res.status, res.text).toBe(204)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    await warm()
    const after = (await t.call('GET', `/api/admin/segments/${segment.id}`)).body
    expect(after).toMatchObject({ name: renamed, description: 'kept', project: null, constraints: [{ contextName: 'age', operator: 'NUM_GT', value: '17' }] })
    const event = (await segmentEvents(segment.id)).at(-1)!
    const { usedInFeatures: _f, usedInProjects: _p, ...state } = segment
    expect(event).toMatchObject({ type: 'segment-updated', pre_data: state })
    const { usedInFeatures: _af, usedInProjects: _ap, ...afterState } = after
    expect(event.data).toEqual(afterState)
  })

  it('refuses a move into a project while flags of other projects use it, from its read', async () => {
    const segment = await createSegment(t)
    const { name } = await createFlag(t)
    await addStrategy(t, name, 'development', { name: 'default', segments: [segment.id] })
    const project = await createProject(t)
    await warm()
    const res = await t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segment.name, project, constraints: [] } })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(`${name} in default`)
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
  })

  it('two concurrent updates of one segment both land, the second event starting from the first', async () => {
    const segment = await createSegment(t)
    const [a, b] = await Promise.all(['a', 'b'].map((suffix) => t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: `${segment.name}-${suffix}`, constraints: [] } })))
    expect([a!.status, b!.status]).toEqual([204, 204])
    expect(a!.webSocket + b!.webSocket).toBe(0)
    const updates = (await segmentEvents(segment.id)).filter((e) => e.type === 'segment-updated')
    expect(updates).toHaveLength(2)
    expect(updates[0]!.pre_data.name).toBe(segment.name)
    expect(updates[1]!.pre_data).toEqual(updates[0]!.data)
  })

  it('updates what is there when the segment changes between its read and its write', async () => {
    const segment = await createSegment(t)
    const race = afterFirstTransaction(t.db, () => t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segment.name, description: 'meanwhile', constraints: [] } }))
    await updateSegment(race.db, tester(), segment.id, { name: `${segment.name}-raced`, constraints: [] }, async () => undefined)
    expect(race.state.raced).toBe(true)
    const updates = (await segmentEvents(segment.id)).filter((e) => e.type === 'segment-updated')
    expect(updates.map((e) => [e.pre_data.description, e.data.description, e.data.name])).toEqual([
      [null, 'meanwhile', segment.name],
      ['meanwhile', 'meanwhile', `${segment.name}-raced`],
    ])
  })

  it('deletes an unused segment in two round trips, with segment-deleted', async () => {
    const segment = await createSegment(t)
    await warm()
    const res = await t.call('DELETE', `/api/admin/segments/${segment.id}`)
    expect(res.status, res.text).toBe(204)
    expect(trips(res)).toEqual({ http: 2, webSocket: 0 })
    await warm()
    expect((await t.call('GET', `/api/admin/segments/${segment.id}`)).status).toBe(404)
    const { usedInFeatures: _f, usedInProjects: _p, ...state } = segment
    expect((await segmentEvents(segment.id)).at(-1)).toMatchObject({ type: 'segment-deleted', data: null, pre_data: state })
  })

  it('a deletion and a strategy starting to use the segment at once: either the strategy is refused or the deletion is', async () => {
    const segment = await createSegment(t)
    const { name } = await createFlag(t)
    const [deleted, added] = await Promise.all([t.call('DELETE', `/api/admin/segments/${segment.id}`), t.call('POST', strategiesOf(name), { body: { name: 'default', segments: [segment.id] } })])
    expect(deleted.webSocket + added.webSocket).toBe(0)
    const events = (await segmentEvents(segment.id)).filter((e) => e.type === 'segment-deleted')
    const strategies = (await environmentOf(name)).strategies
    if (deleted.status === 204) {
      expect(added.status).toBe(400)
      expect(events).toHaveLength(1)
      expect(strategies).toEqual([])
    } else {
      expect([deleted.status, added.status]).toEqual([409, 200])
      expect(events).toHaveLength(0)
      expect(strategies.map((s: any) => s.segments)).toEqual([[segment.id]])
    }
  })
})
