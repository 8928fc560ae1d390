// The instance state (src/state/): exporting a whole instance and restoring it elsewhere, with `keep` and `drop`,
// Unleash's documents, the checks of a document, and the import as one transaction with its events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createSegment, createToken, enableFlag, fresh, ok } from './helpers/factories.js'
import { createSignedInUser } from './helpers/users.js'

const EXPORT = '/api/admin/state/export'
const IMPORT = '/api/admin/state/import'

let source: TestApp
beforeAll(async () => {
  source = await createTestApp()
  await populate(source)
})
afterAll(() => source.close())

const features = (project: string) => `/api/admin/projects/${project}/features`

/**
 * Something of every kind the state holds: a custom strategy type, a context field with legal values, a project
 * with a naming pattern, a flag limit, a third environment and a default strategy, a global and a project segment,
 * tag types and tags, flags with constrained and segmented strategies, strategy and environment variants, a
 * dependency, a disabled strategy, a stale flag, and a flag of the default project.
 */
async function populate(t: TestApp) {
  await ok(t, 'POST', '/api/admin/environments', { name: 'staging', type: 'preproduction', sortOrder: 150 })
  await ok(t, 'POST', '/api/admin/strategies', { name: 'tenant', description: 'By tenant', parameters: [{ name: 'ids', type: 'list', required: true }] })
  await ok(t, 'POST', '/api/admin/context', { name: 'tier', legalValues: [{ value: 'gold' }, { value: 'silver', description: 'Second' }], stickiness: true })
  await ok(t, 'POST', '/api/admin/projects', { id: 'shop', name: 'Shop', description: 'The shop', environments: ['development', 'production', 'staging'] })
  await ok(t, 'PUT', '/api/admin/projects/shop', { name: 'Shop', featureLimit: 20, featureNaming: { pattern: 'shop-.*', example: 'shop-cart' } })
  await ok(t, 'PUT', '/api/admin/projects/shop/environments/production/default-strategy', { name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'userId' } })
  const beta = await createSegment(t, { name: 'beta-users', constraints: [{ contextName: 'tier', operator: 'IN', values: ['gold'] }] })
  const staff = await createSegment(t, { name: 'shop-staff', project: 'shop', constraints: [{ contextName: 'userId', operator: 'STR_ENDS_WITH', values: ['@shop.example'] }] })
  await ok(t, 'POST', '/api/admin/tag-types', { name: 'team', description: 'Owning team', color: '#112233' })
  await ok(t, 'POST', '/api/admin/tags', { type: 'team', value: 'unused' })

  await createFlag(t, { name: 'shop-cart', description: 'The cart', type: 'experiment', impressionData: true, tags: [{ type: 'team', value: 'payments' }] }, 'shop')
  await addStrategy(
    t,
    'shop-cart',
    'development',
    {
      name: 'flexibleRollout',
      title: 'Gold first',
      parameters: { rollout: '50', stickiness: 'default', groupId: 'shop-cart' },
      constraints: [{ contextName: 'tier', operator: 'IN', values: ['gold', 'silver'] }, { contextName: 'appVersion', operator: 'SEMVER_GT', value: '1.2.3' }],
      segments: [beta.id, staff.id],
      variants: [{ name: 'a', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"x":1}' } }, { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default' }],
    },
    'shop',
  )
  await addStrategy(t, 'shop-cart', 'development', { name: 'tenant', parameters: { ids: 'acme,globex' }, disabled: true, sortOrder: 5 }, 'shop')
  await ok(t, 'PUT', `${features('shop')}/shop-cart/environments/development/variants`, [
    { name: 'red', weightType: 'fix', weight: 300, stickiness: 'default', overrides: [{ contextName: 'userId', values: ['u1'] }] },
    { name: 'blue', weightType: 'variable', stickiness: 'default' },
  ])
  await enableFlag(t, 'shop-cart', 'development', 'shop')
  await enableFlag(t, 'shop-cart', 'production', 'shop')
  await createFlag(t, { name: 'shop-checkout' }, 'shop')
  await ok(t, 'POST', `${features('shop')}/shop-checkout/dependencies`, { feature: 'shop-cart', variants: ['red'] })
  await addStrategy(t, 'shop-checkout', 'staging', { name: 'userWithId', parameters: { userIds: 'u1,u2' } }, 'shop')
  await enableFlag(t, 'shop-checkout', 'staging', 'shop')
  await createFlag(t, { name: 'banner', tags: [{ type: 'simple', value: 'marketing' }] })
  await ok(t, 'PATCH', `${features('default')}/banner`, [{ op: 'replace', path: '/stale', value: true }])
  await addStrategy(t, 'banner', 'production', { name: 'default', constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2024-01-01T00:00:00.000Z' }] })
  await enableFlag(t, 'banner', 'production')
}

const sdkTokens = new WeakMap<TestApp, Record<string, string>>()
/** What SDKs of every environment receive (but the revision, an event id of the instance), through client tokens of each app made once. */
async function payloads(t: TestApp) {
  if (!sdkTokens.has(t)) {
    const tokens: Record<string, string> = {}
    for (const environment of ['development', 'production', 'staging']) tokens[environment] = (await createToken(t, { type: 'client', environment, projects: ['*'] })).secret
    sdkTokens.set(t, tokens)
  }
  const out: Record<string, unknown> = {}
  for (const [environment, token] of Object.entries(sdkTokens.get(t)!)) {
    const res = await t.call('GET', '/api/client/features', { token })
    expect(res.status, res.text).toBe(200)
    const { revisionId: _, ...meta } = res.body.meta
    out[environment] = { ...res.body, meta }
  }
  return out
}

const maxEventId = async (t: TestApp) => (await t.query<{ max: number }>('select coalesce(max(id), 0)::int as max from events'))[0]!.max
const eventsAfter = (t: TestApp, id: number) =>
  t.query<{ type: string; data: any; pre_data: any; feature_name: string | null; project: string | null; environment: string | null; created_by: string; tags: any }>(
    'select type, data, pre_data, feature_name, project, environment, created_by, tags from events where id > $1 order by id',
    [id],
  )

describe('GET /api/admin/state/export', () => {
  it('exports every kind in Unleash’s field names, with Flagpost’s context fields, dependencies and project environments', async () => {
    const doc = (await ok(source, 'GET', EXPORT)).body
    expect(doc.version).toBe(4)
    expect(doc.features.find((f: { name: string }) => f.name === 'shop-cart')).toMatchObject({ name: 'shop-cart', project: 'shop', type: 'experiment', description: 'The cart', impressionData: true, stale: false, archived: false })
    expect(doc.features.find((f: { name: string }) => f.name === 'banner')).toMatchObject({ project: 'default', stale: true })
    expect(doc.strategies).toEqual([{ name: 'tenant', title: null, displayName: null, description: 'By tenant', parameters: [{ name: 'ids', type: 'list', description: '', required: true }], deprecated: false, editable: true, sortOrder: 9999 }])
    const rollout = doc.featureStrategies.find((s: { featureName: string; strategyName: string }) => s.featureName === 'shop-cart' && s.strategyName === 'flexibleRollout')
    expect(rollout).toMatchObject({ projectId: 'shop', environment: 'development', title: 'Gold first', sortOrder: 0, disabled: false, parameters: { rollout: '50', stickiness: 'default', groupId: 'shop-cart' } })
    expect(doc.featureStrategySegments.filter((l: { featureStrategyId: string }) => l.featureStrategyId === rollout.id)).toHaveLength(2)
    expect(doc.featureEnvironments.find((e: { featureName: string; environment: string }) => e.featureName === 'shop-cart' && e.environment === 'development')).toMatchObject({ enabled: true, variants: [{ name: 'blue', weight: 700 }, { name: 'red', weight: 300 }] })
    expect(doc.featureDependencies).toEqual([{ child: 'shop-checkout', parent: 'shop-cart', enabled: true, variants: ['red'] }])
    expect(doc.featureTags).toEqual(expect.arrayContaining([{ featureName: 'shop-cart', tagType: 'team', tagValue: 'payments' }, { featureName: 'banner', tagType: 'simple', tagValue: 'marketing' }]))
    expect(doc.tags).toEqual(expect.arrayContaining([{ type: 'team', value: 'unused' }]))
    expect(doc.tagTypes.find((tt: { name: string }) => tt.name === 'team')).toEqual({ name: 'team', description: 'Owning team', icon: null, color: '#112233' })
    const shop = doc.projects.find((p: { id: string }) => p.id === 'shop')
    expect(shop).toMatchObject({ name: 'Shop', description: 'The shop', featureLimit: 20, featureNamingPattern: 'shop-.*', featureNamingExample: 'shop-cart', mode: 'open' })
    expect(shop.environments.map((e: { name: string }) => e.name)).toEqual(['development', 'staging', 'production'])
    expect(shop.environments.find((e: { name: string }) => e.name === 'production').defaultStrategy).toMatchObject({ name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'userId' } })
    expect(doc.environments).toEqual(expect.arrayContaining([{ name: 'staging', type: 'preproduction', sortOrder: 150, enabled: true, protected: false }]))
    expect(doc.segments.map((s: { name: string }) => s.name).sort()).toEqual(['beta-users', 'shop-staff'])
    expect(doc.contextFields.find((c: { name: string }) => c.name === 'tier')).toEqual({ name: 'tier', description: null, stickiness: true, sortOrder: 0, legalValues: [{ value: 'gold' }, { value: 'silver', description: 'Second' }] })
    // No secret, and nothing about who may do what.
    expect(Object.keys(doc).sort()).toEqual(['contextFields', 'environments', 'featureDependencies', 'featureEnvironments', 'featureLinks', 'featureStrategies', 'featureStrategySegments', 'featureTags', 'features', 'projects', 'segments', 'strategies', 'tagTypes', 'tags', 'version'])
    expect(JSON.stringify(doc)).not.toMatch(/secret|password|token/i)
  })

  it('leaves out the parts switched off, and answers an attachment when asked', async () => {
    const res = await ok(source, 'GET', `${EXPORT}?featureToggles=false&segments=0&download=true`)
    expect(Object.keys(res.body).sort()).toEqual(['contextFields', 'environments', 'projects', 'strategies', 'tagTypes', 'tags', 'version'])
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="flagpost-state-[\d-T]+\.json"$/)
    const bad = await source.call('GET', `${EXPORT}?featureToggles=maybe`)
    expect(bad.status).toBe(400)
    expect(bad.body.name).toBe('ValidationError')
  })

  it('is for admins only', async () => {
    const editor = await createSignedInUser(source, fresh('editor'), 'Editor')
    const res = await editor.call('GET', EXPORT)
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('permission=ADMIN')
  })
})

