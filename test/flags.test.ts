import type { Caller } from '../src/core/principal.js'
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { recordEvents } from '../src/events/store.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createEnvironment, createFlag, createProject, createToken, createUser, enableFlag, fresh, ok, ensureTagType } from './helpers/factories.js'
import { racing } from './helpers/racing.js'
import { markPotentiallyStale } from '../src/feature-types/potentially-stale.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
  // Flags here are tagged with the tag type `team`, which (as in Unleash) must exist first.
  await ensureTagType(t, 'team')
})
afterAll(() => t.close())

const P = '/api/admin/projects/default'
const postFlag = (body: unknown, project = 'default') => t.call('POST', `/api/admin/projects/${project}/features`, { body })
const eventsOf = (name: string) =>
  t.query<{ type: string; environment: string | null; data: any; pre_data: any; tags: any; project: string }>('select * from events where feature_name = $1 order by id', [name])
const snapshot = () =>
  t.query(`select
    (select json_agg(f order by f.name) from features f) as features,
    (select json_agg(fe order by fe.feature_name, fe.environment) from feature_environments fe) as envs,
    (select json_agg(s order by s.id) from feature_strategies s) as strategies,
    (select count(*) from events) as events`)

describe('creating and reading flags', () => {
  it('creates a flag that is off in every environment of its project, with feature-created', async () => {
    const name = fresh('checkout')
    const res = await postFlag({ name, description: 'New checkout', impressionData: true, tags: [{ type: 'team', value: 'payments' }] })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`${P}/features/${name}`)
    expect(res.body).toMatchObject({
      name,
      type: 'release',
      description: 'New checkout',
      project: 'default',
      archived: false,
      stale: false,
      enabled: false,
      impressionData: true,
      favorite: false,
      archivedAt: null,
      tags: [{ type: 'team', value: 'payments' }],
      children: [],
      dependencies: [],
      lifecycle: { stage: 'initial' },
      createdBy: { name: 'test-admin', id: -42 },
    })
    expect(res.body.createdBy.imageUrl).toMatch(/^https:\/\//)
    expect(res.body.environments.map((e: any) => [e.name, e.type, e.enabled, e.hasStrategies])).toEqual([
      ['development', 'development', false, false],
      ['production', 'production', false, false],
    ])
    expect(res.body.collaborators.users).toEqual([expect.objectContaining({ name: 'test-admin' })])
    const events = await eventsOf(name)
    expect(events.map((e) => e.type)).toEqual(['feature-created'])
    expect(events[0]!.data).toMatchObject({ name, type: 'release', description: 'New checkout' })
    expect(events[0]!.tags).toEqual([{ type: 'team', value: 'payments' }])
  })

  it('reads the flag back, and 404s it under another project', async () => {
    const { name } = await createFlag(t)
    const res = await t.call('GET', `${P}/features/${name}`)
    expect(res.status).toBe(200)
    expect(res.body.name).toBe(name)
    const other = await createProject(t)
    const wrong = await t.call('GET', `/api/admin/projects/${other}/features/${name}`)
    expect(wrong.status).toBe(404)
    expect(wrong.body.name).toBe('NotFoundError')
  })

  it("takes every name Unleash takes (what encodeURIComponent leaves unchanged: - _ . ! ~ * ' ( )), and no other", async () => {
    const name = fresh("promo(2024)!*'~")
    const created = await postFlag({ name })
    expect(created.status, created.text).toBe(201)
    // Clients keep these characters unescaped in paths, as encodeURIComponent does.
    expect((await t.call('GET', `${P}/features/${name}`)).body.name).toBe(name)
    expect((await t.call('POST', `${P}/features/${name}/environments/development/strategies`, { body: { name: 'default' } })).status).toBe(200)
    expect((await t.call('POST', `${P}/features/${name}/environments/development/on`)).status).toBe(200)
    const client = (await createToken(t, { type: 'client', environment: 'development' })).secret
    const payload = await t.call('GET', '/api/client/features', { headers: { authorization: client } })
    expect(payload.body.features.find((f: any) => f.name === name)).toMatchObject({ enabled: true })
    for (const bad of ['with space', 'per%cent', 'slash/ed', 'quote"d', 'semi;colon', 'hash#'])
      expect((await postFlag({ name: fresh(bad) })).status, bad).toBe(400)
  })

  it('lists the flags of a project', async () => {
    const project = await createProject(t)
    // Created in the other order than listed: the list is by name.
    const checkout = (await createFlag(t, { name: fresh('checkout') }, project)).name
    const alpha = (await createFlag(t, { name: fresh('alpha'), type: 'experiment' }, project)).name
    const res = await t.call('GET', `/api/admin/projects/${project}/features`)
    expect(res.status).toBe(200)
    expect(res.body.version).toBe(1)
    expect(res.body.features.map((f: any) => f.name)).toEqual([alpha, checkout])
    expect((await t.call('GET', '/api/admin/projects/nope/features')).status).toBe(404)
  })

  it('answers 409 for a name taken in any project', async () => {
    const { name } = await createFlag(t)
    const res = await postFlag({ name }, await createProject(t))
    expect(res.status).toBe(409)
    expect(res.body.name).toBe('NameExistsError')
  })

  it.each([
    ['a name with a space', { name: 'bad name' }],
    ['a name over 100 characters', { name: 'x'.repeat(101) }],
    ['an unknown type', { name: 'typed', type: 'forever' }],
    ['a one-character tag', { name: 'tagged', tags: [{ value: 'x' }] }],
  ])('answers 400 for %s and writes nothing', async (_, body) => {
    const before = await snapshot()
    const res = await postFlag(body)
    expect(res.status, res.text).toBe(400)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for an unknown project', async () => {
    expect((await postFlag({ name: 'orphan' }, 'nope')).status).toBe(404)
  })

  it("enforces the project's naming pattern and flag limit", async () => {
    const strict = await createProject(t)
    await ok(t, 'PUT', `/api/admin/projects/${strict}`, { name: 'Strict', featureLimit: 1, featureNaming: { pattern: 'team-[a-z]+', example: 'team-search' } })
    const bad = await postFlag({ name: 'search' }, strict)
    expect(bad.status).toBe(400)
    expect(bad.body.message).toContain('team-[a-z]+')
    expect(bad.body.message).toContain('team-search')
    expect((await postFlag({ name: 'team-search' }, strict)).status).toBe(201)
    const over = await postFlag({ name: 'team-more' }, strict)
    expect(over.status).toBe(400)
    expect(over.body.message).toContain('limit')
  })

  it('holds the flag limit under concurrent creations of different names', async () => {
    const limited = await createProject(t)
    await ok(t, 'PUT', `/api/admin/projects/${limited}`, { name: 'Limited', featureLimit: 3 })
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => postFlag({ name: fresh(`limited-${i}`) }, limited)))
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 400, 400, 400, 400, 400, 400, 400])
    expect(await t.query('select count(*)::int as n from features where project = $1', [limited])).toEqual([{ n: 3 }])
    expect(await t.query(`select count(*)::int as n from events where project = $1 and type = 'feature-created'`, [limited])).toEqual([{ n: 3 }])
  })

  it('gives new project environments to existing flags', async () => {
    const project = await createProject(t)
    const { name } = await createFlag(t, {}, project)
    const staging = (await createEnvironment(t, { type: 'preproduction', sortOrder: 150 })).name
    await ok(t, 'POST', `/api/admin/projects/${project}/environments`, { environment: staging })
    const res = await t.call('GET', `/api/admin/projects/${project}/features/${name}`)
    expect(res.body.environments.map((e: any) => e.name)).toEqual(['development', staging, 'production'])
  })

  it('creates exactly one of 50 concurrent creations of one name', async () => {
    const name = fresh('contended')
    const results = await Promise.all(Array.from({ length: 50 }, () => postFlag({ name })))
    expect(results.filter((r) => r.status === 201)).toHaveLength(1)
    expect(results.filter((r) => r.status === 409)).toHaveLength(49)
    expect((await eventsOf(name)).filter((e) => e.type === 'feature-created')).toHaveLength(1)
  })
})

