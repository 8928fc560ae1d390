import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, addToProject, createFlag, createProject, createSegment, createUser, enableFlag, ensureTagType, ok } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
  await ensureTagType(t, 'team')
})
afterAll(() => t.close())

const F = (project: string) => `/api/admin/projects/${project}/features`
const newFlag = async (project: string, body: Record<string, unknown> = {}) => (await createFlag(t, body, project)).name as string
const archive = (project: string, flag: string) => ok(t, 'DELETE', `${F(project)}/${flag}`)
const eventsOf = (flag: string) => t.query<{ type: string; project: string; environment: string | null; data: any; pre_data: any; tags: any }>('select type, project, environment, data, pre_data, tags from events where feature_name = $1 order by id', [flag])
const exists = async (flag: string) => (await t.query('select 1 from features where name = $1', [flag])).length > 0
const versionOf = async (flag: string) => (await t.query<{ version: number; archived: boolean }>('select version, archived_at is not null as archived from features where name = $1', [flag]))[0]

describe('DELETE /api/admin/archive/{featureName}', () => {
  it('deletes an archived flag with everything of it, and feature-deleted, keeping its events', async () => {
    const project = await createProject(t)
    const flag = await newFlag(project, { tags: [{ type: 'team', value: 'gone' }] })
    await enableFlag(t, flag, 'development', project)
    await ok(t, 'POST', `${F(project)}/${flag}/favorites`)
    await archive(project, flag)
    const res = await t.call('DELETE', `/api/admin/archive/${flag}`)
    expect(res.status, res.text).toBe(200)
    expect(await exists(flag)).toBe(false)
    for (const table of ['feature_strategies', 'feature_environments', 'feature_tags', 'feature_lifecycles', 'favorite_features']) {
      expect(await t.query(`select 1 from ${table} where feature_name = $1`, [flag]), table).toEqual([])
    }
    const events = await eventsOf(flag)
    expect(events.map((e) => e.type)).toContain('feature-created')
    expect(events.at(-1)).toMatchObject({ type: 'feature-deleted', project, data: null, pre_data: { name: flag, project, archived: true }, tags: [{ type: 'team', value: 'gone' }] })
    expect((await t.call('GET', `/api/admin/events/${flag}`)).body.events[0]).toMatchObject({ type: 'feature-deleted' })
    // The name is free again.
    expect((await t.call('POST', F(project), { body: { name: flag } })).status).toBe(201)
  })

  it('refuses a live flag with 409 (archive it first) and an unknown one with 404', async () => {
    const project = await createProject(t)
    const flag = await newFlag(project)
    const res = await t.call('DELETE', `/api/admin/archive/${flag}`)
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ name: 'ConflictError', message: expect.stringContaining('archive') })
    expect(await exists(flag)).toBe(true)
    expect((await t.call('DELETE', '/api/admin/archive/no-such-flag')).status).toBe(404)
  })

  it('refuses a parent a live flag depends on; archived children lose their dependency with feature-dependency-removed', async () => {
    const project = await createProject(t)
    const parent = await newFlag(project)
    const liveChild = await newFlag(project)
    const archivedChild = await newFlag(project)
    await ok(t, 'POST', `${F(project)}/${liveChild}/dependencies`, { feature: parent })
    await ok(t, 'POST', `${F(project)}/${archivedChild}/dependencies`, { feature: parent })
    await archive(project, archivedChild)
    // A parent is archived only with its live children; reviving one of them leaves the parent archived with a live child.
    await ok(t, 'POST', `/api/admin/projects/${project}/archive`, { features: [parent, liveChild] })
    await ok(t, 'POST', `/api/admin/archive/revive/${liveChild}`)
    const refused = await t.call('DELETE', `/api/admin/archive/${parent}`)
    expect(refused.status).toBe(409)
    expect(refused.body.message).toContain(liveChild)
    await ok(t, 'DELETE', `${F(project)}/${liveChild}/dependencies`)
    expect((await t.call('DELETE', `/api/admin/archive/${parent}`)).status).toBe(200)
    expect(await t.query('select 1 from feature_dependencies where parent = $1', [parent])).toEqual([])
    expect((await eventsOf(archivedChild)).at(-1)).toMatchObject({ type: 'feature-dependency-removed', data: null, pre_data: { feature: parent } })
  })

  it('refuses a flag an open change request changes', async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = await newFlag(project)
    await ok(t, 'POST', `/api/admin/projects/${project}/environments/production/change-requests`, { feature: flag, action: 'updateEnabled', payload: { enabled: true } })
    await archive(project, flag)
    const res = await t.call('DELETE', `/api/admin/archive/${flag}`)
    expect(res.status).toBe(409)
    expect(res.body.message).toContain('change request')
  })

  it("is a 404 for a private project's flag to whom may not see it, and a 403 to one without DELETE_FEATURE", async () => {
    const vault = await createProject(t, { mode: 'private' })
    const flag = await newFlag(vault)
    await archive(vault, flag)
    const viewer = await createUser(t, 'Viewer')
    expect((await viewer.call('DELETE', `/api/admin/archive/${flag}`)).status).toBe(404)
    const open = await createProject(t)
    const other = await newFlag(open)
    await archive(open, other)
    const res = await viewer.call('DELETE', `/api/admin/archive/${other}`)
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('DELETE_FEATURE')
  })
})