describe('POST /api/admin/state/import into a fresh instance', () => {
  let target: TestApp
  let doc: any
  beforeAll(async () => {
    target = await createTestApp()
    doc = (await ok(source, 'GET', EXPORT)).body
  })
  afterAll(() => target.close())

  it('reproduces what every SDK receives, in one write with one event per object', async () => {
    const before = await maxEventId(target)
    const res = await target.call('POST', IMPORT, { body: doc })
    expect(res.status, res.text).toBe(202)
    expect(res.body.imported).toMatchObject({ environments: 1, projects: 1, strategies: 1, contextFields: 1, tagTypes: 1, segments: 2, features: 3 })
    const events = await eventsAfter(target, before)
    expect(res.body.events).toBe(events.length)
    expect(await payloads(target)).toEqual(await payloads(source))
    expect(events.every((e) => e.created_by === 'test-admin')).toBe(true)
    const cart = events.find((e) => e.type === 'feature-import' && e.feature_name === 'shop-cart')!
    expect(cart.project).toBe('shop')
    expect(cart.pre_data).toBeNull()
    expect(cart.data).toMatchObject({ name: 'shop-cart', project: 'shop', type: 'experiment', dependencies: [] })
    expect(cart.data.environments.find((e: { name: string }) => e.name === 'development').strategies).toHaveLength(2)
    expect(cart.tags).toEqual([{ type: 'team', value: 'payments' }])
    expect(events.filter((e) => e.type === 'feature-tag-import').map((e) => e.data)).toEqual(
      expect.arrayContaining([{ featureName: 'shop-cart', tagType: 'team', tagValue: 'payments' }, { featureName: 'banner', tagType: 'simple', tagValue: 'marketing' }]),
    )
    expect(events.find((e) => e.type === 'tag-import' && e.data.value === 'unused')).toBeDefined()
    expect(events.find((e) => e.type === 'environment-import')).toMatchObject({ environment: 'staging', data: { name: 'staging', type: 'preproduction', sortOrder: 150, enabled: true, protected: false }, pre_data: null })
    expect(events.find((e) => e.type === 'segment-import' && e.data.name === 'shop-staff')).toMatchObject({ project: 'shop', data: { project: 'shop' } })
    expect(events.find((e) => e.type === 'strategy-import')!.data).toMatchObject({ name: 'tenant', parameters: [{ name: 'ids', type: 'list', required: true }] })
    expect(events.find((e) => e.type === 'project-import')).toMatchObject({ project: 'shop', data: { id: 'shop', featureLimit: 20 } })
    // The export of the copy is the source's, but for who made segments and when projects were last changed.
    const copy = (await ok(target, 'GET', EXPORT)).body
    const withoutAuthors = (d: any) => ({ ...d, segments: d.segments.map(({ createdBy: _, ...s }: any) => s), projects: d.projects.map(({ updatedAt: _, ...p }: any) => p) })
    expect(withoutAuthors(copy)).toEqual(withoutAuthors(doc))
  })

  it('changes nothing and records nothing when the same document is imported again', async () => {
    const sdk = await payloads(target)
    const before = await maxEventId(target)
    const res = await ok(target, 'POST', `${IMPORT}?keep=false`, doc)
    expect(res.body.imported).toEqual({ environments: 0, projects: 0, strategies: 0, contextFields: 0, tagTypes: 0, tags: 0, segments: 0, features: 0, featureTags: 0 })
    expect(res.body.events).toBe(0)
    expect(await eventsAfter(target, before)).toEqual([])
    expect(await payloads(target)).toEqual(sdk)
  })
})