describe('switching flags on and off (operation 1)', () => {
  let alpha: string
  beforeEach(async () => {
    alpha = (await createFlag(t, { name: fresh('alpha'), type: 'experiment' })).name
  })
  const on = (env: string, name = alpha) => t.call('POST', `${P}/features/${name}/environments/${env}/on`)
  const off = (env: string, name = alpha, body?: unknown) => t.call('POST', `${P}/features/${name}/environments/${env}/off`, { body })

  it('enabling adds a 100% flexibleRollout when there is no strategy, and moves the lifecycle to pre-live', async () => {
    const res = await on('development')
    expect(res.status, res.text).toBe(200)
    const dev = res.body.environments.find((e: any) => e.name === 'development')
    expect(dev.enabled).toBe(true)
    expect(dev.strategies).toEqual([
      expect.objectContaining({ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: alpha }, disabled: false, constraints: [], segments: [] }),
    ])
    expect(res.body.lifecycle.stage).toBe('pre-live')
    const types = (await eventsOf(alpha)).map((e) => e.type)
    expect(types.slice(-2)).toEqual(['feature-strategy-add', 'feature-environment-enabled'])
  })

  it('enabling in production makes the flag live', async () => {
    await enableFlag(t, alpha, 'development')
    expect((await on('production')).body.lifecycle.stage).toBe('live')
  })

  it('records no event when the state does not change', async () => {
    await enableFlag(t, alpha, 'development')
    const before = (await eventsOf(alpha)).length
    expect((await on('development')).status).toBe(200)
    expect((await eventsOf(alpha)).length).toBe(before)
  })

  it('disables and returns the updated flag, with feature-environment-disabled', async () => {
    await enableFlag(t, alpha, 'development')
    const res = await off('development')
    expect(res.status).toBe(200)
    expect(res.body.environments.find((e: any) => e.name === 'development').enabled).toBe(false)
    const last = (await eventsOf(alpha)).at(-1)!
    expect(last).toMatchObject({ type: 'feature-environment-disabled', environment: 'development', data: { enabled: false }, pre_data: { enabled: true } })
    const again = (await eventsOf(alpha)).length
    await off('development')
    expect((await eventsOf(alpha)).length).toBe(again)
  })

  it('answers 404 for an unknown project, flag or environment, or a flag of another project', async () => {
    const other = await createProject(t)
    expect((await t.call('POST', `/api/admin/projects/nope/features/${alpha}/environments/development/off`)).status).toBe(404)
    expect((await off('development', 'nope')).status).toBe(404)
    expect((await off('moon')).status).toBe(404)
    expect((await t.call('POST', `/api/admin/projects/${other}/features/${alpha}/environments/development/off`)).status).toBe(404)
  })

  it('answers 400 for a request body (the operation takes none)', async () => {
    const res = await off('development', alpha, { enabled: true })
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })
})

