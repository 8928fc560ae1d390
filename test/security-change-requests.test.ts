import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createToken } from '../src/api-tokens/store.js'
import { requireDirectChangeAllowed } from '../src/change-requests/guard.js'
import { adminRoute, createRouter } from '../src/http/openapi.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * Project `shop` requires change requests in production. Whoever may not skip them (a project Member, an
 * Editor, a project Owner) must not change what production SDKs receive by any direct write; an admin
 * may, and so may an applied change request.
 */

let t: TestApp
let reviewer: string
let productionSdk: string
let taggedSdk: string
/** Project Member of shop (root Viewer). */
let mia: TestUser
/** Root Editor: may change segments and flags everywhere, not skip change requests. */
let ed: TestUser
/** Project Owner of shop (root Viewer). */
let olga: TestUser
const P = '/api/admin/projects/shop'
const F = `${P}/features`
const CR = `${P}/environments/production/change-requests`
const MEMBER = 5
const OWNER = 4

const production = async (token = productionSdk) => {
  // A client spec that knows segments, so they come as their own list.
  const res = await t.call('GET', '/api/client/features', { token, headers: { 'unleash-client-spec': '5.0.0' } })
  expect(res.status, res.text).toBe(200)
  return { features: res.body.features, segments: res.body.segments }
}
const flagInProduction = async (name: string) => (await production()).features.find((f: any) => f.name === name)

function expectSkipNeeded(res: { status: number; body: any; text: string }, environment = 'production') {
  expect(res.status, res.text).toBe(403)
  expect(res.body).toMatchObject({ name: 'NoAccessError' })
  expect(res.body.message).toContain('SKIP_CHANGE_REQUEST')
  expect(res.body.message).toContain(`environment=${environment}`)
}

/** Proposes the changes as `author`, has the reviewer token approve, and applies them as the author. */
async function throughChangeRequest(author: TestUser, changes: unknown) {
  const draft = await author.call('POST', CR, { body: changes })
  expect(draft.status, draft.text).toBe(200)
  const id = draft.body.id as number
  expect((await author.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
  const approved = await t.call('POST', `${P}/change-requests/${id}/approve`, { token: reviewer })
  expect(approved.status, approved.text).toBe(200)
  const applied = await author.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
  expect(applied.status, applied.text).toBe(200)
  expect(applied.body.state).toBe('Applied')
}

async function createFlag(name: string) {
  expect((await t.call('POST', F, { body: { name } })).status).toBe(201)
  const on = await t.call('POST', `${F}/${name}/environments/production/on`)
  expect(on.status, on.text).toBe(200)
}

let segmentInProduction = 0
let segmentInDevelopment = 0

beforeAll(async () => {
  t = await createTestApp()
  reviewer = (await createToken(t.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'reviewer', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
  const project = await t.call('POST', '/api/admin/projects', { body: { id: 'shop', name: 'Shop', environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] } })
  expect(project.status, project.text).toBe(201)
  mia = await createSignedInUser(t, 'mia', 'Viewer')
  ed = await createSignedInUser(t, 'ed', 'Editor')
  olga = await createSignedInUser(t, 'olga', 'Viewer')
  for (const [user, role] of [[mia, MEMBER], [olga, OWNER]] as const) {
    const res = await t.call('POST', `${P}/access`, { body: { roles: [role], users: [user.id] } })
    expect(res.status, res.text).toBeLessThan(300)
  }
  productionSdk = (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: 'prod-sdk', type: 'client', environment: 'production', projects: ['shop'] } })).body.secret
  taggedSdk = productionSdk
  for (const name of ['parent', 'child', 'doomed', 'meta', 'tagged', 'revived', 'other']) await createFlag(name)

  const segment = async (name: string) => (await t.call('POST', '/api/admin/segments', { body: { name, constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] } })).body.id as number
  segmentInProduction = await segment('beta-prod')
  segmentInDevelopment = await segment('beta-dev')
  const prodStrategy = await t.call('POST', `${F}/other/environments/production/strategies`, { body: { name: 'default', segments: [segmentInProduction] } })
  expect(prodStrategy.status, prodStrategy.text).toBe(200)
  const devStrategy = await t.call('POST', `${F}/other/environments/development/strategies`, { body: { name: 'default', segments: [segmentInDevelopment] } })
  expect(devStrategy.status, devStrategy.text).toBe(200)
})
afterAll(() => t.close())