describe('POST /api/admin/projects/{projectId}/delete', () => {
  it('deletes archived flags all together, parent and child alike', async () => {
    const project = await createProject(t)
    const parent = await newFlag(project)
    const child = await newFlag(project)
    await ok(t, 'POST', `${F(project)}/${child}/dependencies`, { feature: parent })
    await archive(project, child)
    await archive(project, parent)
    const res = await t.call('POST', `/api/admin/projects/${project}/delete`, { body: { features: [parent, child] } })
    expect(res.status, res.text).toBe(200)
    expect(await exists(parent)).toBe(false)
    expect(await exists(child)).toBe(false)
    // Each its feature-deleted, and no dependency event for a child deleted too.
    expect((await eventsOf(child)).at(-1)!.type).toBe('feature-deleted')
    expect((await eventsOf(parent)).at(-1)!.type).toBe('feature-deleted')
  })

  it('deletes nothing when one flag cannot go: live (409), of another project or unknown (404)', async () => {
    const project = await createProject(t)
    const archived = await newFlag(project)
    const live = await newFlag(project)
    await archive(project, archived)
    const elsewhere = await newFlag(await createProject(t))
    const path = `/api/admin/projects/${project}/delete`
    expect((await t.call('POST', path, { body: { features: [archived, live] } })).status).toBe(409)
    const notHere = await t.call('POST', path, { body: { features: [archived, elsewhere, 'nope-flag'] } })
    expect(notHere.status).toBe(404)
    expect(notHere.body.message).toContain(elsewhere)
    expect(await exists(archived)).toBe(true)
    expect((await eventsOf(archived)).at(-1)!.type).toBe('feature-archived')
  })

  it('answers 400 to a body that is not a list of names', async () => {
    const project = await createProject(t)
    const res = await t.call('POST', `/api/admin/projects/${project}/delete`, { body: { features: 'x' } })
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })
})