describe('JSON Patch of a flag (operation 3)', () => {
  let checkout: string
  beforeEach(async () => {
    checkout = (await createFlag(t, { name: fresh('checkout'), description: 'New checkout', impressionData: true, tags: [{ type: 'team', value: 'payments' }] })).name
  })
  const patch = (body: unknown, name = checkout) => t.call('PATCH', `${P}/features/${name}`, { body })

  it('replaces description, type, stale and impressionData with their events', async () => {
    const res = await patch([
      { op: 'replace', path: '/description', value: 'Checkout, second edition' },
      { op: 'replace', path: '/type', value: 'experiment' },
      { op: 'replace', path: '/stale', value: true },
      { op: 'replace', path: '/impressionData', value: false },
    ])
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ description: 'Checkout, second edition', type: 'experiment', stale: true, impressionData: false })
    const events = (await eventsOf(checkout)).slice(-3)
    expect(events.map((e) => e.type)).toEqual(['feature-metadata-updated', 'feature-stale-on', 'feature-type-updated'])
    expect(events[0]!.pre_data).toMatchObject({ description: 'New checkout', type: 'release', stale: false })
    expect(events[0]!.data).toMatchObject({ description: 'Checkout, second edition', type: 'experiment', stale: true })
    expect(events[0]!.tags).toEqual([{ type: 'team', value: 'payments' }])
  })

  it('supports test, remove, add, copy and move', async () => {
    await ok(t, 'PATCH', `${P}/features/${checkout}`, [{ op: 'replace', path: '/stale', value: true }])
    const res = await patch([
      { op: 'test', path: '/stale', value: true },
      { op: 'replace', path: '/stale', value: false },
      { op: 'copy', from: '/name', path: '/description' },
    ])
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ stale: false, description: checkout })
    expect((await eventsOf(checkout)).at(-1)!.type).toBe('feature-stale-off')
    const removed = await patch([{ op: 'remove', path: '/description' }])
    expect(removed.status).toBe(400)
  })

  it.each([
    ['a name change', [{ op: 'replace', path: '/name', value: 'renamed' }], /name/],
    ['a project change', [{ op: 'replace', path: '/project', value: 'other' }], /project/],
    ['a variants path', [{ op: 'add', path: '/variants/0', value: { name: 'a' } }], /variants/],
    ['an unknown op', [{ op: 'merge', path: '/description', value: 'x' }], /op/],
    ['replace without value', [{ op: 'replace', path: '/description' }], /value/],
    ['move without from', [{ op: 'move', path: '/description' }], /from/],
    ['a path that does not exist', [{ op: 'replace', path: '/nope', value: 1 }], /cannot be applied/],
    ['a failing test', [{ op: 'test', path: '/type', value: 'experiment' }, { op: 'replace', path: '/description', value: 'x' }], /test/],
    ['an invalid result', [{ op: 'replace', path: '/type', value: 'forever' }], /type/],
    ['an unknown field', [{ op: 'add', path: '/owner', value: 'me' }], /owner|Unrecognized/i],
    ['a body that is not an array', { op: 'replace', path: '/description', value: 'x' }, /expected array/i],
  ])('refuses %s with 400 and changes nothing', async (_, body, message) => {
    const before = await snapshot()
    const res = await patch(body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.message).toMatch(message)
    expect(await snapshot()).toEqual(before)
  })

  it('answers 415 for a body that is not JSON', async () => {
    const res = await t.call('PATCH', `${P}/features/${checkout}`, { body: 'description=x', headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(415)
    expect(res.body.name).toBe('ContentTypeerror')
  })

  it('answers 404 for a flag of another project', async () => {
    const other = await createProject(t)
    expect((await t.call('PATCH', `/api/admin/projects/${other}/features/${checkout}`, { body: [] })).status).toBe(404)
  })

  it('applies 100 concurrent patches, each with its own event whose preData is the previous state', async () => {
    const { name: busy } = await createFlag(t)
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => patch([{ op: 'replace', path: '/description', value: `v${i}` }], busy)))
    expect(results.every((r) => r.status === 200)).toBe(true)
    const events = (await eventsOf(busy)).filter((e) => e.type === 'feature-metadata-updated')
    expect(events).toHaveLength(100)
    for (let i = 1; i < events.length; i++) expect(events[i]!.pre_data.description).toBe(events[i - 1]!.data.description)
    expect(new Set(events.map((e) => e.data.description)).size).toBe(100)
  })
})

