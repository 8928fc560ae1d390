import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, enableFlag, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let now = new Date('2025-03-01T10:00:00.000Z')
const tick = () => {
  now = new Date(now.getTime() + 60_000)
  return now.toISOString()
}

let t: TestApp
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp({ now: () => now })
  viewer = await createSignedInUser(t, 'vera', 'Viewer')
})
afterAll(() => t.close())

const P = '/api/admin/projects/default'
const lifecyclePath = (name: string, project = 'default') => `/api/admin/projects/${project}/features/${name}/lifecycle`
const getLifecycle = (name: string, project?: string) => t.call('GET', lifecyclePath(name, project))
const complete = (name: string, body: unknown, project?: string) => t.call('POST', `${lifecyclePath(name, project)}/complete`, { body })
const uncomplete = (name: string, project?: string) => t.call('POST', `${lifecyclePath(name, project)}/uncomplete`)
const stageOf = async (name: string) => (await t.call('GET', `${P}/features/${name}`)).body.lifecycle.stage
const eventsOf = (name: string) => t.query<{ type: string; project: string; data: any; pre_data: any; tags: any }>('select * from events where feature_name = $1 order by id', [name])
const snapshot = () =>
  t.query(`select
    (select json_agg(l order by l.feature_name, l.stage) from feature_lifecycles l) as lifecycles,
    (select count(*) from events) as events`)

/**
 * A fresh flag tagged `life`, taken (a minute apart) through the stages up to `until`: live is switched on in
 * development then production; completed is kept with variant1. Answers its name and when it entered each stage.
 */
async function flagThrough(until: 'initial' | 'live' | 'completed' = 'initial') {
  const times: Record<string, string> = { created: now.toISOString() }
  const { name } = await createFlag(t, { name: fresh('journey'), tags: [{ value: 'life' }] })
  if (until === 'initial') return { journey: name as string, times }
  times.preLive = tick()
  await enableFlag(t, name, 'development')
  times.live = tick()
  await enableFlag(t, name, 'production')
  if (until === 'completed') {
    times.completed = tick()
    await ok(t, 'POST', `${lifecyclePath(name)}/complete`, { status: 'kept', statusValue: 'variant1' })
  }
  return { journey: name as string, times }
}

/** A fresh flag archived a minute after it was created. */
async function retiredFlag() {
  const { name } = await createFlag(t, { name: fresh('retired') })
  tick()
  expect((await t.call('DELETE', `${P}/features/${name}`)).status).toBe(202)
  return name as string
}