describe('POST /api/admin/projects/{projectId}/archive and /archive/validate', () => {
  it('refuses the single archive of a parent a live flag depends on (400, nothing written), as the bulk archive and Unleash do', async () => {
    const project = await createProject(t)
    const parent = await newFlag(project)
    const child = await newFlag(project)
    await ok(t, 'POST', `${F(project)}/${child}/dependencies`, { feature: parent })
    const before = await versionOf(parent)
    const res = await t.call('DELETE', `${F(project)}/${parent}`)
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.stringContaining(child) })
    expect(await versionOf(parent)).toEqual(before)
    expect((await eventsOf(parent)).filter((e) => e.type === 'feature-archived')).toEqual([])
    // Archived together, or once the child is archived, the parent goes.
    await archive(project, child)
    expect((await t.call('DELETE', `${F(project)}/${parent}`)).status).toBe(202)
  })

  it('refuses a patch archiving a parent a live flag depends on with the same 400 as the single archive, its other changes unmade', async () => {
    const project = await createProject(t)
    const parent = await newFlag(project, { description: 'before' })
    const child = await newFlag(project)
    await ok(t, 'POST', `${F(project)}/${child}/dependencies`, { feature: parent })
    const single = await t.call('DELETE', `${F(project)}/${parent}`)
    const patch = [
      { op: 'replace', path: '/description', value: 'after' },
      { op: 'replace', path: '/archived', value: true },
    ]
    // Twice: the first computes from a fresh read, the second from the state the app remembers of the flag.
    for (const attempt of [1, 2]) {
      const before = await versionOf(parent)
      const res = await t.call('PATCH', `${F(project)}/${parent}`, { body: patch })
      expect(res.status, `attempt ${attempt}: ${res.text}`).toBe(400)
      expect(res.body).toEqual({ ...single.body, id: expect.any(String) })
      expect(await versionOf(parent)).toEqual(before)
    }
    expect((await ok(t, 'GET', `${F(project)}/${parent}`)).body).toMatchObject({ description: 'before', archived: false })
    expect((await eventsOf(parent)).map((e) => e.type)).toEqual(['feature-created'])

    // The child archived, the patch archives the parent; revived and made to depend on another flag, it refuses that one's.
    await archive(project, child)
    const archived = await t.call('PATCH', `${F(project)}/${parent}`, { body: patch })
    expect(archived.status, archived.text).toBe(200)
    expect(archived.body).toMatchObject({ description: 'after', archived: true })
    expect((await eventsOf(parent)).map((e) => e.type)).toEqual(['feature-created', 'feature-metadata-updated', 'feature-archived'])
    const other = await newFlag(project)
    await ok(t, 'POST', `/api/admin/archive/revive/${child}`)
    await ok(t, 'DELETE', `${F(project)}/${child}/dependencies`)
    await ok(t, 'POST', `${F(project)}/${child}/dependencies`, { feature: other })
    expect((await t.call('PATCH', `${F(project)}/${other}`, { body: [{ op: 'replace', path: '/archived', value: true }] })).status).toBe(400)
  })

  it('archives live flags all together with feature-archived each, leaving archived ones alone', async () => {
    const project = await createProject(t)
    const a = await newFlag(project, { tags: [{ type: 'team', value: 'bulk' }] })
    const b = await newFlag(project)
    const already = await newFlag(project)
    await archive(project, already)
    const before = await versionOf(a)
    const res = await t.call('POST', `/api/admin/projects/${project}/archive`, { body: { features: [a, b, already] } })
    expect(res.status, res.text).toBe(202)
    expect((await versionOf(a))!.archived).toBe(true)
    expect((await versionOf(a))!.version).toBeGreaterThan(before!.version)
    expect((await t.call('GET', `${F(project)}/${b}`)).body).toMatchObject({ archived: true, lifecycle: { stage: 'archived' } })
    expect((await eventsOf(a)).at(-1)).toMatchObject({ type: 'feature-archived', project, data: { name: a, archived: true }, pre_data: { name: a, archived: false }, tags: [{ type: 'team', value: 'bulk' }] })
    expect((await eventsOf(already)).filter((e) => e.type === 'feature-archived')).toHaveLength(1)
  })

  it('refuses a parent whose live child stays (400), which validate tells beforehand, and archives nothing', async () => {
    const project = await createProject(t)
    const parent = await newFlag(project)
    const child = await newFlag(project)
    const other = await newFlag(project)
    await ok(t, 'POST', `${F(project)}/${child}/dependencies`, { feature: parent })
    const validate = await t.call('POST', `/api/admin/projects/${project}/archive/validate`, { body: { features: [parent, other] } })
    expect(validate.status).toBe(200)
    expect(validate.body).toEqual({ parentsWithChildFeatures: [parent], hasDeletedDependencies: false })
    const res = await t.call('POST', `/api/admin/projects/${project}/archive`, { body: { features: [parent, other] } })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(parent)
    expect((await versionOf(other))!.archived).toBe(false)
    expect((await t.call('POST', `/api/admin/projects/${project}/archive/validate`, { body: { features: [parent, child] } })).body.parentsWithChildFeatures).toEqual([])
    expect((await t.call('POST', `/api/admin/projects/${project}/archive`, { body: { features: [parent, child] } })).status).toBe(202)
  })

  it('is a 404 when a name is no flag of the project, archiving nothing', async () => {
    const project = await createProject(t)
    const mine = await newFlag(project)
    const elsewhere = await newFlag(await createProject(t))
    expect((await t.call('POST', `/api/admin/projects/${project}/archive`, { body: { features: [mine, elsewhere] } })).status).toBe(404)
    expect((await versionOf(mine))!.archived).toBe(false)
  })

  it('needs SKIP_CHANGE_REQUEST where the project requires change requests', async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = await newFlag(project)
    const editor = await createUser(t, 'Editor')
    const res = await editor.call('POST', `/api/admin/projects/${project}/archive`, { body: { features: [flag] } })
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('SKIP_CHANGE_REQUEST')
    expect((await versionOf(flag))!.archived).toBe(false)
    // Admins may skip them.
    expect((await t.call('POST', `/api/admin/projects/${project}/archive`, { body: { features: [flag] } })).status).toBe(202)
  })

  it("is a 404 for a private project to whom may not see it", async () => {
    const vault = await createProject(t, { mode: 'private' })
    const flag = await newFlag(vault)
    const viewer = await createUser(t, 'Viewer')
    for (const op of ['archive', 'archive/validate', 'revive', 'delete']) {
      expect((await viewer.call('POST', `/api/admin/projects/${vault}/${op}`, { body: { features: [flag] } })).status, op).toBe(404)
    }
  })
})