describe('keep and overwrite', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  /** A document of one flag of the default project, on in development with one strategy, and of `also`. */
  const docOf = (flag: string, description: string, also: string) => ({
    version: 4,
    features: [
      { name: flag, project: 'default', description },
      { name: also, project: 'default' },
    ],
    featureStrategies: [{ featureName: flag, environment: 'development', strategyName: 'userWithId', parameters: { userIds: 'u1' } }],
    featureEnvironments: [{ featureName: flag, environment: 'development', enabled: true }],
  })

  it('leaves existing objects as they are by default (keep), creating only what is new', async () => {
    const flag = (await createFlag(t, { description: 'as it is' })).name as string
    await addStrategy(t, flag, 'production', { name: 'default' })
    const also = fresh('also')
    const before = await maxEventId(t)
    const res = await ok(t, 'POST', IMPORT, docOf(flag, 'from the backup', also))
    expect(res.body.imported.features).toBe(1)
    expect(res.body.unchanged.features).toBe(1)
    const kept = (await ok(t, 'GET', `${features('default')}/${flag}`)).body
    expect(kept.description).toBe('as it is')
    expect(kept.environments.find((e: { name: string }) => e.name === 'production').strategies.map((s: { name: string }) => s.name)).toEqual(['default'])
    expect((await eventsAfter(t, before)).map((e) => [e.type, e.feature_name])).toEqual([['feature-import', also]])
  })

  it('overwrites a flag with its whole configuration with keep=false, recording what it was', async () => {
    const flag = (await createFlag(t, { description: 'as it is' })).name as string
    await addStrategy(t, flag, 'production', { name: 'default' })
    const also = (await createFlag(t)).name as string
    const { version } = (await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!
    const before = await maxEventId(t)
    const res = await ok(t, 'POST', `${IMPORT}?keep=false`, docOf(flag, 'from the backup', also))
    expect(res.body.imported.features).toBe(1)
    // `also` is already as the document says: nothing to write.
    expect(res.body.unchanged.features).toBe(1)
    const overwritten = (await ok(t, 'GET', `${features('default')}/${flag}`)).body
    expect(overwritten.description).toBe('from the backup')
    const byName = (name: string) => overwritten.environments.find((e: { name: string }) => e.name === name)
    expect(byName('production').strategies).toEqual([])
    expect(byName('development')).toMatchObject({ enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: 'u1' } }] })
    const events = await eventsAfter(t, before)
    expect(events.map((e) => e.type)).toEqual(['feature-import'])
    expect(events[0]!.pre_data).toMatchObject({ name: flag, description: 'as it is', environments: expect.arrayContaining([expect.objectContaining({ name: 'production', strategies: [expect.objectContaining({ name: 'default' })] })]) })
    expect(events[0]!.data).toMatchObject({ name: flag, description: 'from the backup' })
    expect((await t.query<{ version: number }>('select version from features where name = $1', [flag]))[0]!.version).toBeGreaterThan(version)
  })

  it('leaves a flag overwritten what the document has no part for: its switches, strategies, segments and dependencies', async () => {
    const parent = (await createFlag(t)).name as string
    const flag = (await createFlag(t, { description: 'before' })).name as string
    const segment = await createSegment(t)
    await addStrategy(t, flag, 'development', { name: 'default', segments: [segment.id] })
    await enableFlag(t, flag, 'development')
    await ok(t, 'POST', `${features('default')}/${flag}/dependencies`, { feature: parent })
    const before = await maxEventId(t)
    await ok(t, 'POST', `${IMPORT}?keep=false`, { version: 4, features: [{ name: flag, description: 'after' }] })
    const after = (await ok(t, 'GET', `${features('default')}/${flag}`)).body
    expect(after).toMatchObject({ description: 'after', dependencies: [{ feature: parent }] })
    expect(after.environments.find((e: { name: string }) => e.name === 'development')).toMatchObject({ enabled: true, strategies: [{ name: 'default', segments: [segment.id] }] })
    expect((await eventsAfter(t, before)).map((e) => e.type)).toEqual(['feature-import'])
  })

  it('brings an archived flag of the document’s name back when it overwrites it', async () => {
    const flag = (await createFlag(t)).name as string
    await ok(t, 'DELETE', `${features('default')}/${flag}`)
    await ok(t, 'POST', `${IMPORT}?keep=false`, { version: 4, features: [{ name: flag, description: 'back' }] })
    expect((await ok(t, 'GET', `${features('default')}/${flag}`)).body).toMatchObject({ archived: false, description: 'back' })
  })

  it('gives SDKs the imported flags at their next poll', async () => {
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    const poll = async () => ((await t.call('GET', '/api/client/features', { token })).body.features as { name: string; enabled: boolean }[]).map((f) => f.name)
    const flag = fresh('polled')
    expect(await poll()).not.toContain(flag)
    await ok(t, 'POST', IMPORT, { version: 4, features: [{ name: flag }], featureEnvironments: [{ featureName: flag, environment: 'development', enabled: true }] })
    expect(await poll()).toContain(flag)
  })
})

