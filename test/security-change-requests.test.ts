import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireDirectChangeAllowed } from '../src/change-requests/guard.js'
import { adminRoute, createRouter } from '../src/http/openapi.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, addToProject, createFlag, createProject, createSegment, createToken, enableFlag, expectSkipNeeded, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * Each test makes a project that requires change requests in production. Whoever may not skip them (a project
 * Member, an Editor, a project Owner) must not change what production SDKs receive by any direct write; an admin
 * may, and so may an applied change request.
 */

let t: TestApp
let reviewer: string
/** Project Member of each guarded project (root Viewer). */
let mia: TestUser
/** Root Editor: may change segments and flags everywhere, not skip change requests. */
let ed: TestUser
/** Project Owner of each guarded project (root Viewer). */
let olga: TestUser

beforeAll(async () => {
  t = await createTestApp()
  reviewer = (await createToken(t, { tokenName: 'reviewer', type: 'admin' })).secret
  mia = await createSignedInUser(t, 'mia', 'Viewer')
  ed = await createSignedInUser(t, 'ed', 'Editor')
  olga = await createSignedInUser(t, 'olga', 'Viewer')
})
afterAll(() => t.close())

/**
 * A fresh project requiring change requests (one approval) in production, with mia as Member and olga as Owner,
 * and a production SDK token of the project.
 */
async function guarded() {
  const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
  const P = `/api/admin/projects/${project}`
  const F = `${P}/features`
  await addToProject(t, project, mia.id, 'Member')
  await addToProject(t, project, olga.id, 'Owner')
  const sdk = (await createToken(t, { type: 'client', environment: 'production', projects: [project] })).secret as string
  const production = async () => {
    // A client spec that knows segments, so they come as their own list.
    const res = await t.call('GET', '/api/client/features', { token: sdk, headers: { 'unleash-client-spec': '5.0.0' } })
    expect(res.status, res.text).toBe(200)
    return { features: res.body.features, segments: res.body.segments }
  }
  return {
    project,
    P,
    F,
    sdk,
    production,
    flagInProduction: async (name: string) => (await production()).features.find((f: any) => f.name === name),
    /** A fresh flag of the project, on in production. */
    flag: async () => {
      const name = (await createFlag(t, {}, project)).name as string
      await enableFlag(t, name, 'production', project)
      return name
    },
    /** Proposes the changes as `author`, has the reviewer token approve, and applies them as the author. */
    throughChangeRequest: async (author: TestUser, changes: unknown) => {
      const draft = await author.call('POST', `${P}/environments/production/change-requests`, { body: changes })
      expect(draft.status, draft.text).toBe(200)
      const id = draft.body.id as number
      expect((await author.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'In review' } })).status).toBe(200)
      const approved = await t.call('POST', `${P}/change-requests/${id}/approve`, { token: reviewer })
      expect(approved.status, approved.text).toBe(200)
      const applied = await author.call('PUT', `${P}/change-requests/${id}/state`, { body: { state: 'Applied' } })
      expect(applied.status, applied.text).toBe(200)
      expect(applied.body.state).toBe('Applied')
    },
  }
}

describe('archiving a flag of a protected environment', () => {
  it('refuses DELETE and PATCH /archived to a project Member with 403 naming SKIP_CHANGE_REQUEST, and production SDKs still get the flag', async () => {
    const g = await guarded()
    const doomed = await g.flag()
    const before = await g.production()
    expectSkipNeeded(await mia.call('DELETE', `${g.F}/${doomed}`))
    expectSkipNeeded(await mia.call('PATCH', `${g.F}/${doomed}`, { body: [{ op: 'replace', path: '/archived', value: true }] }))
    expect(await g.production()).toEqual(before)
    expect(await g.flagInProduction(doomed)).toBeDefined()
  })

  it('archives through an applied archiveFeature change request', async () => {
    const g = await guarded()
    const doomed = await g.flag()
    await g.throughChangeRequest(mia, { feature: doomed, action: 'archiveFeature' })
    expect(await g.flagInProduction(doomed)).toBeUndefined()
  })

  it('refuses reviving a flag of the project to an Editor, and lets an admin revive it', async () => {
    const g = await guarded()
    const revived = await g.flag()
    expect((await t.call('DELETE', `${g.F}/${revived}`)).status).toBe(202)
    const before = await g.production()
    expectSkipNeeded(await ed.call('POST', `/api/admin/archive/revive/${revived}`))
    expect(await g.production()).toEqual(before)
    expect((await t.call('POST', `/api/admin/archive/revive/${revived}`)).status).toBe(200)
    expect(await g.flagInProduction(revived)).toMatchObject({ enabled: false })
  })

  it('lets an admin (who may skip change requests) archive directly', async () => {
    const g = await guarded()
    const flag = await g.flag()
    expect((await t.call('DELETE', `${g.F}/${flag}`)).status).toBe(202)
    expect(await g.flagInProduction(flag)).toBeUndefined()
  })
})

