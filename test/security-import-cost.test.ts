import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createProject } from './helpers/factories.js'
import { createSignedInUser } from './helpers/users.js'
import { IMPORT_DOCUMENT_LIMITS, STATE_DOCUMENT_LIMITS } from '../src/export-import/document-limits.js'
import { importFeatures } from '../src/export-import/import.js'
import { ImportTogglesSchema } from '../src/export-import/schemas.js'
import { callerOf, type Principal } from '../src/core/principal.js'
import { racing } from './helpers/racing.js'

// The work an import document makes is bounded by counting it before its schema walks it.

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const IMPORT = '/api/admin/features-batch/import'
const VALIDATE = '/api/admin/features-batch/validate'
const STATE = '/api/admin/state/import'

const heavy = (project: string, flags: number, strategiesPerFlag: number) => {
  const names = Array.from({ length: flags }, (_, i) => `${project}-${i}`)
  return {
    project,
    environment: 'development',
    data: {
      features: names.map((name) => ({ name, type: 'release' })),
      featureStrategies: names.flatMap((name) => Array.from({ length: strategiesPerFlag }, () => ({ name: 'flexibleRollout', featureName: name, parameters: { rollout: '50' } }))),
      featureEnvironments: names.map((name) => ({ name, enabled: true })),
      tagTypes: [],
    },
  }
}

const refusedAsTooLarge = (res: { status: number; body: any }, what: string) => {
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400)
  expect(res.body).toMatchObject({ id: expect.any(String), name: 'ValidationError', message: expect.stringContaining(`The document is too large to import`) })
  expect(res.body.message).toContain(what)
}