describe('drop', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  it('deletes what the document does not list, of each kind it has, but never what must stay', async () => {
    // What a drop takes.
    await ok(t, 'POST', '/api/admin/environments', { name: 'extra-env', type: 'test' })
    await ok(t, 'POST', '/api/admin/projects', { id: 'extra-project', name: 'Extra', environments: ['development'] })
    await ok(t, 'POST', '/api/admin/strategies', { name: 'extra-strategy', parameters: [] })
    await ok(t, 'POST', '/api/admin/context', { name: 'extra-field' })
    await createSegment(t, { name: 'extra-segment' })
    await ok(t, 'POST', '/api/admin/tag-types', { name: 'extra-type' })
    await ok(t, 'POST', '/api/admin/tags', { type: 'simple', value: 'extra-tag' })
    await createFlag(t, { name: 'extra-flag', tags: [{ type: 'extra-type', value: 'x1' }] }, 'extra-project')
    await createFlag(t, { name: 'kept-flag', tags: [{ type: 'simple', value: 'old-tag' }] })
    // What a drop never takes: environments and projects API tokens are for, and a flag an open change request
    // changes, with the project, strategy type, segment and context field it uses.
    await ok(t, 'POST', '/api/admin/environments', { name: 'tokened-env', type: 'test' })
    await createToken(t, { type: 'client', environment: 'tokened-env', projects: ['*'] })
    await ok(t, 'POST', '/api/admin/projects', { id: 'tokened-project', name: 'Tokened', environments: ['development'] })
    await createToken(t, { type: 'client', environment: 'development', projects: ['tokened-project'] })
    await ok(t, 'POST', '/api/admin/projects', { id: 'guarded', name: 'Guarded', environments: ['development'], changeRequestEnvironments: [{ name: 'production' }] })
    await ok(t, 'POST', '/api/admin/strategies', { name: 'used-strategy', parameters: [] })
    await ok(t, 'POST', '/api/admin/context', { name: 'used-field' })
    const used = await createSegment(t, { name: 'used-segment' })
    await createFlag(t, { name: 'pending-flag' }, 'guarded')
    await addStrategy(t, 'pending-flag', 'development', { name: 'used-strategy', segments: [used.id], constraints: [{ contextName: 'used-field', operator: 'IN', values: ['a'] }] }, 'guarded')
    await ok(t, 'POST', '/api/admin/projects/guarded/environments/production/change-requests', { feature: 'pending-flag', action: 'updateEnabled', payload: { enabled: true } })

    const document = {
      version: 4,
      features: [{ name: 'kept-flag', project: 'default' }, { name: 'new-flag', project: 'default' }],
      strategies: [],
      projects: [{ id: 'default', name: 'Default', description: 'Default project', environments: [{ name: 'development' }, { name: 'production' }] }],
      tagTypes: [{ name: 'simple', description: 'Used to simplify filtering of features', icon: '#' }],
      tags: [{ type: 'simple', value: 'new-tag' }],
      featureTags: [{ featureName: 'kept-flag', tagType: 'simple', tagValue: 'new-tag' }],
      featureStrategies: [],
      environments: [
        { name: 'development', type: 'development', sortOrder: 100 },
        { name: 'production', type: 'production', sortOrder: 200 },
      ],
      featureEnvironments: [],
      segments: [],
      featureStrategySegments: [],
      contextFields: [],
    }
    const before = await maxEventId(t)
    const res = await ok(t, 'POST', `${IMPORT}?drop=true`, document)
    expect(res.body.dropped).toEqual({ environments: 1, projects: 1, strategies: 1, contextFields: 1 + 5, tagTypes: 1, tags: 2, segments: 1, features: 1, featureTags: 1 })

    const names = async (sql: string) => (await t.query<{ name: string }>(sql)).map((r) => r.name)
    expect(await names('select name from environments order by name')).toEqual(['development', 'production', 'tokened-env'])
    expect(await names('select id as name from projects order by id')).toEqual(['default', 'guarded', 'tokened-project'])
    expect(await names('select name from features order by name')).toEqual(['kept-flag', 'new-flag', 'pending-flag'])
    expect(await names('select name from strategy_definitions where not built_in order by name')).toEqual(['used-strategy'])
    expect((await names('select name from strategy_definitions where built_in')).length).toBeGreaterThan(5)
    expect(await names('select name from context_fields order by name')).toEqual(['used-field'])
    expect(await names('select name from segments order by name')).toEqual(['used-segment'])
    expect(await names('select name from tag_types order by name')).toEqual(['simple'])
    expect(await names(`select type || ':' || value as name from tags order by 1`)).toEqual(['simple:new-tag'])
    expect(await names(`select feature_name || '=' || tag_value as name from feature_tags order by 1`)).toEqual(['kept-flag=new-tag'])

    const events = await eventsAfter(t, before)
    const dropEvent = (type: string) => events.find((e) => e.type === type)
    expect(dropEvent('drop-features')).toMatchObject({ data: { name: 'all-features' }, pre_data: { features: ['extra-flag'] } })
    expect(dropEvent('drop-environments')).toMatchObject({ data: { name: 'all-environments' }, pre_data: { environments: ['extra-env'] } })
    expect(dropEvent('drop-projects')).toMatchObject({ pre_data: { projects: ['extra-project'] } })
    expect(dropEvent('drop-strategies')).toMatchObject({ pre_data: { strategies: ['extra-strategy'] } })
    expect(dropEvent('drop-tag-types')).toMatchObject({ pre_data: { tagTypes: ['extra-type'] } })
    expect(dropEvent('drop-feature-tags')).toMatchObject({ pre_data: { featureTags: [{ featureName: 'kept-flag', tagType: 'simple', tagValue: 'old-tag' }] } })
    expect(dropEvent('drop-tags')?.pre_data.tags).toEqual(expect.arrayContaining([{ type: 'simple', value: 'extra-tag' }, { type: 'simple', value: 'old-tag' }]))
    expect(events.filter((e) => e.type === 'segment-deleted').map((e) => e.pre_data.name)).toEqual(['extra-segment'])
    expect(events.filter((e) => e.type === 'context-field-deleted').map((e) => e.pre_data.name).sort()).toEqual(['appName', 'currentTime', 'environment', 'extra-field', 'sessionId', 'userId'])
    expect(events.filter((e) => e.type === 'feature-import').map((e) => e.feature_name)).toEqual(['new-flag'])
    expect(events.filter((e) => e.type === 'feature-tag-import').map((e) => e.data)).toEqual([{ featureName: 'kept-flag', tagType: 'simple', tagValue: 'new-tag' }])
  })

  it('removes flag tags the document does not list when it has flag tags', async () => {
    const flag = (await createFlag(t, { tags: [{ type: 'simple', value: 'gone' }, { type: 'simple', value: 'stays' }] })).name as string
    const doc = (await ok(t, 'GET', `${EXPORT}?environments=false&projects=false&strategies=false&segments=false&contextFields=false`)).body
    const listed = { ...doc, tagTypes: undefined, tags: undefined, featureTags: doc.featureTags.filter((x: { tagValue: string }) => x.tagValue !== 'gone') }
    const before = await maxEventId(t)
    const res = await ok(t, 'POST', `${IMPORT}?drop=true`, listed)
    expect(res.body.dropped).toMatchObject({ featureTags: 1, features: 0 })
    expect((await ok(t, 'GET', `${features('default')}/${flag}`)).body.tags).toEqual([{ type: 'simple', value: 'stays' }])
    expect((await eventsAfter(t, before)).map((e) => [e.type, e.pre_data])).toEqual([['drop-feature-tags', { featureTags: [{ featureName: flag, tagType: 'simple', tagValue: 'gone' }] }]])
  })

  it('refuses to leave a project without environments', async () => {
    await ok(t, 'POST', '/api/admin/environments', { name: 'only-env', type: 'test' })
    await ok(t, 'POST', '/api/admin/projects', { id: 'lonely', name: 'Lonely', environments: ['only-env'] })
    await createFlag(t, { name: 'lonely-flag' }, 'lonely')
    const res = await t.call('POST', `${IMPORT}?drop=true`, { body: { version: 4, environments: [{ name: 'development', type: 'development' }, { name: 'production', type: 'production' }, { name: 'tokened-env', type: 'test' }] } })
    expect(res.status, res.text).toBe(400)
    expect(res.body.message).toContain('would leave project lonely with none')
    expect(await t.query('select name from environments where name = $1', ['only-env'])).toHaveLength(1)
  })
})