describe('flag metadata that SDKs receive', () => {
  it('refuses a Member a patch of impressionData, stale or type, and leaves production unchanged', async () => {
    const g = await guarded()
    const meta = await g.flag()
    const before = await g.production()
    for (const body of [
      [{ op: 'replace', path: '/impressionData', value: true }],
      [{ op: 'replace', path: '/stale', value: true }],
      [{ op: 'replace', path: '/type', value: 'kill-switch' }],
      [{ op: 'replace', path: '/description', value: 'x' }, { op: 'replace', path: '/stale', value: true }],
    ]) {
      expectSkipNeeded(await mia.call('PATCH', `${g.F}/${meta}`, { body }))
    }
    expect(await g.production()).toEqual(before)
  })

  it('lets a Member change the description alone, which SDKs never receive', async () => {
    const g = await guarded()
    const meta = await g.flag()
    const before = await g.production()
    const res = await mia.call('PATCH', `${g.F}/${meta}`, { body: [{ op: 'replace', path: '/description', value: 'only words' }] })
    expect(res.status, res.text).toBe(200)
    expect(res.body.description).toBe('only words')
    expect((await g.production()).features).toEqual(before.features)
  })

  it('lets an admin patch impressionData directly', async () => {
    const g = await guarded()
    const meta = await g.flag()
    expect((await t.call('PATCH', `${g.F}/${meta}`, { body: [{ op: 'replace', path: '/impressionData', value: true }] })).status).toBe(200)
    expect(await g.flagInProduction(meta)).toMatchObject({ impressionData: true })
  })
})

describe('dependencies', () => {
  it('refuses a Member adding or removing a dependency, and production SDKs see no dependency change', async () => {
    const g = await guarded()
    const [parent, child] = [await g.flag(), await g.flag()]
    const before = await g.production()
    expectSkipNeeded(await mia.call('POST', `${g.F}/${child}/dependencies`, { body: { feature: parent } }))
    expect(await g.production()).toEqual(before)

    expect((await t.call('POST', `${g.F}/${child}/dependencies`, { body: { feature: parent } })).status).toBe(200)
    const withDependency = await g.production()
    expect(withDependency.features.find((f: any) => f.name === child).dependencies).toEqual([{ feature: parent, enabled: true, variants: [] }])
    expectSkipNeeded(await mia.call('DELETE', `${g.F}/${child}/dependencies/${parent}`))
    expectSkipNeeded(await mia.call('DELETE', `${g.F}/${child}/dependencies`))
    expect(await g.production()).toEqual(withDependency)
  })

  it('removes and adds dependencies through applied change requests', async () => {
    const g = await guarded()
    const [parent, child] = [await g.flag(), await g.flag()]
    await ok(t, 'POST', `${g.F}/${child}/dependencies`, { feature: parent })
    await g.throughChangeRequest(mia, { feature: child, action: 'deleteDependency', payload: { feature: parent } })
    expect((await g.flagInProduction(child)).dependencies).toBeUndefined()
    await g.throughChangeRequest(mia, { feature: child, action: 'addDependency', payload: { feature: parent, enabled: false } })
    expect((await g.flagInProduction(child)).dependencies).toEqual([{ feature: parent, enabled: false }])
  })
})