describe('POST /api/admin/projects/{projectId}/revive', () => {
  it('revives archived flags all together, each with every environment off', async () => {
    const project = await createProject(t)
    const a = await newFlag(project)
    const b = await newFlag(project)
    await addStrategy(t, a, 'development', { name: 'default' }, project)
    await enableFlag(t, a, 'development', project)
    await archive(project, a)
    await archive(project, b)
    const res = await t.call('POST', `/api/admin/projects/${project}/revive`, { body: { features: [a, b] } })
    expect(res.status, res.text).toBe(200)
    const flagA = (await t.call('GET', `${F(project)}/${a}`)).body
    expect(flagA.archived).toBe(false)
    expect(flagA.environments.every((e: { enabled: boolean }) => !e.enabled)).toBe(true)
    expect((await eventsOf(a)).slice(-2).map((e) => [e.type, e.environment])).toEqual([
      ['feature-revived', null],
      ['feature-environment-disabled', 'development'],
    ])
    expect((await eventsOf(b)).at(-1)).toMatchObject({ type: 'feature-revived', data: { name: b, archived: false }, pre_data: { name: b, archived: true } })
  })

  it('revives nothing when a name is no flag of the project', async () => {
    const project = await createProject(t)
    const a = await newFlag(project)
    await archive(project, a)
    expect((await t.call('POST', `/api/admin/projects/${project}/revive`, { body: { features: [a, 'nope-flag'] } })).status).toBe(404)
    expect((await versionOf(a))!.archived).toBe(true)
  })

  it('needs SKIP_CHANGE_REQUEST where the project requires change requests', async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = await newFlag(project)
    await archive(project, flag)
    const editor = await createUser(t, 'Editor')
    expect((await editor.call('POST', `/api/admin/projects/${project}/revive`, { body: { features: [flag] } })).status).toBe(403)
    expect((await versionOf(flag))!.archived).toBe(true)
  })
})