describe('a document that cannot be imported', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
    await ok(t, 'POST', '/api/admin/context', { name: 'plan', legalValues: [{ value: 'pro' }] })
    await ok(t, 'POST', '/api/admin/projects', { id: 'named', name: 'Named', environments: ['development'] })
    await ok(t, 'PUT', '/api/admin/projects/named', { name: 'Named', featureLimit: 1, featureNaming: { pattern: 'named-.*' } })
  })
  afterAll(() => t.close())

  /** Imports `doc` expecting `status`, and that nothing was written. */
  async function refused(doc: unknown, status = 400, query = '') {
    const before = await maxEventId(t)
    const flags = await t.query('select name from features order by name')
    const res = await t.call('POST', `${IMPORT}${query}`, { body: doc })
    expect(res.status, res.text).toBe(status)
    expect(await eventsAfter(t, before)).toEqual([])
    expect(await t.query('select name from features order by name')).toEqual(flags)
    return res.body as { name: string; message: string; details?: { path: string; message: string }[] }
  }
  const flag = (extra: Record<string, unknown> = {}) => ({ version: 4, features: [{ name: fresh('doc-flag'), ...extra }] })

  it('names every problem and where it is, with the rules of the routes that make each kind', async () => {
    const name = fresh('checked')
    const body = await refused({
      version: 4,
      features: [{ name: 'not a name' }, { name, project: 'no-such-project' }, { name: fresh('ok') }],
      featureStrategies: [
        { featureName: name, environment: 'development', strategyName: 'no-such-strategy' },
        { featureName: 'unlisted-flag', environment: 'development', strategyName: 'default' },
      ],
      tags: [{ type: 'no-such-type', value: 'x1' }],
    })
    expect(body.name).toBe('ValidationError')
    expect(body.details).toEqual([{ path: 'body.features.0.name', message: "Flag name must be URL-friendly: letters, digits and - _ . ! ~ * ' ( ) only" }])
    const second = await refused({
      version: 4,
      features: [{ name, project: 'no-such-project' }],
      featureStrategies: [{ featureName: 'unlisted-flag', environment: 'development', strategyName: 'default' }],
      tags: [{ type: 'no-such-type', value: 'x1' }],
    })
    expect(second.details).toEqual(
      expect.arrayContaining([
        { path: 'body.tags.0.type', message: 'tag type no-such-type is neither in the document nor defined' },
        { path: 'body.featureStrategies.0.featureName', message: "flag unlisted-flag is not among the document's features" },
        { path: 'body.features.0.project', message: 'project no-such-project is neither in the document nor a project of the instance' },
      ]),
    )
    expect(second.message).toMatch(/^The document cannot be imported: /)
  })

  it('holds strategies to their type, parameters, constraints and legal values, and flags to their project', async () => {
    const f = fresh('strict')
    const body = await refused({
      version: 4,
      features: [{ name: f }],
      featureStrategies: [
        { featureName: f, environment: 'development', strategyName: 'no-such-strategy' },
        { featureName: f, environment: 'development', strategyName: 'flexibleRollout', parameters: { rollout: '101' } },
        { featureName: f, environment: 'development', strategyName: 'default', constraints: [{ contextName: 'plan', operator: 'IN', values: ['free'] }] },
        { featureName: f, environment: 'staging', strategyName: 'default' },
      ],
      featureStrategySegments: [{ featureStrategyId: 'nowhere', segmentId: 1 }],
    })
    expect(body.details).toEqual(
      expect.arrayContaining([
        { path: 'body.featureStrategies.0.name', message: 'strategy no-such-strategy is not defined (see /api/admin/strategies)' },
        { path: 'body.featureStrategies.1.parameters', message: 'rollout must be a whole number from 0 to 100, got "101"' },
        { path: 'body.featureStrategies.2.constraints', message: '"free" is not a legal value of context field plan' },
        { path: 'body.featureStrategies.3.environment', message: 'environment staging is not an environment of project default (add it to the project, or import the project with keep=false)' },
        { path: 'body.featureStrategySegments.0.featureStrategyId', message: "strategy nowhere is not among the document's featureStrategies" },
      ]),
    )
  })

  it('holds new flags to their project’s naming pattern and flag limit, and dependencies to one parent of the project', async () => {
    const named = await refused({ version: 4, features: [{ name: 'wrong-name', project: 'named' }] })
    expect(named.details).toEqual([{ path: 'body.features.0.name', message: 'must match named-.*' }])
    const limit = await refused({ version: 4, features: [{ name: 'named-a', project: 'named' }, { name: 'named-b', project: 'named' }] })
    expect(limit.message).toContain('project named would have 2 flags, more than its limit of 1')
    const [a, b, c] = [fresh('dep'), fresh('dep'), fresh('dep')]
    const chained = await refused({
      version: 4,
      features: [{ name: a }, { name: b }, { name: c }],
      featureDependencies: [
        { child: b, parent: a },
        { child: c, parent: b },
      ],
    })
    expect(chained.details?.map((d) => d.message)).toEqual(expect.arrayContaining([`${b} depends on ${a} itself: dependencies cannot be chained`]))
  })

  it('keeps a segment to the project of the flags using it', async () => {
    const segment = await createSegment(t)
    const flag = (await createFlag(t)).name as string
    await addStrategy(t, flag, 'development', { name: 'default', segments: [segment.id] })
    const body = await refused({ version: 4, segments: [{ id: 1, name: segment.name, project: 'named', constraints: [] }] }, 400, '?keep=false')
    expect(body.details).toEqual([{ path: 'body.segments', message: `segment ${segment.name} would belong to project named, but flag ${flag} of other projects use it` }])
  })

  it('refuses what the schema refuses: unknown parts, version 1, a body too large, not JSON, and callers who are not admins', async () => {
    expect((await refused({ ...flag(), apiTokens: [] })).details).toEqual([{ path: 'body', message: 'Unrecognized key: "apiTokens"' }])
    expect((await refused({ features: [] })).details?.[0]?.path).toBe('body.version')
    expect((await refused({ version: 1, features: [] })).details?.[0]?.message).toContain('version 1 (Unleash 3) are not supported')
    expect((await refused(flag(), 400, '?drop=maybe')).details?.[0]?.path).toBe('query.drop')
    // More than the 1 MiB of other writes is fine (judged, here refused, by its content); more than 4 MiB is not.
    const big = { version: 4, features: Array.from({ length: 250 }, () => ({ name: 'not a name', description: 'a'.repeat(9_000) })) }
    expect(JSON.stringify(big).length).toBeGreaterThan(2 * 1024 * 1024)
    expect((await refused(big)).name).toBe('ValidationError')
    const huge = { version: 4, features: Array.from({ length: 500 }, () => ({ name: 'x', description: 'a'.repeat(9_000) })) }
    expect((await refused(huge, 413)).name).toBe('PayloadTooLargeError')
    const text = await t.call('POST', IMPORT, { body: JSON.stringify(flag()), headers: { 'content-type': 'text/plain' } })
    expect(text.status).toBe(415)
    const editor = await createSignedInUser(t, fresh('editor'), 'Editor')
    const asEditor = await editor.call('POST', IMPORT, { body: flag() })
    expect(asEditor.status).toBe(403)
    expect(asEditor.body.message).toContain('permission=ADMIN')
  })

  it('writes nothing at all when its one transaction fails', async () => {
    // Only a database refusing the statement can fail an import the checks passed: a trigger stands in for it.
    await t.query(`create function refuse_exploding_flag() returns trigger language plpgsql as $$
      begin if new.name = 'explodes' then raise exception 'refused' using errcode = '23503'; end if; return new; end $$`)
    await t.query('create trigger refuse_exploding_flag before insert on features for each row execute function refuse_exploding_flag()')
    try {
      const body = await refused({
        version: 4,
        environments: [{ name: 'atomic-env', type: 'test' }],
        projects: [{ id: 'atomic-project', name: 'Atomic', environments: [{ name: 'development' }, { name: 'atomic-env' }] }],
        tagTypes: [{ name: 'atomic-type' }],
        tags: [{ type: 'atomic-type', value: 'atomic' }],
        segments: [{ id: 7, name: 'atomic-segment', constraints: [] }],
        features: [{ name: 'fine', project: 'atomic-project' }, { name: 'explodes', project: 'atomic-project' }],
        featureTags: [{ featureName: 'fine', tagType: 'atomic-type', tagValue: 'atomic' }],
      })
      expect(body.name).toBe('ValidationError')
      expect(await t.query(`select name from environments where name = 'atomic-env'`)).toEqual([])
      expect(await t.query(`select id from projects where id = 'atomic-project'`)).toEqual([])
      expect(await t.query(`select name from tag_types where name = 'atomic-type'`)).toEqual([])
      expect(await t.query(`select name from segments where name = 'atomic-segment'`)).toEqual([])
    } finally {
      await t.query('drop trigger refuse_exploding_flag on features')
    }
  })
})