describe('segments used by strategies', () => {
  const constraints = [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }]
  /** A guarded project with a flag whose strategy uses a segment in `environment`. */
  async function segmentUsedIn(environment: string) {
    const g = await guarded()
    const segment = await createSegment(t, { constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] })
    const flag = await g.flag()
    await addStrategy(t, flag, environment, { name: 'default', segments: [segment.id] }, g.project)
    return { ...g, segment: segment as { id: number; name: string } }
  }

  it('refuses an Editor updating a segment a production strategy uses, and production SDKs keep the old segment', async () => {
    const { segment, production } = await segmentUsedIn('production')
    const before = await production()
    expectSkipNeeded(await ed.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segment.name, constraints } }))
    expectSkipNeeded(await ed.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: 'renamed', constraints: before.segments[0].constraints } }))
    expectSkipNeeded(await ed.call('DELETE', `/api/admin/segments/${segment.id}`))
    expect(await production()).toEqual(before)
  })

  it('lets an Editor update a segment used only where change requests are not required', async () => {
    const { segment } = await segmentUsedIn('development')
    const res = await ed.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segment.name, constraints } })
    expect(res.status, res.text).toBe(204)
  })

  it('lets an admin update a segment used in production', async () => {
    const { segment, production } = await segmentUsedIn('production')
    expect((await t.call('PUT', `/api/admin/segments/${segment.id}`, { body: { name: segment.name, constraints } })).status).toBe(204)
    expect((await production()).segments).toEqual([{ id: segment.id, name: segment.name, constraints: [expect.objectContaining({ values: ['1', '2'] })] }])
  })
})

describe('tags', () => {
  it('refuses a Member tagging or untagging a flag, which would add it to or drop it from tag-filtered SDK payloads', async () => {
    const g = await guarded()
    const tagged = await g.flag()
    const filtered = async () => (await t.call('GET', '/api/client/features?tag=simple:launch', { token: g.sdk })).body.features.map((f: any) => f.name)
    expect(await filtered()).toEqual([])
    expectSkipNeeded(await mia.call('POST', `/api/admin/features/${tagged}/tags`, { body: { value: 'launch' } }))
    expect(await filtered()).toEqual([])
    expect((await t.call('POST', `/api/admin/features/${tagged}/tags`, { body: { value: 'launch' } })).status).toBe(201)
    expect(await filtered()).toEqual([tagged])
    expectSkipNeeded(await mia.call('DELETE', `/api/admin/features/${tagged}/tags/simple/launch`))
    expect(await filtered()).toEqual([tagged])
  })
})

describe('switching the protection off', () => {
  it('refuses a project Owner turning change requests off in production or lowering its approvals', async () => {
    const { P, F, flag } = await guarded()
    const other = await flag()
    expect((await t.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 2 } })).status).toBe(200)
    const before = (await t.call('GET', `${P}/change-requests/config`)).body
    expectSkipNeeded(await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: false } }))
    expectSkipNeeded(await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 1 } }))
    expectSkipNeeded(await ed.call('PUT', `${P}/change-requests/config`, { body: [{ environment: 'development', changeRequestsEnabled: true }, { environment: 'production', changeRequestsEnabled: false }] }))
    expect((await t.call('GET', `${P}/change-requests/config`)).body).toEqual(before)
    // And the protection still holds for the Member afterwards.
    expectSkipNeeded(await mia.call('POST', `${F}/${other}/environments/production/off`))
  })

  it('lets a project Owner turn change requests on or require more approvals', async () => {
    const { P } = await guarded()
    const on = await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'development', changeRequestsEnabled: true, requiredApprovals: 1 } })
    expect(on.status, on.text).toBe(200)
    const more = await olga.call('PUT', `${P}/change-requests/config`, { body: { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 3 } })
    expect(more.status, more.text).toBe(200)
    expect(more.body.find((e: any) => e.environment === 'production')).toMatchObject({ changeRequestsEnabled: true, requiredApprovals: 3 })
  })

  it('lets an admin turn change requests off, after which the Member may archive directly', async () => {
    const { P, F, flag, flagInProduction } = await guarded()
    const meta = await flag()
    const off = await t.call('PUT', `${P}/change-requests/config`, { body: [{ environment: 'production', changeRequestsEnabled: false }, { environment: 'development', changeRequestsEnabled: false }] })
    expect(off.status, off.text).toBe(200)
    expect((await mia.call('DELETE', `${F}/${meta}`)).status).toBe(202)
    expect(await flagInProduction(meta)).toBeUndefined()
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