describe('POST /api/admin/projects/{projectId}/features/{featureName}/clone', () => {
  const clone = (project: string, flag: string, body: Record<string, unknown>) => t.call('POST', `${F(project)}/${flag}/clone`, { body })

  it('copies metadata, strategies (groupId replaced), their segments, variants and dependencies, every environment off', async () => {
    const project = await createProject(t)
    const parent = await newFlag(project)
    const source = await newFlag(project, { type: 'experiment', description: 'the original', impressionData: true, tags: [{ type: 'team', value: 'src' }] })
    const segment = (await createSegment(t, { constraints: [] })).id as number
    await addStrategy(t, source, 'development', { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: source }, segments: [segment] }, project)
    await addStrategy(t, source, 'production', { name: 'default' }, project)
    await enableFlag(t, source, 'development', project)
    await ok(t, 'PUT', `${F(project)}/${source}/environments/development/variants`, [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }])
    await ok(t, 'POST', `${F(project)}/${source}/dependencies`, { feature: parent })
    const copy = `${source}-copy`
    const res = await clone(project, source, { name: copy })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`${F(project)}/${copy}`)
    expect(res.body).toMatchObject({ name: copy, project, type: 'experiment', description: 'the original', impressionData: true, tags: [], dependencies: [{ feature: parent, enabled: true }] })
    const dev = res.body.environments.find((e: { name: string }) => e.name === 'development')
    expect(res.body.environments.every((e: { enabled: boolean }) => !e.enabled)).toBe(true)
    expect(dev.strategies).toMatchObject([{ name: 'flexibleRollout', parameters: { rollout: '50', groupId: copy }, segments: [segment] }])
    expect(dev.variants).toMatchObject([{ name: 'blue', weight: 1000 }])
    const sourceDev = (await t.call('GET', `${F(project)}/${source}`)).body.environments.find((e: { name: string }) => e.name === 'development')
    expect(dev.strategies[0].id).not.toBe(sourceDev.strategies[0].id)
    expect(sourceDev.strategies[0].parameters.groupId).toBe(source)
    const events = await eventsOf(copy)
    expect(events.map((e) => e.type).sort()).toEqual(['feature-created', 'feature-dependency-added', 'feature-environment-variants-updated', 'feature-strategy-add', 'feature-strategy-add'])
    expect(events[0]).toMatchObject({ type: 'feature-created', project, data: { name: copy, type: 'experiment' } })
    expect(events.find((e) => e.type === 'feature-strategy-add' && e.environment === 'development')!.data).toMatchObject({ name: 'flexibleRollout', parameters: { groupId: copy }, segments: [segment] })
  })

  it('keeps groupId when replaceGroupId is false', async () => {
    const project = await createProject(t)
    const source = await newFlag(project)
    await addStrategy(t, source, 'development', { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'shared' } }, project)
    const res = await clone(project, source, { name: `${source}-same-group`, replaceGroupId: false })
    expect(res.status).toBe(201)
    expect(res.body.environments.find((e: { name: string }) => e.name === 'development').strategies[0].parameters.groupId).toBe('shared')
  })

  it('refuses a taken name (409), a name against the naming pattern or over the flag limit (400), an unknown or archived source (404), a bad body (400)', async () => {
    const project = await createProject(t)
    const source = await newFlag(project, { name: `shop-${Date.now()}` })
    await ok(t, 'PUT', `/api/admin/projects/${project}`, { name: project, featureNaming: { pattern: 'shop-.*' } })
    expect((await clone(project, source, { name: source })).status).toBe(409)
    const badName = await clone(project, source, { name: 'not-shop' })
    expect(badName.status).toBe(400)
    expect(badName.body.message).toContain('naming pattern')
    expect((await clone(project, 'shop-nope', { name: 'shop-x1' })).status).toBe(404)
    expect((await clone(project, source, {})).status).toBe(400)
    const limited = await createProject(t)
    const only = await newFlag(limited)
    await ok(t, 'PUT', `/api/admin/projects/${limited}`, { name: limited, featureLimit: 1 })
    const overLimit = await clone(limited, only, { name: `${only}-2` })
    expect(overLimit.status).toBe(400)
    expect(overLimit.body.message).toContain('limit')
    await archive(limited, only)
    expect((await clone(limited, only, { name: `${only}-3` })).status).toBe(404)
    expect(await exists(`${only}-2`)).toBe(false)
  })

  it("is a 404 for a private project's flag to whom may not see it, and a 403 without CREATE_FEATURE", async () => {
    const vault = await createProject(t, { mode: 'private' })
    const flag = await newFlag(vault)
    const viewer = await createUser(t, 'Viewer')
    expect((await viewer.call('POST', `${F(vault)}/${flag}/clone`, { body: { name: `${flag}-x` } })).status).toBe(404)
    const open = await createProject(t)
    const other = await newFlag(open)
    expect((await viewer.call('POST', `${F(open)}/${other}/clone`, { body: { name: `${other}-x` } })).status).toBe(403)
  })
})