describe('an Unleash 4 document', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  // As Unleash 4.x exported it (version 3: variants still the flag's), with its spellings of flag tags and strategies.
  const document = {
    version: 3,
    features: [
      {
        name: 'UX-toggle1',
        description: 'Toggle to make UX great',
        type: 'release',
        project: 'default',
        stale: false,
        variants: [
          { name: 'azure', weight: 500, weightType: 'variable', stickiness: 'default', overrides: [] },
          { name: 'lilac', weight: 500, weightType: 'variable', stickiness: 'default', overrides: [] },
        ],
        createdAt: '2022-08-19T11:12:02.559Z',
        lastSeenAt: null,
        impressionData: false,
        archivedAt: null,
        archived: false,
      },
      { name: 'old-toggle', description: '', type: 'release', project: 'default', stale: false, variants: [], createdAt: '2021-01-01T00:00:00.000Z', archived: true, archivedAt: '2022-01-01T00:00:00.000Z' },
    ],
    strategies: [{ name: 'gradualRolloutRandom', description: 'Randomly activate the feature toggle. No stickiness.', parameters: [{ name: 'percentage', type: 'percentage', description: '', required: false }], deprecated: true }],
    projects: [{ id: 'default', name: 'Default', description: 'Default project', createdAt: '2022-06-15T09:04:10.979Z', health: 100, updatedAt: '2022-11-14T12:05:01.328Z' }],
    tagTypes: [{ name: 'simple', description: 'Used to simplify filtering of features', icon: '#' }],
    tags: [{ value: 'ux', type: 'simple' }],
    featureTags: [
      { featureName: 'UX-toggle1', tagType: 'simple', tagValue: 'ux' },
      { featureName: 'old-toggle', type: 'simple', value: 'ux' },
    ],
    featureStrategies: [
      { id: '6fe19ea2-c00e-41f4-a4b0-407dd87837c3', featureName: 'UX-toggle1', projectId: 'default', environment: 'development', strategyName: 'default', parameters: {}, constraints: [], createdAt: '2022-08-19T11:12:32.398Z' },
      // A type deprecated since Unleash 4, which the document lists: strategies it already had are restored.
      { id: '0b8e2f4c-1d6a-4e59-8c3b-2a7f9e6d5c41', featureName: 'UX-toggle1', projectId: 'default', environment: 'development', strategyName: 'gradualRolloutRandom', parameters: { percentage: 20 }, constraints: [], sortOrder: 1 },
      {
        id: 'f1834062-484f-4211-a39b-41f229c12a01',
        featureName: 'UX-toggle1',
        projectId: 'default',
        environment: 'production',
        strategyName: 'flexibleRollout',
        parameters: { groupId: 'UX-toggle1', rollout: 50, stickiness: 'default' },
        constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'], caseInsensitive: false, inverted: false }],
        createdAt: '2022-08-19T11:12:45.779Z',
      },
    ],
    environments: [
      { name: 'development', type: 'development', sortOrder: 100, enabled: true, protected: false },
      { name: 'production', type: 'production', sortOrder: 200, enabled: true, protected: false },
    ],
    featureEnvironments: [
      { enabled: true, featureName: 'UX-toggle1', environment: 'development' },
      { enabled: true, featureName: 'UX-toggle1', environment: 'production' },
    ],
    segments: [{ id: 1, name: 'insiders', description: '', constraints: [{ contextName: 'userId', operator: 'IN', values: ['7'] }], createdBy: 'admin', createdAt: '2022-09-01T00:00:00.000Z' }],
    featureStrategySegments: [{ featureStrategyId: 'f1834062-484f-4211-a39b-41f229c12a01', segmentId: 1 }],
  }

  it('imports with its flag’s variants given to its environments, its strategies, segments and tags', async () => {
    const res = await ok(t, 'POST', IMPORT, document)
    // The built-in strategy type and the default project are left as they are; the archived flag comes archived.
    expect(res.body.imported).toMatchObject({ features: 2, strategies: 0, projects: 0, segments: 1, tags: 1, featureTags: 1 })
    const flag = (await ok(t, 'GET', `${features('default')}/UX-toggle1`)).body
    expect(flag.createdAt).toBe('2022-08-19T11:12:02.559Z')
    const env = (name: string) => flag.environments.find((e: { name: string }) => e.name === name)
    expect(env('development')).toMatchObject({
      enabled: true,
      strategies: [{ id: '6fe19ea2-c00e-41f4-a4b0-407dd87837c3', name: 'default' }, { name: 'gradualRolloutRandom', parameters: { percentage: '20' } }],
      variants: [{ name: 'azure', weight: 500 }, { name: 'lilac', weight: 500 }],
    })
    const segment = (await ok(t, 'GET', '/api/admin/segments')).body.segments.find((s: { name: string }) => s.name === 'insiders')
    expect(env('production')).toMatchObject({ enabled: true, strategies: [{ name: 'flexibleRollout', parameters: { groupId: 'UX-toggle1', rollout: '50', stickiness: 'default' }, segments: [segment.id] }] })
    expect(flag.tags).toEqual([{ type: 'simple', value: 'ux' }])
    expect(await t.query(`select name, archived_at from features where name = 'old-toggle'`)).toEqual([{ name: 'old-toggle', archived_at: new Date('2022-01-01T00:00:00.000Z') }])
  })

  it('restores a strategy of a deprecated type the document does not list, as the routes accept it (Unleash 8.2 does)', async () => {
    const flag = fresh('deprecated-use')
    const res = await t.call('POST', IMPORT, { body: { version: 4, features: [{ name: flag }], featureStrategies: [{ featureName: flag, environment: 'development', strategyName: 'gradualRolloutUserId', parameters: { percentage: '5', groupId: flag } }] } })
    expect(res.status, res.text).toBe(202)
    const strategies = (await ok(t, 'GET', `/api/admin/projects/default/features/${flag}/environments/development/strategies`)).body
    expect(strategies.map((s: { name: string }) => s.name)).toEqual(['gradualRolloutUserId'])
  })
})