describe('POST /api/admin/features-batch/import and /validate: the document is counted before its schema is checked', () => {
  it('refuses 8,000 strategies on one flag with the strategy limit, naming the flag, before parsing the rest (nothing written)', async () => {
    const project = await createProject(t)
    const body = { project, environment: 'development', data: { features: [{ name: 'big', type: 'release' }], featureStrategies: Array.from({ length: 8000 }, () => ({ name: 'default', featureName: 'big', parameters: {} })), tagTypes: [] } }
    const res = await t.call('POST', IMPORT, { body })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining('The flag big has more strategies in the import') })
    expect(await t.query('select 1 from features where name = $1', ['big'])).toHaveLength(0)
  })

  it(`refuses a document of more than ${IMPORT_DOCUMENT_LIMITS.strategies} strategies, flags or constraints, even to validate (open to a Viewer)`, async () => {
    const project = await createProject(t)
    const viewer = await createSignedInUser(t, 'import-cost-viewer', 'Viewer')
    refusedAsTooLarge(await viewer.call('POST', VALIDATE, { body: heavy(project, 1000, 11) }), '11,000 strategies, more than the limit of 10,000')
    const flags = { project, environment: 'development', data: { features: Array.from({ length: IMPORT_DOCUMENT_LIMITS.flags + 1 }, (_, i) => ({ name: `f${i}` })), featureStrategies: [], tagTypes: [] } }
    refusedAsTooLarge(await t.call('POST', IMPORT, { body: flags }), '1,001 flags')
    const constrained = heavy(project, 1000, 1)
    constrained.data.featureStrategies = constrained.data.featureStrategies.map((s) => ({ ...s, constraints: Array.from({ length: 31 }, () => ({})) })) as typeof constrained.data.featureStrategies
    refusedAsTooLarge(await t.call('POST', VALIDATE, { body: constrained }), '31,000 constraints')
  })

  it(`refuses more than ${IMPORT_DOCUMENT_LIMITS.dependencies.toLocaleString('en-US')} dependencies (1,000 flags × 50 parents, open to a Viewer), and lists the errors of a document under it`, async () => {
    const project = await createProject(t)
    const viewer = await createSignedInUser(t, 'import-deps-viewer', 'Viewer')
    // Short names, so 50,000 parents fit in the 1 MB body limit, as in the attack.
    const names = Array.from({ length: 1000 }, (_, i) => `f${i}`)
    const dependent = (parents: number) => ({
      project,
      environment: 'development',
      data: { features: names.map((name) => ({ name })), featureStrategies: [], tagTypes: [], dependencies: names.map((feature, i) => ({ feature, dependencies: Array.from({ length: parents }, (_, j) => ({ feature: names[(i + j + 1) % names.length] })) })) },
    })
    refusedAsTooLarge(await viewer.call('POST', VALIDATE, { body: dependent(50) }), '50,000 dependencies, more than the limit of 10,000')
    // Under the limit: every flag has ten parents and each parent has parents, so every link is a chain, all listed.
    const res = await viewer.call('POST', VALIDATE, { body: dependent(10) })
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    const byMessage = new Map<string, string[]>(res.body.errors.map((e: { message: string; affectedItems: string[] }) => [e.message, e.affectedItems]))
    expect(byMessage.get('The following flags depend on more than one flag (a flag has at most one parent):')).toHaveLength(1000)
    expect(byMessage.get('Dependencies cannot be chained (a parent cannot itself depend on a flag):')).toHaveLength(10_000)
  })

  it('refuses more than 50 tags on one flag (each tag event carries the flag\'s tags), on the import and the state restore', async () => {
    const project = await createProject(t)
    const tagged = (n: number) => ({ project, environment: 'development', data: { features: [{ name: 'tagf' }], featureStrategies: [], tagTypes: [], featureTags: Array.from({ length: n }, (_, i) => ({ featureName: 'tagf', tagType: 'simple', tagValue: `t${i}` })) } })
    refusedAsTooLarge(await t.call('POST', IMPORT, { body: tagged(2000) }), '2,000 tags on one flag, more than the limit of 50')
    expect(await t.query('select 1 from features where name = $1', ['tagf'])).toHaveLength(0)
    const state = { version: 4, features: [{ name: 'state-tagf', project }], featureTags: Array.from({ length: 8000 }, (_, i) => ({ featureName: 'state-tagf', tagType: 'simple', tagValue: `v${i}` })) }
    refusedAsTooLarge(await t.call('POST', STATE, { body: state }), '8,000 tags on one flag')
    // 26 tags on each of 1,000 flags: within the per-flag limit, but its events would carry 676,000 tags.
    const spread = { version: 4, features: Array.from({ length: 1000 }, (_, i) => ({ name: `g${i}`, project })), featureTags: Array.from({ length: 26_000 }, (_, i) => ({ featureName: `g${i % 1000}`, tagType: 'simple', tagValue: `w${i}` })) }
    refusedAsTooLarge(await t.call('POST', STATE, { body: spread }), '676,000 tags carried by the tag events')
  })

  it('restores 10,000 new tags over 1,000 flags (their creation locks a bounded set of buckets, not one lock per tag)', async () => {
    const project = await createProject(t)
    const body = { version: 4, features: Array.from({ length: 1000 }, (_, i) => ({ name: `${project}-h${i}`, project })), featureTags: Array.from({ length: 10_000 }, (_, i) => ({ featureName: `${project}-h${i % 1000}`, tagType: 'simple', tagValue: `${project}-x${i}` })) }
    const res = await t.call('POST', STATE, { body })
    expect(res.status, res.text.slice(0, 300)).toBeLessThan(300)
    expect(await t.query('select count(*)::int as n from tags where value like $1', [`${project}-x%`])).toEqual([{ n: 10_000 }])
  })

  it('validates the largest real export (1,000 flags × 9 strategies): it passes the limits', async () => {
    const project = await createProject(t)
    const res = await t.call('POST', VALIDATE, { body: heavy(project, 1000, 9) })
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(res.body.errors).toEqual([])
  })
})