describe('archiving a flag of a protected environment', () => {
  it('refuses DELETE and PATCH /archived to a project Member with 403 naming SKIP_CHANGE_REQUEST, and production SDKs still get the flag', async () => {
    const before = await production()
    expectSkipNeeded(await mia.call('DELETE', `${F}/doomed`))
    expectSkipNeeded(await mia.call('PATCH', `${F}/doomed`, { body: [{ op: 'replace', path: '/archived', value: true }] }))
    expect(await production()).toEqual(before)
    expect(await flagInProduction('doomed')).toBeDefined()
  })

  it('archives through an applied archiveFeature change request', async () => {
    await throughChangeRequest(mia, { feature: 'doomed', action: 'archiveFeature' })
    expect(await flagInProduction('doomed')).toBeUndefined()
  })

  it('refuses reviving a flag of the project to an Editor, and lets an admin revive it', async () => {
    expect((await t.call('DELETE', `${F}/revived`)).status).toBe(202)
    const before = await production()
    expectSkipNeeded(await ed.call('POST', '/api/admin/archive/revive/revived'))
    expect(await production()).toEqual(before)
    expect((await t.call('POST', '/api/admin/archive/revive/revived')).status).toBe(200)
    expect(await flagInProduction('revived')).toMatchObject({ enabled: false })
  })

  it('lets an admin (who may skip change requests) archive directly', async () => {
    expect((await t.call('DELETE', `${F}/revived`)).status).toBe(202)
    expect(await flagInProduction('revived')).toBeUndefined()
  })
})

describe('flag metadata that SDKs receive', () => {
  it('refuses a Member a patch of impressionData, stale or type, and leaves production unchanged', async () => {
    const before = await production()
    for (const body of [
      [{ op: 'replace', path: '/impressionData', value: true }],
      [{ op: 'replace', path: '/stale', value: true }],
      [{ op: 'replace', path: '/type', value: 'kill-switch' }],
      [{ op: 'replace', path: '/description', value: 'x' }, { op: 'replace', path: '/stale', value: true }],
    ]) {
      expectSkipNeeded(await mia.call('PATCH', `${F}/meta`, { body }))
    }
    expect(await production()).toEqual(before)
  })

  it('lets a Member change the description alone, which SDKs never receive', async () => {
    const before = await production()
    const res = await mia.call('PATCH', `${F}/meta`, { body: [{ op: 'replace', path: '/description', value: 'only words' }] })
    expect(res.status, res.text).toBe(200)
    expect(res.body.description).toBe('only words')
    expect((await production()).features).toEqual(before.features)
  })

  it('lets an admin patch impressionData directly', async () => {
    expect((await t.call('PATCH', `${F}/meta`, { body: [{ op: 'replace', path: '/impressionData', value: true }] })).status).toBe(200)
    expect(await flagInProduction('meta')).toMatchObject({ impressionData: true })
  })
})

describe('dependencies', () => {
  it('refuses a Member adding or removing a dependency, and production SDKs see no dependency change', async () => {
    const before = await production()
    expectSkipNeeded(await mia.call('POST', `${F}/child/dependencies`, { body: { feature: 'parent' } }))
    expect(await production()).toEqual(before)

    expect((await t.call('POST', `${F}/child/dependencies`, { body: { feature: 'parent' } })).status).toBe(200)
    const withDependency = await production()
    expect(withDependency.features.find((f: any) => f.name === 'child').dependencies).toEqual([{ feature: 'parent', enabled: true, variants: [] }])
    expectSkipNeeded(await mia.call('DELETE', `${F}/child/dependencies/parent`))
    expectSkipNeeded(await mia.call('DELETE', `${F}/child/dependencies`))
    expect(await production()).toEqual(withDependency)
  })

  it('removes and adds dependencies through applied change requests', async () => {
    await throughChangeRequest(mia, { feature: 'child', action: 'deleteDependency', payload: { feature: 'parent' } })
    expect((await flagInProduction('child')).dependencies).toBeUndefined()
    await throughChangeRequest(mia, { feature: 'child', action: 'addDependency', payload: { feature: 'parent', enabled: false } })
    expect((await flagInProduction('child')).dependencies).toEqual([{ feature: 'parent', enabled: false }])
  })
})

describe('segments used by strategies', () => {
  const constraints = [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }]

  it('refuses an Editor updating a segment a production strategy uses, and production SDKs keep the old segment', async () => {
    const before = await production()
    expectSkipNeeded(await ed.call('PUT', `/api/admin/segments/${segmentInProduction}`, { body: { name: 'beta-prod', constraints } }))
    expectSkipNeeded(await ed.call('PUT', `/api/admin/segments/${segmentInProduction}`, { body: { name: 'renamed', constraints: before.segments[0].constraints } }))
    expectSkipNeeded(await ed.call('DELETE', `/api/admin/segments/${segmentInProduction}`))
    expect(await production()).toEqual(before)
  })

  it('lets an Editor update a segment used only where change requests are not required', async () => {
    const res = await ed.call('PUT', `/api/admin/segments/${segmentInDevelopment}`, { body: { name: 'beta-dev', constraints } })
    expect(res.status, res.text).toBe(204)
  })

  it('lets an admin update a segment used in production', async () => {
    expect((await t.call('PUT', `/api/admin/segments/${segmentInProduction}`, { body: { name: 'beta-prod', constraints } })).status).toBe(204)
    expect((await production()).segments).toEqual([{ id: segmentInProduction, name: 'beta-prod', constraints: [expect.objectContaining({ values: ['1', '2'] })] }])
  })
})