describe("a project's own context fields", () => {
  let t: TestApp
  let target: TestApp
  beforeAll(async () => {
    t = await createTestApp()
    target = await createTestApp()
    await ok(t, 'POST', '/api/admin/projects', { id: 'rooms', name: 'Rooms' })
    await ok(t, 'POST', '/api/admin/projects/rooms/context', { name: 'seat', legalValues: [{ value: 'aisle' }] })
    await createFlag(t, { name: 'rooms-booking' }, 'rooms')
    await addStrategy(t, 'rooms-booking', 'development', { name: 'default', constraints: [{ contextName: 'seat', operator: 'IN', values: ['aisle'] }] }, 'rooms')
  })
  afterAll(async () => {
    await t.close()
    await target.close()
  })

  it('are exported with their project and restored as that project\'s own, with their events', async () => {
    const doc = (await ok(t, 'GET', EXPORT)).body
    expect(doc.contextFields.find((f: { name: string }) => f.name === 'seat')).toEqual({ name: 'seat', description: null, stickiness: false, sortOrder: 0, legalValues: [{ value: 'aisle' }], project: 'rooms' })
    const before = await maxEventId(target)
    await ok(target, 'POST', IMPORT, doc)
    const field = (await ok(target, 'GET', '/api/admin/projects/rooms/context/seat')).body
    expect(field).toMatchObject({ name: 'seat', project: 'rooms', legalValues: [{ value: 'aisle' }] })
    expect((await eventsAfter(target, before)).filter((e) => e.type === 'context-field-created' && e.data.name === 'seat')).toEqual([
      expect.objectContaining({ project: 'rooms', data: { name: 'seat', description: null, stickiness: false, sortOrder: 0, legalValues: [{ value: 'aisle' }], project: 'rooms' } }),
    ])
  })

  it("refuses another project's flags, and global segments, constraining them, and a field of a project there is not", async () => {
    const f = fresh('elsewhere')
    const res = await t.call('POST', IMPORT, {
      body: {
        version: 4,
        features: [{ name: f, project: 'default' }],
        featureStrategies: [{ featureName: f, environment: 'development', strategyName: 'default', constraints: [{ contextName: 'seat', operator: 'IN', values: ['aisle'] }] }],
        segments: [{ id: 1, name: fresh('everyone'), constraints: [{ contextName: 'seat', operator: 'IN', values: ['aisle'] }] }],
        contextFields: [{ name: fresh('orphan'), project: 'no-such-project' }],
      },
    })
    expect(res.status, res.text).toBe(400)
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        { path: 'body.featureStrategies.0.constraints', message: 'context field seat belongs to another project and cannot be used in project default' },
        { path: 'body.segments.0.constraints', message: 'context field seat belongs to another project and cannot be used by global segments' },
        { path: 'body.contextFields.0.project', message: 'project no-such-project is neither in the document nor a live project' },
      ]),
    )
  })

  it('go with a project drop deletes, each with its event', async () => {
    const own = await createTestApp()
    try {
      await ok(own, 'POST', '/api/admin/projects', { id: 'gone', name: 'Gone' })
      await ok(own, 'POST', '/api/admin/projects/gone/context', { name: 'bench' })
      const before = await maxEventId(own)
      await ok(own, 'POST', `${IMPORT}?drop=true`, { version: 4, projects: [{ id: 'default', name: 'Default' }] })
      expect(await own.query("select name from context_fields where name = 'bench'")).toEqual([])
      expect((await eventsAfter(own, before)).filter((e) => e.type === 'context-field-deleted')).toEqual([expect.objectContaining({ project: 'gone', pre_data: expect.objectContaining({ name: 'bench', project: 'gone' }) })])
    } finally {
      await own.close()
    }
  })
})

