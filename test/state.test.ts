// The instance state (src/state/): exporting a whole instance and restoring it elsewhere, with `keep` and `drop`,
// Unleash's documents, the checks of a document, and the import as one transaction with its events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, createSegment, createToken, enableFlag, fresh, ok } from './helpers/factories.js'
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
    expect(Object.keys(doc).sort()).toEqual(['contextFields', 'environments', 'featureDependencies', 'featureEnvironments', 'featureStrategies', 'featureStrategySegments', 'featureTags', 'features', 'projects', 'segments', 'strategies', 'tagTypes', 'tags', 'version'])
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