describe('archive and revive', () => {
  /** A flag switched on in development, then archived. */
  async function archivedFlag() {
    const { name } = await createFlag(t)
    await enableFlag(t, name, 'development')
    expect((await t.call('DELETE', `${P}/features/${name}`)).status).toBe(202)
    return name
  }

  it('archives with feature-archived; the flag is no longer listed and operations 1, 3, 4 answer 404', async () => {
    const { name } = await createFlag(t)
    await enableFlag(t, name, 'development')
    const res = await t.call('DELETE', `${P}/features/${name}`)
    expect(res.status).toBe(202)
    expect((await eventsOf(name)).at(-1)!.type).toBe('feature-archived')
    const list = await t.call('GET', `${P}/features`)
    expect(list.body.features.map((f: any) => f.name)).not.toContain(name)
    const read = await t.call('GET', `${P}/features/${name}`)
    expect(read.body).toMatchObject({ archived: true, lifecycle: { stage: 'archived' } })
    expect((await t.call('POST', `${P}/features/${name}/environments/development/off`)).status).toBe(404)
    expect((await t.call('PATCH', `${P}/features/${name}`, { body: [] })).status).toBe(404)
    expect((await t.call('PATCH', `${P}/features/${name}/variants`, { body: [] })).status).toBe(404)
    expect((await postFlag({ name })).status).toBe(409)
  })

  it('archives through a patch of /archived', async () => {
    const { name } = await createFlag(t)
    const res = await t.call('PATCH', `${P}/features/${name}`, { body: [{ op: 'replace', path: '/archived', value: true }] })
    expect(res.status).toBe(200)
    expect(res.body.archived).toBe(true)
    expect((await eventsOf(name)).at(-1)!.type).toBe('feature-archived')
  })

  it('revives with every environment off and feature-revived', async () => {
    const name = await archivedFlag()
    const res = await t.call('POST', `/api/admin/archive/revive/${name}`)
    expect(res.status).toBe(200)
    const flag = (await t.call('GET', `${P}/features/${name}`)).body
    expect(flag.archived).toBe(false)
    expect(flag.environments.every((e: any) => !e.enabled)).toBe(true)
    expect(flag.lifecycle.stage).toBe('pre-live')
    const types = (await eventsOf(name)).map((e) => e.type)
    expect(types.slice(-2)).toEqual(['feature-revived', 'feature-environment-disabled'])
    expect((await t.call('POST', `/api/admin/archive/revive/${name}`)).status).toBe(404)
  })
})