describe('archived flags', () => {
  it('refuses with 400 an archivedAt no timestamp column takes (years 1 to 9999), never a 500', async () => {
    const t = await createTestApp()
    try {
    for (const archivedAt of ['-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z']) {
      const res = await t.call('POST', '/api/admin/state/import?keep=false', { body: { version: 4, features: [{ name: fresh('far-archived'), project: 'default', archived: true, archivedAt }] } })
      expect(res.status, res.text).toBe(400)
      expect(res.body.message).toContain('is not a date (years 1 to 9999)')
    }
    } finally {
      await t.close()
    }
  })

  it('are exported with archivedAt and restored archived, with their metadata, without SDKs seeing them; an import again or with drop keeps them', async () => {
    const from = await createTestApp({ now: () => new Date('2026-02-01T09:00:00.000Z') })
    const into = await createTestApp()
    try {
      const flag = (await createFlag(from, { name: fresh('retired'), type: 'experiment', description: 'gone' })).name as string
      await ok(from, 'DELETE', `${features('default')}/${flag}`)
      const doc = (await ok(from, 'GET', EXPORT)).body
      expect(doc.features.find((f: { name: string }) => f.name === flag)).toEqual({
        name: flag,
        description: 'gone',
        type: 'experiment',
        project: 'default',
        stale: false,
        impressionData: false,
        createdAt: '2026-02-01T09:00:00.000Z',
        archived: true,
        archivedAt: '2026-02-01T09:00:00.000Z',
      })
      expect(doc.featureEnvironments.some((e: { featureName: string }) => e.featureName === flag)).toBe(false)

      const before = await maxEventId(into)
      const res = await into.call('POST', IMPORT, { body: doc })
      expect(res.status, res.text).toBe(202)
      expect(res.body.imported.features).toBe(1)
      const [row] = await into.query<{ archived_at: Date; type: string; description: string }>(`select archived_at, type, description from features where name = $1`, [flag])
      expect(row).toEqual({ archived_at: new Date('2026-02-01T09:00:00.000Z'), type: 'experiment', description: 'gone' })
      const events = await eventsAfter(into, before)
      expect(events.filter((e) => e.type === 'feature-import').map((e) => e.data)).toEqual([expect.objectContaining({ name: flag, archived: true, archivedAt: '2026-02-01T09:00:00.000Z' })])
      const archive = (await ok(into, 'GET', '/api/admin/search/features?archived=IS%3Atrue')).body.features
      expect(archive).toEqual([expect.objectContaining({ name: flag, archivedAt: '2026-02-01T09:00:00.000Z' })])
      const sdk = await createToken(into, { type: 'client', environment: 'development', projects: ['*'] })
      const polled = await into.call('GET', '/api/client/features', { token: sdk.secret })
      expect(polled.body.features.some((f: { name: string }) => f.name === flag)).toBe(false)

      // Again, and with drop: left as it is, nothing recorded.
      const again = await ok(into, 'POST', `${IMPORT}?keep=false`, doc)
      expect(again.body.imported.features).toBe(0)
      const dropped = await ok(into, 'POST', `${IMPORT}?drop=true`, doc)
      expect(dropped.body.dropped?.features ?? 0).toBe(0)
      expect(await into.query(`select name from features where name = $1 and archived_at is not null`, [flag])).toEqual([{ name: flag }])

      // Revived, it is a flag like one archived here.
      await ok(into, 'POST', `/api/admin/archive/revive/${flag}`)
      expect((await ok(into, 'GET', `${features('default')}/${flag}`)).body).toMatchObject({ archived: false, type: 'experiment' })
    } finally {
      await from.close()
      await into.close()
    }
  })

  it('refuses an archivedAt that is not a date, naming where', async () => {
    const t = await createTestApp()
    try {
      const res = await t.call('POST', IMPORT, { body: { version: 4, features: [{ name: fresh('old'), archived: true, archivedAt: 'last spring' }] } })
      expect(res.status).toBe(400)
      expect(res.text).toContain('archivedAt last spring is not a date')
    } finally {
      await t.close()
    }
  })
})

describe('a document listing a legal value or a parameter twice', () => {
  it('refuses it with a 400 naming where, as the context field and strategy type routes do, and writes nothing', async () => {
    const field = fresh('field')
    const type = fresh('type')
    const res = await source.call('POST', IMPORT, {
      body: {
        version: 4,
        contextFields: [{ name: field, legalValues: [{ value: 'a' }, { value: 'a' }] }],
        strategies: [{ name: type, parameters: [{ name: 'ids', type: 'list' }, { name: 'ids', type: 'string' }] }],
      },
    })
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    const details = res.body.details.map((d: { path: string; message: string }) => `${d.path}: ${d.message}`)
    expect(details).toEqual(expect.arrayContaining(['body.contextFields.0.legalValues.1.value: legal value "a" is listed twice', 'body.strategies.0.parameters.1.name: parameter ids is listed twice']))
    expect(await source.query(`select name from context_fields where name = $1 union all select name from strategy_definitions where name = $2`, [field, type])).toEqual([])
  })
})