describe('tags', () => {
  it('refuses a Member tagging or untagging a flag, which would add it to or drop it from tag-filtered SDK payloads', async () => {
    const filtered = async () => (await t.call('GET', '/api/client/features?tag=simple:launch', { token: taggedSdk })).body.features.map((f: any) => f.name)
    expect(await filtered()).toEqual([])
    expectSkipNeeded(await mia.call('POST', '/api/admin/features/tagged/tags', { body: { value: 'launch' } }))
    expect(await filtered()).toEqual([])
    expect((await t.call('POST', '/api/admin/features/tagged/tags', { body: { value: 'launch' } })).status).toBe(201)
    expect(await filtered()).toEqual(['tagged'])
    expectSkipNeeded(await mia.call('DELETE', '/api/admin/features/tagged/tags/simple/launch'))
    expect(await filtered()).toEqual(['tagged'])
  })
})

describe('switching the protection off', () => {
  it('refuses a project Owner turning change requests off in production or lowering its approvals', async () => {
    expect((await t.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 2 } })).status).toBe(200)
    const before = (await t.call('GET', `${P}/change-requests/config`)).body
    expectSkipNeeded(await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: false } }))
    expectSkipNeeded(await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 } }))
    expectSkipNeeded(await ed.call('PUT', `${P}/change-requests/config`, { body: [{ environment: 'development', changeRequestsEnabled: true }, { environment: 'production', changeRequestsEnabled: false }] }))
    expect((await t.call('GET', `${P}/change-requests/config`)).body).toEqual(before)
    // And the protection still holds for the Member afterwards.
    expectSkipNeeded(await mia.call('POST', `${F}/other/environments/production/off`))
  })

  it('lets a project Owner turn change requests on or require more approvals', async () => {
    const on = await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'development', changeRequestsEnabled: true, requiredApprovals: 1 } })
    expect(on.status, on.text).toBe(200)
    const more = await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 3 } })
    expect(more.status, more.text).toBe(200)
    expect(more.body.find((e: any) => e.environment === 'production')).toMatchObject({ changeRequestsEnabled: true, requiredApprovals: 3 })
  })

  it('lets an admin turn change requests off, after which the Member may archive directly', async () => {
    const off = await t.call('PUT', `${P}/change-requests/config`, { body: [{ environment: 'production', changeRequestsEnabled: false }, { environment: 'development', changeRequestsEnabled: false }] })
    expect(off.status, off.text).toBe(200)
    expect((await mia.call('DELETE', `${F}/meta`)).status).toBe(202)
    expect(await flagInProduction('meta')).toBeUndefined()
  })
})

describe('every admin write route declares its change-request rule', () => {
  it('publishes x-change-requests on each write operation of the admin API', async () => {
    const doc = (await t.call('GET', '/docs/openapi.json')).body
    const undeclared: string[] = []
    const rules = new Map<string, string>()
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      if (!path.startsWith('/api/admin')) continue
      for (const method of ['post', 'put', 'patch', 'delete']) {
        const operation = item[method]
        if (!operation) continue
        const rule = operation['x-change-requests']
        if (!['guarded', 'no-sdk-effect', 'change-request'].includes(rule)) undeclared.push(`${method.toUpperCase()} ${path}`)
        rules.set(`${method.toUpperCase()} ${path}`, rule)
      }
    }
    expect(undeclared).toEqual([])
    for (const route of [
      'DELETE /api/admin/projects/{projectId}/features/{featureName}',
      'PATCH /api/admin/projects/{projectId}/features/{featureName}',
      'POST /api/admin/archive/revive/{featureName}',
      'POST /api/admin/projects/{projectId}/features/{child}/dependencies',
      'PUT /api/admin/segments/{id}',
      'PUT /api/admin/projects/{projectId}/change-requests/config',
      'POST /api/admin/features/{featureName}/tags',
    ]) {
      expect(rules.get(route), route).toBe('guarded')
    }
  })
})

describe('a guarded route that forgets the rule', () => {
  const route = (path: string) => adminRoute({ method: 'post', 'x-change-requests': 'guarded', 'x-permission': 'any-caller', path, responses: { 200: { description: 'done' } } })
  const router = createRouter()
  router.use(async (c, next) => {
    // Just enough of the app's context for the guard: a caller who may skip change requests.
    c.set('principal', { kind: 'admin-token', rootRole: 'Admin' } as never)
    await next()
  })
  router.openapi(route('/forgot'), (c) => c.body(null, 200))
  router.openapi(route('/asked'), async (c) => {
    await requireDirectChangeAllowed(c, 'shop', 'production')
    return c.body(null, 200)
  })
  router.onError((_, c) => c.body(null, 500))

  it('fails instead of answering success when the handler never checked change requests', async () => {
    expect((await router.request('/forgot', { method: 'POST' })).status).toBe(500)
    expect((await router.request('/asked', { method: 'POST' })).status).toBe(200)
  })
})