describe('collaborators', () => {
  // What the flag read computed before collaborators were kept in their own table: the authors of the
  // flag's events, grouped (NULL user ids alike), latest change first.
  const aggregatedFromEvents = (name: string) =>
    t.query<{ id: number | null; name: string }>(
      `select created_by_user_id as id, created_by as name from events where feature_name = $1
       group by created_by, created_by_user_id order by max(id) desc`,
      [name],
    )
  const table = () =>
    t.query('select feature_name, created_by, created_by_user_id, latest_event_id::int from feature_collaborators order by feature_name, latest_event_id')
  const aggregatedTable = () =>
    t.query(`select feature_name, created_by, created_by_user_id, max(id)::int as latest_event_id from events where feature_name is not null
      group by feature_name, created_by, created_by_user_id order by feature_name, latest_event_id`)
  // Raw SQL: the table as a database migrated before it existed would have it, which no request can make.
  async function rebuildCollaboratorsAsTheMigrationDoes() {
    const migration = await readFile('schema/migrations/0010_feature_collaborators.sql', 'utf8')
    const backfill = migration.split('--> statement-breakpoint').find((s) => /insert into/i.test(s))!
    await t.query('delete from feature_collaborators')
    await t.query(backfill)
  }

  it('lists each author once, latest change first, after many changes by users, tokens and the system', async () => {
    const alice = await createUser(t, 'Admin')
    const bob = await createUser(t, 'Admin')
    const { name: shared } = await createFlag(t)
    const F = `${P}/features/${shared}`
    const setDescription = (call: TestApp['call'], text: string) => call('PATCH', F, { body: [{ op: 'replace', path: '/description', value: text }] })
    for (let i = 0; i < 20; i++) {
      await setDescription(alice.call, `alice ${i}`)
      await setDescription(bob.call, `bob ${i}`)
      // One request, several events of one flag by one author: one collaborator row.
      await alice.call('PATCH', `${F}/variants`, { body: [{ op: 'add', path: '/-', value: { name: `v${i}` } }] })
    }
    await setDescription(t.call, 'token again')
    // A name shared by a user and the system stays two collaborators.
    await recordEvents(t.db, { createdBy: alice.username, createdByUserId: -1337 }, new Date(), [
      { type: 'feature-updated', featureName: shared, project: 'default' },
      { type: 'feature-updated', featureName: shared, project: 'default' },
    ])
    await setDescription(bob.call, 'bob last')

    const res = await t.call('GET', F)
    expect(res.body.collaborators.users.map((u: any) => ({ id: u.id, name: u.name }))).toEqual([
      { id: bob.id, name: bob.username },
      { id: -1337, name: alice.username },
      { id: -42, name: 'test-admin' },
      { id: alice.id, name: alice.username },
    ])
    expect(res.body.collaborators.users.every((u: any) => /^https:\/\//.test(u.imageUrl))).toBe(true)
    const expected = (await aggregatedFromEvents(shared)).map((c) => ({ id: c.id ?? -1337, name: c.name }))
    expect(res.body.collaborators.users.map((u: any) => ({ id: u.id, name: u.name }))).toEqual(expected)
    // The write response reads the flag in its own transaction, after its events.
    const written = await setDescription(alice.call, 'alice last')
    expect(written.body.collaborators.users[0]).toMatchObject({ id: alice.id, name: alice.username })
    expect(written.body.collaborators.users).toHaveLength(4)
  })

  it('stays what aggregating every event gives, and the migration backfill rebuilds exactly that', async () => {
    const user = await createUser(t, 'Admin')
    const { name } = await createFlag(t)
    await ok(user, 'PATCH', `${P}/features/${name}`, [{ op: 'replace', path: '/description', value: 'by a user' }])
    await recordEvents(t.db, { createdBy: 'system', createdByUserId: -1337 }, new Date(), [{ type: 'feature-updated', featureName: name, project: 'default' }])
    await ok(t, 'PATCH', `${P}/features/${name}`, [{ op: 'replace', path: '/description', value: 'by the token' }])
    const maintained = await table()
    expect(maintained.length).toBeGreaterThan(0)
    expect(maintained).toEqual(await aggregatedTable())
    await rebuildCollaboratorsAsTheMigrationDoes()
    expect(await table()).toEqual(maintained)
  })

  it('no index holds latest_event_id, so the update every write makes of it adds no index entry (a HOT update)', async () => {
    const indexes = await t.query<{ indexdef: string }>(`select indexdef from pg_indexes where tablename = 'feature_collaborators'`)
    expect(indexes.length).toBeGreaterThan(0)
    expect(indexes.filter((i) => /latest_event_id/.test(i.indexdef))).toEqual([])
  })
})

describe('potential staleness', () => {
  it('the job marks flags older than their type allows, never kill switches, and not flags marked stale', async () => {
    let now = new Date('2026-01-01T00:00:00Z')
    const s = await createTestApp({ now: () => now })
    try {
      for (const [name, type] of [['rel', 'release'], ['ops', 'operational'], ['kill', 'kill-switch'], ['marked', 'experiment']]) {
        await s.call('POST', '/api/admin/projects/default/features', { body: { name, type } })
      }
      await s.call('PATCH', '/api/admin/projects/default/features/marked', { body: [{ op: 'replace', path: '/stale', value: true }] })
      const read = async () => Object.fromEntries((await s.call('GET', '/api/admin/projects/default/features')).body.features.map((f: any) => [f.name, f.potentiallyStale]))
      // The potentially-stale job marks them (test/feature-types.test.ts tests it further).
      now = new Date('2026-01-08T00:00:01Z')
      await markPotentiallyStale(s.db, now)
      expect(await read()).toEqual({ rel: false, ops: true, kill: false, marked: false })
      now = new Date('2026-02-10T00:00:01Z')
      await markPotentiallyStale(s.db, now)
      expect(await read()).toEqual({ rel: true, ops: true, kill: false, marked: false })
    } finally {
      await s.close()
    }
  })
})

describe('operations 1 and 3 written optimistically', () => {
  // A write reads the flag without a lock and writes only if it is still at the version read; otherwise it
  // takes the flag's lock and changes what is there. Its answer is the flag read, changed.
  const actor = { createdBy: 'tester', createdByUserId: -1337 }
  const tester = (): Caller => ({ principal: { kind: 'admin-token', tokenId: 0, name: 'tester', rootRole: 'Admin' }, actor, key: 'tester', now: new Date() })
  const F = (name: string) => `${P}/features/${name}`

  it('answers with the flag exactly as a read right after shows it', async () => {
    const alice = await createUser(t, 'Admin')
    const { name: answered } = await createFlag(t, { name: fresh('answered'), tags: [{ type: 'team', value: 'web' }] })
    const sdk = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret
    /** An SDK reports it saw the flag, and the report is folded: the flag's lastSeenAt moves. */
    const seenBySdk = async () => {
      const now = new Date().toISOString()
      const res = await t.call('POST', '/api/client/metrics', { token: sdk, body: { appName: 'answering-app', bucket: { start: now, stop: now, toggles: { [answered]: { yes: 1, no: 0 } } } } })
      expect(res.status, res.text).toBe(202)
      await t.app.idle()
      const dev = (await t.call('GET', F(answered))).body.environments.find((e: any) => e.name === 'development')
      expect(dev.lastSeenAt, 'the report was folded').not.toBeNull()
    }
    expect((await t.call('POST', `${F(answered)}/environments/development/on`)).status).toBe(200)
    expect((await alice.call('POST', `${F(answered)}/favorites`)).status).toBe(200)
    const steps: [string, string, unknown?][] = [
      ['POST', `${F(answered)}/environments/development/off`],
      ['POST', `${F(answered)}/environments/development/on`],
      ['PATCH', F(answered), [{ op: 'replace', path: '/description', value: 'by alice' }, { op: 'replace', path: '/stale', value: true }]],
      ['PATCH', F(answered), [{ op: 'replace', path: '/type', value: 'kill-switch' }, { op: 'replace', path: '/stale', value: false }]],
    ]
    // Between the writes, what the flag's version does not pin down changes: favorites, when SDKs last saw it,
    // a child depending on it and no longer, a change request naming it.
    const { name: child } = await createFlag(t)
    const meanwhile = [
      seenBySdk,
      () => alice.call('DELETE', `${F(answered)}/favorites`),
      () => t.call('POST', `${F(child)}/dependencies`, { body: { feature: answered } }),
      () => t.call('DELETE', `${F(child)}/dependencies/${answered}`),
    ]
    for (const [i, [method, path, body]] of steps.entries()) {
      await meanwhile[i]!()
      const events = (await eventsOf(answered)).length
      const written = await alice.call(method, path, { body })
      expect(written.status, written.text).toBe(200)
      expect((await eventsOf(answered)).length).toBeGreaterThan(events)
      expect(written.body).toEqual((await alice.call('GET', F(answered))).body)
      expect(written.body.collaborators.users[0]).toMatchObject({ id: alice.id, name: alice.username })
    }
    // The token that created the flag and switched it on stays a collaborator, after alice.
    expect((await alice.call('GET', F(answered))).body.collaborators.users.map((u: any) => u.name)).toEqual([alice.username, 'test-admin'])
  })

  it('writes a flag the app knows in one statement, and reads it again when another app changed it', async () => {
    const { createApp } = await import('../src/app.js')
    const { PgliteSession } = await import('drizzle-orm/pglite')
    // Two apps on one database, like two processes (no background work: only the requests' statements count).
    const [mine, other] = [createApp({ db: () => t.db, background: () => {} }), createApp({ db: () => t.db, background: () => {} })]
    const request = async (app: typeof mine, method: string, path: string, body?: unknown, status = 200) => {
      const headers: Record<string, string> = { authorization: t.adminToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
      const res = await app.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      expect(res.status, await res.clone().text()).toBe(status)
      return res.json()
    }
    const statements = vi.spyOn(PgliteSession.prototype, 'prepareQuery')
    const transactions = vi.spyOn(PgliteSession.prototype, 'transaction')
    const counted = async (write: () => Promise<unknown>) => {
      statements.mockClear()
      transactions.mockClear()
      await write()
      return { statements: statements.mock.calls.length, transactions: transactions.mock.calls.length }
    }
    try {
      await createFlag(t, { name: 'known' })
      // The spies count every app's statements: the test app's deliveries after creating the flag must be done first.
      await t.app.idle()
      await request(mine, 'POST', `${F('known')}/environments/development/on`)
      await request(mine, 'POST', `${F('known')}/environments/development/off`)
      // The app knows the flag now: each write is its one statement, no transaction.
      for (const [method, path, body] of [
        ['POST', `${F('known')}/environments/development/on`],
        ['POST', `${F('known')}/environments/development/strategies`, { name: 'userWithId', parameters: { userIds: 'ann,bob' } }],
        ['PATCH', F('known'), [{ op: 'replace', path: '/description', value: 'mine' }]],
        ['PATCH', `${F('known')}/variants`, [{ op: 'add', path: '/-', value: { name: 'a' } }]],
        ['PATCH', `${F('known')}/environments/production/variants`, [{ op: 'add', path: '/-', value: { name: 'b' } }]],
        ['POST', `${F('known')}/environments/development/off`],
      ] as [string, string, unknown?][]) {
        expect(await counted(() => request(mine, method, path, body)), `${method} ${path}`).toEqual({ statements: 1, transactions: 0 })
      }
      // Another app changes it: the next write finds its state out of date, reads the flag and writes from that.
      await request(other, 'PATCH', F('known'), [{ op: 'replace', path: '/description', value: 'theirs' }])
      await request(other, 'POST', '/api/admin/features/known/tags', { type: 'simple', value: 'theirs' }, 201)
      const written = await counted(async () => expect(await request(mine, 'PATCH', F('known'), [{ op: 'replace', path: '/type', value: 'operational' }])).toMatchObject({ description: 'theirs', type: 'operational' }))
      expect(written).toEqual({ statements: 3, transactions: 0 })
      expect((await eventsOf('known')).filter((e) => e.type === 'feature-metadata-updated').at(-1)).toMatchObject({ pre_data: { description: 'theirs', type: 'release' }, data: { description: 'theirs', type: 'operational' }, tags: [{ type: 'simple', value: 'theirs' }] })
      expect((await t.call('GET', F('known'))).body).toMatchObject({ description: 'theirs', type: 'operational' })
    } finally {
      statements.mockRestore()
      transactions.mockRestore()
      await Promise.all([mine.idle(), other.idle()])
    }
  })

  it("switches on with the lifecycle's move and the default strategy in one statement, and adds the default as it is when written", async () => {
    const { createApp } = await import('../src/app.js')
    const { PgliteSession } = await import('drizzle-orm/pglite')
    // Principals remembered for a minute: the admin token is looked up once (the warm-up), not within the counted writes.
    const [mine, other] = [createApp({ db: () => t.db, background: () => {}, principalTtlMs: 60_000 }), createApp({ db: () => t.db, background: () => {} })]
    const project = await createProject(t)
    const flagPath = (name: string) => `/api/admin/projects/${project}/features/${name}`
    const request = async (app: typeof mine, method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = { authorization: t.adminToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }
      const res = await app.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      expect(res.status, await res.clone().text()).toBe(200)
      return (await res.json()) as any
    }
    const statements = vi.spyOn(PgliteSession.prototype, 'prepareQuery')
    const transactions = vi.spyOn(PgliteSession.prototype, 'transaction')
    const counted = async <T>(write: () => Promise<T>) => {
      statements.mockClear()
      transactions.mockClear()
      const answer = await write()
      return { answer, statements: statements.mock.calls.length, transactions: transactions.mock.calls.length }
    }
    try {
      const { name } = await createFlag(t, {}, project)
      await request(mine, 'GET', flagPath(name))
      // Admin writes ask whether maintenance mode is on, read at most every few seconds: known before the counted writes.
      await request(mine, 'GET', '/api/admin/maintenance')
      await t.app.idle()
      // Unknown to the app: read, then one statement switching on, adding the default strategy and moving the lifecycle.
      const first = await counted(() => request(mine, 'POST', `${flagPath(name)}/environments/development/on`))
      expect([first.statements, first.transactions]).toEqual([2, 0])
      expect(first.answer).toEqual((await t.call('GET', flagPath(name))).body)
      expect(first.answer).toMatchObject({ lifecycle: { stage: 'pre-live' }, environments: expect.arrayContaining([expect.objectContaining({ name: 'development', enabled: true, hasEnabledStrategies: true })]) })
      const dev = first.answer.environments.find((e: { name: string }) => e.name === 'development')
      expect(dev.strategies).toMatchObject([{ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: name }, sortOrder: 0 }])
      expect((await eventsOf(name)).map((e) => e.type)).toEqual(['feature-created', 'feature-strategy-add', 'feature-environment-enabled'])
      expect((await eventsOf(name))[1]!.data).toEqual(dev.strategies[0])

      // Known to the app, at the version it wrote: the project's default strategy changes through another app
      // (it moves no flag's version), so the version check's look at it fails, and the flag is read again.
      const { name: second } = await createFlag(t, {}, project)
      await request(mine, 'PATCH', flagPath(second), [{ op: 'replace', path: '/description', value: 'known' }])
      await request(other, 'PUT', `/api/admin/projects/${project}/environments/development/default-strategy`, { name: 'userWithId', parameters: { userIds: 'ann' } })
      await request(mine, 'GET', '/api/admin/maintenance')
      const written = await counted(() => request(mine, 'POST', `${flagPath(second)}/environments/development/on`))
      expect([written.statements, written.transactions]).toEqual([3, 0])
      expect(written.answer).toEqual((await t.call('GET', flagPath(second))).body)
      expect(written.answer.environments.find((e: { name: string }) => e.name === 'development').strategies).toMatchObject([{ name: 'userWithId', parameters: { userIds: 'ann' } }])
    } finally {
      statements.mockRestore()
      transactions.mockRestore()
      await Promise.all([mine.idle(), other.idle()])
    }
  })

  it('switches what is there when another change lands between its read and its write (operation 1)', async () => {
    const { setEnvironmentEnabled } = await import('../src/flags/store.js')
    await createFlag(t, { name: 'contested' })
    expect((await t.call('POST', `${F('contested')}/environments/development/on`)).status).toBe(200)
    const target = { projectId: 'default', featureName: 'contested', environment: 'development' }
    // Both switch it off: the event is written once, by the one that got there first.
    const race = racing(t.db, () => t.call('POST', `${F('contested')}/environments/development/off`))
    const feature = await setEnvironmentEnabled(race.db, tester(), { ...target, enabled: false })
    expect(race.state.raced).toBe(true)
    expect(feature.environments.find((e) => e.name === 'development')!.enabled).toBe(false)
    expect((await eventsOf('contested')).filter((e) => e.type === 'feature-environment-disabled')).toHaveLength(1)

    // Its only strategy is removed in between: switching on adds the default strategy after all.
    const [strategy] = (await t.call('GET', F('contested'))).body.environments.find((e: any) => e.name === 'development').strategies
    const removing = racing(t.db, () => t.call('DELETE', `${F('contested')}/environments/development/strategies/${strategy.id}`))
    const enabled = await setEnvironmentEnabled(removing.db, tester(), { ...target, enabled: true })
    expect(removing.state.raced).toBe(true)
    const dev = enabled.environments.find((e) => e.name === 'development')!
    expect(dev).toMatchObject({ enabled: true, hasEnabledStrategies: true })
    expect(dev.strategies).toEqual([expect.objectContaining({ name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default', groupId: 'contested' } })])
    expect((await eventsOf('contested')).slice(-3).map((e) => e.type)).toEqual(['feature-strategy-remove', 'feature-strategy-add', 'feature-environment-enabled'])

    // A tag added in between is on the event.
    const tagging = racing(t.db, () => t.call('POST', '/api/admin/features/contested/tags', { body: { type: 'simple', value: 'late' } }))
    await setEnvironmentEnabled(tagging.db, tester(), { ...target, enabled: false })
    expect(tagging.state.raced).toBe(true)
    expect((await eventsOf('contested')).at(-1)).toMatchObject({ type: 'feature-environment-disabled', tags: [{ type: 'simple', value: 'late' }] })
  })

  it('writes neither the change nor its events when the guard finds the flag changed', async () => {
    await createFlag(t, { name: 'guarded', description: 'as read' })
    const before = await t.query('select count(*)::int as n from events')
    const { features } = await import('../schema/index.js')
    const { and, eq } = await import('drizzle-orm')
    const update = t.db.update(features).set({ description: 'lost' }).where(and(eq(features.name, 'guarded'), eq(features.description, 'not what is there'))).returning({ name: features.name })
    const written = await recordEvents(t.db, actor, new Date(), [{ type: 'feature-metadata-updated', project: 'default', featureName: 'guarded', data: {}, preData: {} }], { alongside: [update], guarded: true })
    expect(written).toBe(0)
    expect(await t.query('select count(*)::int as n from events')).toEqual(before)
    expect((await t.query<{ description: string }>("select description from features where name = 'guarded'"))[0]!.description).toBe('as read')
  })

  it('patches what is there when another change lands between its read and its write', async () => {
    const { patchFeature } = await import('../src/flags/store.js')
    await createFlag(t, { name: 'raced', description: 'first' })
    const race = racing(t.db, () => t.call('PATCH', '/api/admin/projects/default/features/raced', { body: [{ op: 'replace', path: '/description', value: 'second' }] }))
    const feature = await patchFeature(race.db, tester(), { projectId: 'default', featureName: 'raced', operations: [{ op: 'replace', path: '/type', value: 'operational' }] })
    expect(race.state.raced).toBe(true)
    expect(feature).toMatchObject({ description: 'second', type: 'operational' })
    const events = await t.query<{ type: string; data: any; pre_data: any }>("select type, data, pre_data from events where feature_name = 'raced' and type = 'feature-metadata-updated' order by id")
    expect(events.map((e) => [e.pre_data.description, e.data.description, e.data.type])).toEqual([
      ['first', 'second', 'release'],
      ['second', 'second', 'operational'],
    ])
  })

  it('gives its events the tags the flag has when a tag is added between its read and its write', async () => {
    const { patchFeature } = await import('../src/flags/store.js')
    await createFlag(t, { name: 'retagged' })
    const race = racing(t.db, () => t.call('POST', '/api/admin/features/retagged/tags', { body: { type: 'simple', value: 'late' } }))
    await patchFeature(race.db, tester(), { projectId: 'default', featureName: 'retagged', operations: [{ op: 'replace', path: '/description', value: 'after the tag' }] })
    expect(race.state.raced).toBe(true)
    const [event] = await t.query<{ tags: unknown }>("select tags from events where feature_name = 'retagged' and type = 'feature-metadata-updated'")
    expect(event!.tags).toEqual([{ type: 'simple', value: 'late' }])
  })
})