describe('POST /api/admin/features-batch/import: the work of importing again what a project already holds', () => {
  it('keeps the strategies a flag already has (same ids, no events); replaces and records only the flags whose strategies change', async () => {
    const project = await createProject(t)
    const body = heavy(project, 20, 3)
    expect((await t.call('POST', IMPORT, { body })).status).toBe(200)
    const strategyIds = () => t.query<{ id: string }>('select fs.id from feature_strategies fs join features f on f.name = fs.feature_name where f.project = $1 order by fs.id', [project])
    const strategyEvents = async () => (await t.query<{ type: string; feature_name: string }>("select type, feature_name from events where project = $1 and type in ('feature-strategy-add', 'feature-strategy-remove') order by id", [project]))
    const ids = await strategyIds()
    const recorded = (await strategyEvents()).length
    expect(recorded).toBe(60)
    expect((await t.call('POST', IMPORT, { body })).status).toBe(200)
    expect(await strategyIds()).toEqual(ids)
    expect(await strategyEvents()).toHaveLength(recorded)
    const changed = structuredClone(body)
    changed.data.featureStrategies[0]!.parameters = { rollout: '75' }
    expect((await t.call('POST', IMPORT, { body: changed })).status).toBe(200)
    const after = (await strategyEvents()).slice(recorded)
    expect(after.map((e) => e.type)).toEqual([...Array(3).fill('feature-strategy-remove'), ...Array(3).fill('feature-strategy-add')])
    expect(new Set(after.map((e) => e.feature_name))).toEqual(new Set([`${project}-0`]))
    const served = await t.query<{ parameters: { rollout: string } }>('select parameters from feature_strategies where feature_name = $1 order by sort_order', [`${project}-0`])
    expect(served.map((s) => s.parameters.rollout)).toEqual(['75', '50', '50'])
  })
})

describe('POST /api/admin/features-batch/import: a large import writes its events in bounded statements', () => {
  it('records every event of 500 flags × 4 strategies (more than one statement of events), in order, in one transaction; an import decided from an out-of-date read writes none of them', async () => {
    const project = await createProject(t)
    const body = heavy(project, 500, 4)
    expect((await t.call('POST', IMPORT, { body })).status).toBe(200)
    const events = await t.query<{ type: string; feature_name: string | null }>("select type, feature_name from events where project = $1 and type <> 'project-created' order by id", [project])
    // Per flag: created, 4 strategies added, switched on; then features-imported.
    expect(events).toHaveLength(500 * 6 + 1)
    expect(events.filter((e) => e.type === 'feature-strategy-add')).toHaveLength(2000)
    expect(events.at(-1)!.type).toBe('features-imported')
    expect(events.slice(0, 500).every((e) => e.type === 'feature-created')).toBe(true)

    // Another writer changes a flag between the import's read and its write: the first try writes nothing (none of its
    // later chunks either), the second, from a fresh read, everything once.
    const changed = structuredClone(body)
    for (const s of changed.data.featureStrategies) s.parameters = { rollout: '75' }
    const before = events.length
    const raced = racing(t.db, () => t.query('update features set description = $1 where name = $2', ['changed meanwhile', `${project}-0`]))
    const input = ImportTogglesSchema.parse(changed)
    await importFeatures(raced.db, callerOf({ kind: 'admin-token', tokenId: 0, name: 'importer', rootRole: 'Admin' } as Principal, new Date()), input, () => ({ errors: [], warnings: [], permissions: [] }))
    expect(raced.state.raced).toBe(true)
    const after = await t.query<{ type: string }>("select type from events where project = $1 and type <> 'project-created' order by id", [project])
    // Per flag: metadata updated, 4 strategies removed, 4 added; then features-imported.
    expect(after.length - before).toBe(500 * 9 + 1)
  })
})

describe('POST /api/admin/state/import: the document is counted before its schema is checked', () => {
  it(`refuses more than ${STATE_DOCUMENT_LIMITS.constraints.toLocaleString('en-US')} constraints across the strategies, and a list over its limit, with a 400 naming it`, async () => {
    const featureStrategies = Array.from({ length: 5001 }, (_, i) => ({ featureName: `s${i % 100}`, environment: 'development', strategyName: 'default', constraints: Array.from({ length: 30 }, () => ({})) }))
    refusedAsTooLarge(await t.call('POST', STATE, { body: { version: 4, featureStrategies } }), '150,030 constraints')
    const features = Array.from({ length: STATE_DOCUMENT_LIMITS.features + 1 }, (_, i) => ({ name: `s${i}` }))
    refusedAsTooLarge(await t.call('POST', STATE, { body: { version: 4, features } }), '10,001 features')
  })
})