describe('POST /api/admin/projects/{projectId}/features/{featureName}/changeProject', () => {
  const move = (project: string, flag: string, newProjectId: string, as?: { call: TestApp['call'] }) => (as ?? t).call('POST', `${F(project)}/${flag}/changeProject`, { body: { newProjectId } })

  it("moves a flag with feature-project-change, taking the target's environments", async () => {
    const from = await createProject(t)
    const to = await createProject(t, { environments: ['development'] })
    const flag = await newFlag(from, { tags: [{ type: 'team', value: 'mover' }] })
    await addStrategy(t, flag, 'development', { name: 'default' }, from)
    await enableFlag(t, flag, 'development', from)
    const before = await versionOf(flag)
    const res = await move(from, flag, to)
    expect(res.status, res.text).toBe(200)
    expect((await t.call('GET', `${F(from)}/${flag}`)).status).toBe(404)
    const moved = (await t.call('GET', `${F(to)}/${flag}`)).body
    expect(moved.project).toBe(to)
    expect(moved.environments.map((e: { name: string; enabled: boolean }) => [e.name, e.enabled])).toEqual([['development', true]])
    expect((await versionOf(flag))!.version).toBeGreaterThan(before!.version)
    expect((await eventsOf(flag)).at(-1)).toMatchObject({ type: 'feature-project-change', project: to, data: { oldProject: from, newProject: to }, tags: [{ type: 'team', value: 'mover' }] })
  })

  it('refuses a target lacking an environment the flag has strategies in, a segment of the old project, dependencies, an open change request', async () => {
    const from = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const devOnly = await createProject(t, { environments: ['development'] })
    const to = await createProject(t)
    const inProd = await newFlag(from)
    await addStrategy(t, inProd, 'production', { name: 'default' }, from)
    const lacking = await move(from, inProd, devOnly)
    expect(lacking.status).toBe(400)
    expect(lacking.body.message).toContain('production')

    const segment = (await createSegment(t, { project: from, constraints: [] })).id as number
    const segmented = await newFlag(from)
    await addStrategy(t, segmented, 'development', { name: 'default', segments: [segment] }, from)
    expect((await move(from, segmented, to)).status).toBe(400)

    const parent = await newFlag(from)
    const child = await newFlag(from)
    await ok(t, 'POST', `${F(from)}/${child}/dependencies`, { feature: parent })
    expect((await move(from, child, to)).status).toBe(409)
    expect((await move(from, parent, to)).status).toBe(409)

    const pending = await newFlag(from)
    await ok(t, 'POST', `/api/admin/projects/${from}/environments/production/change-requests`, { feature: pending, action: 'updateEnabled', payload: { enabled: true } })
    const refused = await move(from, pending, to)
    expect(refused.status).toBe(409)
    expect(refused.body.message).toContain('change request')

    for (const flag of [inProd, segmented, child, parent, pending]) expect((await t.call('GET', `${F(from)}/${flag}`)).body.project).toBe(from)
  })

  it('answers 404 for an unknown or archived target, 400 for the same project or a bad body', async () => {
    const from = await createProject(t)
    const flag = await newFlag(from)
    expect((await move(from, flag, 'no-such-project')).status).toBe(404)
    expect((await move(from, flag, from)).status).toBe(400)
    expect((await t.call('POST', `${F(from)}/${flag}/changeProject`, { body: {} })).status).toBe(400)
    expect((await move(from, 'no-such-flag', await createProject(t))).status).toBe(404)
  })

  it('needs SKIP_CHANGE_REQUEST where either project requires change requests, and hides private targets', async () => {
    const from = await createProject(t)
    const guarded = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = await newFlag(from)
    const editor = await createUser(t, 'Editor')
    const res = await move(from, flag, guarded, editor)
    expect(res.status).toBe(403)
    expect(res.body.message).toContain('SKIP_CHANGE_REQUEST')
    const vault = await createProject(t, { mode: 'private' })
    // A Member of the flag's project, with no role in the vault, finds no such project.
    const member = await createUser(t, 'Viewer')
    await addToProject(t, from, member.id)
    const hidden = await move(from, flag, vault, member)
    expect(hidden.status).toBe(404)
    expect(hidden.body.message).toContain(vault)
    expect((await t.call('GET', `${F(from)}/${flag}`)).body.project).toBe(from)
  })
})

describe('moving into a project with rules', () => {
  it("refuses a flag against the target's naming pattern or over its flag limit (400)", async () => {
    const from = await createProject(t)
    const flag = await newFlag(from)
    const patterned = await createProject(t)
    await ok(t, 'PUT', `/api/admin/projects/${patterned}`, { name: patterned, featureNaming: { pattern: 'only-this-.*' } })
    const res = await t.call('POST', `${F(from)}/${flag}/changeProject`, { body: { newProjectId: patterned } })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain('naming pattern')
    const full = await createProject(t)
    await newFlag(full)
    await ok(t, 'PUT', `/api/admin/projects/${full}`, { name: full, featureLimit: 1 })
    const over = await t.call('POST', `${F(from)}/${flag}/changeProject`, { body: { newProjectId: full } })
    expect(over.status).toBe(400)
    expect(over.body.message).toContain('limit')
    expect((await t.call('GET', `${F(from)}/${flag}`)).body.project).toBe(from)
  })
})