describe('reading the lifecycle', () => {
  it('starts in the initial stage at creation', async () => {
    const created = now.toISOString()
    const journey = fresh('journey')
    expect((await t.call('POST', `${P}/features`, { body: { name: journey, tags: [{ value: 'life' }] } })).status).toBe(201)
    const res = await getLifecycle(journey)
    expect(res.status).toBe(200)
    expect(res.body).toEqual([{ stage: 'initial', enteredStageAt: created }])
  })

  it('lists the stages oldest first as the flag is enabled', async () => {
    const { journey, times } = await flagThrough('initial')
    times.preLive = tick()
    await t.call('POST', `${P}/features/${journey}/environments/development/on`)
    times.live = tick()
    await t.call('POST', `${P}/features/${journey}/environments/production/on`)
    expect((await getLifecycle(journey)).body).toEqual([
      { stage: 'initial', enteredStageAt: times.created },
      { stage: 'pre-live', enteredStageAt: times.preLive },
      { stage: 'live', enteredStageAt: times.live },
    ])
  })

  it('answers 404 for an unknown flag, a flag of another project, or an unknown project', async () => {
    const { journey } = await flagThrough('live')
    const other = await createProject(t)
    for (const [name, project] of [['nope', 'default'], [journey, other], [journey, 'nope']] as const) {
      const res = await getLifecycle(name, project)
      expect(res.status, `${project}/${name}`).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
  })
})

describe('completing a flag', () => {
  it('moves the flag to completed with its status, and records feature-completed', async () => {
    const { journey } = await flagThrough('live')
    const completed = tick()
    const res = await complete(journey, { status: 'kept', statusValue: 'variant1' })
    expect(res.status, res.text).toBe(200)
    expect((await getLifecycle(journey)).body.at(-1)).toEqual({ stage: 'completed', enteredStageAt: completed, status: 'kept' })
    expect(await stageOf(journey)).toBe('completed')
    expect((await eventsOf(journey)).at(-1)).toMatchObject({
      type: 'feature-completed',
      project: 'default',
      data: { stage: 'completed', status: 'kept', statusValue: 'variant1' },
      pre_data: { stage: 'live' },
      tags: [{ type: 'simple', value: 'life' }],
    })
  })

  it('completing again replaces the status', async () => {
    const { journey } = await flagThrough('completed')
    const completed = tick()
    expect((await complete(journey, { status: 'discarded' })).status).toBe(200)
    expect((await getLifecycle(journey)).body.at(-1)).toEqual({ stage: 'completed', enteredStageAt: completed, status: 'discarded' })
    expect((await eventsOf(journey)).at(-1)).toMatchObject({
      type: 'feature-completed',
      data: { stage: 'completed', status: 'discarded' },
      pre_data: { stage: 'completed', status: 'kept', statusValue: 'variant1' },
    })
  })

  it.each([
    ['no status', {}],
    ['an unknown status', { status: 'abandoned' }],
    ['an empty statusValue', { status: 'kept', statusValue: '' }],
    ['an unknown field', { status: 'kept', reason: 'done' }],
    ['no body', undefined],
  ])('answers 400 for %s and changes nothing', async (_, body) => {
    const { journey } = await flagThrough('completed')
    const before = await snapshot()
    const res = await complete(journey, body)
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for a flag that is unknown, archived or of another project, and changes nothing', async () => {
    const { journey } = await flagThrough('live')
    const other = await createProject(t)
    const retired = await retiredFlag()
    const before = await snapshot()
    for (const [name, project] of [['nope', 'default'], [retired, 'default'], [journey, other]] as const) {
      const res = await complete(name, { status: 'kept' }, project)
      expect(res.status, `${project}/${name}`).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    }
    expect(await snapshot()).toEqual(before)
  })

  it('answers 415 for a body that is not JSON', async () => {
    const { journey } = await flagThrough('live')
    expect((await t.call('POST', `${lifecyclePath(journey)}/complete`, { body: 'status=kept', headers: { 'content-type': 'text/plain' } })).status).toBe(415)
  })

  it('shows the archived stage of an archived flag', async () => {
    const stages = (await getLifecycle(await retiredFlag())).body.map((s: any) => s.stage)
    expect(stages).toEqual(['initial', 'archived'])
  })
})

describe('uncompleting a flag', () => {
  it('removes the completed stage, so the flag is back in its previous stage, with feature-uncompleted', async () => {
    const { journey } = await flagThrough('live')
    tick()
    await ok(t, 'POST', `${lifecyclePath(journey)}/complete`, { status: 'discarded' })
    tick()
    const res = await uncomplete(journey)
    expect(res.status, res.text).toBe(200)
    expect(await stageOf(journey)).toBe('live')
    expect((await getLifecycle(journey)).body.map((s: any) => s.stage)).toEqual(['initial', 'pre-live', 'live'])
    expect((await eventsOf(journey)).at(-1)).toMatchObject({
      type: 'feature-uncompleted',
      project: 'default',
      data: { stage: 'live' },
      pre_data: { stage: 'completed', status: 'discarded' },
      tags: [{ type: 'simple', value: 'life' }],
    })
  })

  it('answers 400 for a flag that is not completed, and changes nothing', async () => {
    const { journey } = await flagThrough('live')
    const before = await snapshot()
    const res = await uncomplete(journey)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining('not completed') })
    expect(await snapshot()).toEqual(before)
  })

  it('answers 404 for a flag that is unknown, archived or of another project', async () => {
    const { journey } = await flagThrough('completed')
    const other = await createProject(t)
    const retired = await retiredFlag()
    for (const [name, project] of [['nope', 'default'], [retired, 'default'], [journey, other]] as const) {
      expect((await uncomplete(name, project)).status, `${project}/${name}`).toBe(404)
    }
  })

  it('takes a flag completed straight from initial back to initial', async () => {
    const shortLived = fresh('short-lived')
    expect((await t.call('POST', `${P}/features`, { body: { name: shortLived } })).status).toBe(201)
    expect((await complete(shortLived, { status: 'discarded' })).status).toBe(200)
    expect(await stageOf(shortLived)).toBe('completed')
    expect((await uncomplete(shortLived)).status).toBe(200)
    expect(await stageOf(shortLived)).toBe('initial')
  })
})

describe('lifecycle permissions', () => {
  it('refuses a Viewer complete and uncomplete with 403 NoAccessError for UPDATE_FEATURE, and changes nothing', async () => {
    const { name: shortLived } = await createFlag(t, { name: fresh('short-lived') })
    expect((await complete(shortLived, { status: 'kept' })).status).toBe(200)
    const before = await snapshot()
    for (const [path, body] of [
      [`${lifecyclePath(shortLived)}/complete`, { status: 'discarded' }],
      [`${lifecyclePath(shortLived)}/uncomplete`, undefined],
    ] as const) {
      const res = await viewer.call('POST', path, { body })
      expect(res.status, path).toBe(403)
      expect(res.body).toMatchObject({ name: 'NoAccessError', message: expect.stringContaining('permission=UPDATE_FEATURE in project=default') })
    }
    expect(await snapshot()).toEqual(before)
    expect((await viewer.call('GET', lifecyclePath(shortLived))).status).toBe(200)
  })

  it('answers 401 without a token', async () => {
    const { journey } = await flagThrough('live')
    expect((await t.call('GET', lifecyclePath(journey), { token: null })).status).toBe(401)
    expect((await t.call('POST', `${lifecyclePath(journey)}/uncomplete`, { token: null })).status).toBe(401)
  })
})
