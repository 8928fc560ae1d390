import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, createSegment, enableFlag, ensureTagType, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

let t: TestApp
let viewer: TestUser
beforeAll(async () => {
  t = await createTestApp()
  await ensureTagType(t, 'team')
  viewer = await createSignedInUser(t, 'import-viewer', 'Viewer')
})
afterAll(() => t.close())

const EXPORT = '/api/admin/features-batch/export'
const VALIDATE = '/api/admin/features-batch/validate'
const features = (project: string) => `/api/admin/projects/${project}/features`

/** A project with a parent flag (a rollout constrained on a fresh context field, a segment, variants, a tag, on in development) and a child depending on it. */
async function exportedProject() {
  const project = await createProject(t)
  const field = (await ok(t, 'POST', '/api/admin/context', { name: fresh('tier'), legalValues: [{ value: 'gold' }] })).body.name as string
  const segment = await createSegment(t, { name: fresh('beta'), constraints: [] })
  const parent = (await createFlag(t, { description: 'the parent' }, project)).name as string
  const child = (await createFlag(t, {}, project)).name as string
  const strategy = await addStrategy(
    t,
    parent,
    'development',
    { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: parent }, constraints: [{ contextName: field, operator: 'IN', values: ['gold'] }], segments: [segment.id] },
    project,
  )
  await ok(t, 'PUT', `${features(project)}/${parent}/environments/development/variants`, [{ name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default' }])
  await enableFlag(t, parent, 'development', project)
  await ok(t, 'POST', `/api/admin/features/${parent}/tags`, { type: 'team', value: 'payments' })
  await ok(t, 'POST', `${features(project)}/${child}/dependencies`, { feature: parent })
  return { project, field, segment, parent, child, strategy }
}

const lastEvents = async (after: number) => t.query<{ type: string; data: any; created_by: string }>('select type, data, created_by from events where id > $1 order by id', [after])
const maxEventId = async () => (await t.query<{ max: number }>('select coalesce(max(id), 0)::int as max from events'))[0]!.max

describe('POST /api/admin/features-batch/export', () => {
  it("exports a project's flags with what importing them needs, and records features-exported with the export", async () => {
    const { project, field, segment, parent, child, strategy } = await exportedProject()
    const before = await maxEventId()
    const res = await ok(t, 'POST', EXPORT, { environment: 'development', project })
    const body = res.body
    expect(body.features).toEqual([
      { name: child, type: 'release', description: null, project, stale: false, impressionData: false, archived: false },
      { name: parent, type: 'release', description: 'the parent', project, stale: false, impressionData: false, archived: false },
    ].sort((a, b) => a.name.localeCompare(b.name)))
    expect(body.featureStrategies).toEqual([
      {
        id: strategy.id,
        name: 'flexibleRollout',
        title: null,
        disabled: false,
        featureName: parent,
        sortOrder: 0,
        segments: [segment.id],
        constraints: [{ contextName: field, operator: 'IN', values: ['gold'], caseInsensitive: false, inverted: false }],
        variants: [],
        parameters: { rollout: '50', stickiness: 'default', groupId: parent },
      },
    ])
    const parentEnv = body.featureEnvironments.find((e: { name: string }) => e.name === parent)
    expect(parentEnv).toMatchObject({ featureName: parent, environment: 'development', enabled: true, variants: [{ name: 'blue', weight: 1000 }] })
    expect(body.featureEnvironments.find((e: { name: string }) => e.name === child)).toMatchObject({ enabled: false, variants: [] })
    expect(body.contextFields.map((c: { name: string }) => c.name)).toContain(field)
    expect(body.contextFields.find((c: { name: string }) => c.name === field).legalValues).toEqual([{ value: 'gold' }])
    expect(body.featureTags).toEqual([{ featureName: parent, tagType: 'team', tagValue: 'payments' }])
    expect(body.tagTypes.map((tt: { name: string }) => tt.name)).toEqual(['team'])
    expect(body.segments).toEqual([{ id: segment.id, name: segment.name }])
    expect(body.dependencies).toEqual([{ feature: child, dependencies: [{ feature: parent, enabled: true, variants: [] }] }])
    const events = await lastEvents(before)
    expect(events.map((e) => e.type)).toEqual(['features-exported'])
    expect(events[0]!.data).toEqual(body)
    expect(events[0]!.created_by).toBe('test-admin')
  })

  it('selects by names, by a tag value, and answers an attachment when asked', async () => {
    const { project, parent, child } = await exportedProject()
    expect((await ok(t, 'POST', EXPORT, { environment: 'production', features: [child] })).body.features.map((f: { name: string }) => f.name)).toEqual([child])
    const byTag = (await ok(t, 'POST', EXPORT, { environment: 'production', tag: 'payments' })).body
    expect(byTag.features.map((f: { name: string }) => f.name)).toContain(parent)
    expect(byTag.features.map((f: { name: string }) => f.name)).not.toContain(child)
    // Strategies and switches are the environment's: none in production.
    expect(byTag.featureStrategies.filter((s: { featureName: string }) => s.featureName === parent)).toEqual([])
    const download = await ok(t, 'POST', EXPORT, { environment: 'development', project, downloadFile: true })
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="export-\d{4}-\d{2}-\d{2}\.json"$/)
  })

  it('leaves out the flags of private projects the caller may not read, as unknown names', async () => {
    const hidden = await createProject(t, { mode: 'private' })
    const secret = (await createFlag(t, {}, hidden)).name as string
    const open = (await createFlag(t)).name as string
    const asViewer = await viewer.call('POST', EXPORT, { body: { environment: 'development', features: [secret, open, 'no-such-flag'] } })
    expect(asViewer.status, asViewer.text).toBe(200)
    expect(asViewer.body.features.map((f: { name: string }) => f.name)).toEqual([open])
    expect((await viewer.call('POST', EXPORT, { body: { environment: 'development', project: hidden } })).body.features).toEqual([])
    expect((await ok(t, 'POST', EXPORT, { environment: 'development', features: [secret] })).body.features.map((f: { name: string }) => f.name)).toEqual([secret])
    // The admin's export held the private flag: its event is for admins only, never in a Viewer's event log.
    const seen = await viewer.call('GET', '/api/admin/search/events?type=IS:features-exported&limit=100')
    expect(seen.status, seen.text).toBe(200)
    expect(JSON.stringify(seen.body)).not.toContain(secret)
    expect(seen.body.events).toEqual([])
  })

  it('answers 404 for an unknown environment and 400 without one, recording nothing', async () => {
    const before = await maxEventId()
    const unknown = await t.call('POST', EXPORT, { body: { environment: 'no-such-env', features: [] } })
    expect(unknown.status).toBe(404)
    expect(unknown.body.name).toBe('NotFoundError')
    const missing = await t.call('POST', EXPORT, { body: { features: [] } })
    expect(missing.status).toBe(400)
    expect(missing.body.name).toBe('ValidationError')
    expect(await lastEvents(before)).toEqual([])
  })
})

/** An import of the given parts into `project`'s development. */
const importOf = (project: string, data: Record<string, unknown>) => ({ project, environment: 'development', data: { features: [], featureStrategies: [], tagTypes: [], ...data } })

describe('POST /api/admin/features-batch/validate', () => {
  it('reports nothing for an export of one project into another, and records nothing', async () => {
    const { project } = await exportedProject()
    const data = (await ok(t, 'POST', EXPORT, { environment: 'development', project })).body
    const target = await createProject(t)
    const before = await maxEventId()
    const res = await ok(t, 'POST', VALIDATE, { project: target, environment: 'development', data: { ...data, features: data.features.map((f: object) => ({ ...f, project: target })) } })
    // The flags exist in the source project: importing them elsewhere is an error, as in Unleash.
    expect(res.body.errors).toEqual([
      {
        message: `You cannot import a features that already exist in other projects. You already have the following features defined outside of project ${target}:`,
        affectedItems: data.features.map((f: { name: string }) => `${f.name} (in project ${project})`),
      },
    ])
    expect(res.body.warnings).toEqual([])
    expect(res.body.permissions).toEqual([])
    expect(await lastEvents(before)).toEqual([])
  })

  it('reports each error in Unleash’s words', async () => {
    const project = await createProject(t)
    await ok(t, 'PUT', `/api/admin/projects/${project}`, { name: project, featureLimit: 1, featureNaming: { pattern: 'imp-.*', example: 'imp-one' } })
    const segmentName = fresh('no-such-segment')
    const field = (await ok(t, 'POST', '/api/admin/context', { name: fresh('plan'), legalValues: [{ value: 'free' }] })).body.name as string
    const res = await ok(
      t,
      'POST',
      VALIDATE,
      importOf(project, {
        features: [{ name: 'imp-a' }, { name: 'imp-a' }, { name: 'other-b' }],
        featureStrategies: [{ name: 'no-such-strategy', featureName: 'imp-a' }],
        contextFields: [{ name: field, legalValues: [{ value: 'free' }, { value: 'pro' }] }],
        segments: [{ id: 999, name: segmentName }],
        dependencies: [{ feature: 'imp-a', dependencies: [{ feature: 'no-such-parent' }] }],
      }),
    )
    const messages = res.body.errors.map((e: { message: string; affectedItems: string[] }) => [e.message.split(' ').slice(0, 8).join(' '), e.affectedItems])
    expect(messages).toEqual([
      ['We detected the following custom strategy in the', ['no-such-strategy']],
      ['We detected the following context fields that do', [field]],
      ['We detected the following features are duplicate in', ['imp-a']],
      ['Features imported into this project must match the', ['other-b']],
      ['We detected you want to create 2 new', []],
      ['We detected the following segments in the import', [segmentName]],
      ['We detected the following dependencies that need to', ['no-such-parent']],
    ])
    expect(res.body.errors[3].message).toBe('Features imported into this project must match the project\'s feature naming pattern: "imp-.*". For example: "imp-one". The following features do not match the pattern:')
    expect(res.body.errors[4].message).toBe('We detected you want to create 2 new features to a project that already has 0 existing features, exceeding the maximum limit of 1.')
  })

  it('warns of custom strategy types, archived flags and flags it overwrites', async () => {
    const project = await createProject(t)
    const custom = (await ok(t, 'POST', '/api/admin/strategies', { name: fresh('tenant'), parameters: [] })).body.name as string
    const existing = (await createFlag(t, {}, project)).name as string
    const archived = (await createFlag(t, {}, project)).name as string
    await ok(t, 'DELETE', `${features(project)}/${archived}`)
    const segment = await createSegment(t, { name: fresh('global'), constraints: [] })
    const res = await ok(
      t,
      'POST',
      VALIDATE,
      importOf(project, {
        features: [{ name: existing }, { name: archived }],
        featureStrategies: [{ name: custom, featureName: existing, segments: [12345] }],
        segments: [{ id: 12345, name: segment.name }],
        dependencies: [{ feature: archived, dependencies: [{ feature: existing }] }],
      }),
    )
    expect(res.body.errors).toEqual([])
    expect(res.body.warnings).toEqual([
      { message: 'The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:', affectedItems: [custom] },
      { message: 'The following features will not be imported as they are currently archived. To import them, please unarchive them first:', affectedItems: [archived] },
      { message: 'The following features already exist in this project and will be overwritten:', affectedItems: [existing] },
      // The archived flag is left out, and so is its dependency, as Unleash leaves it out: said rather than dropped silently.
      { message: 'The following flags have dependencies in the import file that will not be imported, as the flags themselves are not imported:', affectedItems: [archived] },
    ])
  })

  it('lists the permissions the caller lacks, and is a 404 for a project they may not see', async () => {
    const project = await createProject(t)
    const res = await viewer.call('POST', VALIDATE, {
      body: importOf(project, { features: [{ name: fresh('new') }], featureStrategies: [{ name: 'default' }], tagTypes: [{ name: fresh('colour') }], featureEnvironments: [{ enabled: true, variants: [{ name: 'a' }] }] }),
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body.permissions).toEqual([
      {
        message: 'We detected you are missing the following permissions:',
        affectedItems: ['Update feature flag', 'Create tag type', 'Create activation strategies', 'Update variants', 'Create feature flag'],
      },
    ])
    const guarded = await createProject(t, { changeRequestEnvironments: [{ name: 'development' }] })
    const member = await createSignedInUser(t, fresh('member'), 'Editor')
    const asEditor = await member.call('POST', VALIDATE, { body: importOf(guarded, {}) })
    expect(asEditor.body.permissions).toEqual([{ message: 'We detected you are missing the following permissions:', affectedItems: ['Skip change request process'] }])

    const hidden = await createProject(t, { mode: 'private' })
    const refused = await viewer.call('POST', VALIDATE, { body: importOf(hidden, {}) })
    expect(refused.status).toBe(404)
    expect(refused.body.name).toBe('NotFoundError')
    expect((await t.call('POST', VALIDATE, { body: { ...importOf(project, {}), environment: 'no-such-env' } })).status).toBe(404)
    // A malformed document: every problem in errors (test/accept-unleash-inputs.test.ts), not a 400 hiding the rest.
    const bad = await t.call('POST', VALIDATE, { body: { project, environment: 'development', data: { features: [] } } })
    expect(bad.status).toBe(200)
    expect(bad.body.errors.length).toBeGreaterThan(0)
  })
})

const IMPORT = '/api/admin/features-batch/import'

/** An export with its flags renamed (flag names are unique across projects, so an export goes to another project under new names). */
function renamed(data: any, to: (name: string) => string) {
  return {
    ...data,
    features: data.features.map((f: any) => ({ ...f, name: to(f.name) })),
    featureStrategies: data.featureStrategies.map((s: any) => ({ ...s, featureName: to(s.featureName) })),
    featureEnvironments: data.featureEnvironments.map((e: any) => ({ ...e, name: to(e.name), featureName: to(e.featureName) })),
    featureTags: data.featureTags.map((t: any) => ({ ...t, featureName: to(t.featureName) })),
    dependencies: data.dependencies.map((d: any) => ({ feature: to(d.feature), dependencies: d.dependencies.map((p: any) => ({ ...p, feature: to(p.feature) })) })),
  }
}
/** An export as it compares across projects and environments: without strategy ids, projects and environments. */
const comparable = (data: any) => ({
  ...data,
  features: data.features.map((f: any) => ({ ...f, project: 'any' })),
  featureStrategies: data.featureStrategies.map(({ id: _id, ...s }: any) => s),
  featureEnvironments: data.featureEnvironments.map((e: any) => ({ ...e, environment: 'any' })),
})

describe('POST /api/admin/features-batch/import', () => {
  it('round-trips: an export imported into another project and environment exports the same, with its events', async () => {
    const { project } = await exportedProject()
    const data = (await ok(t, 'POST', EXPORT, { environment: 'development', project })).body
    const target = await createProject(t)
    const to = (name: string) => `${name}-copy`
    const before = await maxEventId()
    const res = await t.call('POST', IMPORT, { body: { project: target, environment: 'production', data: renamed(data, to) } })
    expect(res.status, res.text).toBe(200)
    const again = (await ok(t, 'POST', EXPORT, { environment: 'production', project: target })).body
    expect(comparable(again)).toEqual(comparable(renamed(data, to)))
    const [parent, child] = [data.dependencies[0].dependencies[0].feature, data.dependencies[0].feature].map(to)
    const events = (await lastEvents(before)).filter((e) => e.type !== 'features-exported')
    expect(events.map((e) => e.type).sort()).toEqual(
      ['feature-created', 'feature-created', 'feature-strategy-add', 'feature-environment-variants-updated', 'feature-environment-enabled', 'feature-tagged', 'feature-dependency-added', 'features-imported'].sort(),
    )
    const rows = await t.query<{ type: string; feature_name: string | null; environment: string | null; project: string | null }>('select type, feature_name, environment, project from events where id > $1 order by id', [before])
    expect(rows.find((e) => e.type === 'feature-strategy-add')).toMatchObject({ feature_name: parent, environment: 'production', project: target })
    expect(rows.find((e) => e.type === 'feature-dependency-added')).toMatchObject({ feature_name: child, project: target })
    expect(rows.find((e) => e.type === 'features-imported')).toMatchObject({ environment: 'production', project: target })
    // Other environments of the project: the new flags are there, off.
    const dev = (await ok(t, 'POST', EXPORT, { environment: 'development', project: target })).body
    expect(dev.featureEnvironments.map((e: any) => e.enabled)).toEqual([false, false])
    expect(dev.featureStrategies).toEqual([])
  })

  it('replaces what existing flags of the project have in the environment, and moves their versions on', async () => {
    const { project, parent, child } = await exportedProject()
    const data = (await ok(t, 'POST', EXPORT, { environment: 'development', project })).body
    await ensureTagType(t, 'owner')
    // The flags change after the export: a second strategy, another tag, switched off, a new description.
    await addStrategy(t, parent, 'development', { name: 'default' }, project)
    await ok(t, 'POST', `/api/admin/features/${parent}/tags`, { type: 'owner', value: 'ops' })
    await ok(t, 'POST', `${features(project)}/${parent}/environments/development/off`)
    await ok(t, 'PATCH', `${features(project)}/${parent}`, [{ op: 'replace', path: '/description', value: 'changed' }])
    const version = (await t.query<{ version: number }>('select version from features where name = $1', [parent]))[0]!.version
    const before = await maxEventId()
    const res = await t.call('POST', IMPORT, { body: { project, environment: 'development', data } })
    expect(res.status, res.text).toBe(200)
    expect(comparable((await ok(t, 'POST', EXPORT, { environment: 'development', project })).body)).toEqual(comparable(data))
    const [after] = await t.query<{ version: number }>('select version from features where name = $1', [parent])
    expect(after!.version).toBeGreaterThan(version)
    const types = (await lastEvents(before)).map((e) => e.type).filter((type) => type !== 'features-exported')
    for (const type of ['feature-metadata-updated', 'feature-strategy-remove', 'feature-strategy-add', 'feature-untagged', 'feature-environment-enabled', 'features-imported']) expect(types).toContain(type)
    expect(types).not.toContain('feature-created')
    expect(types).not.toContain('feature-tagged')
    expect(child).toBeTruthy()
  })

  it('writes nothing when validate reports an error: 400 with its errors', async () => {
    const project = await createProject(t)
    const existing = (await createFlag(t, {}, project)).name as string
    const fresher = fresh('imported')
    const before = await maxEventId()
    const res = await t.call('POST', IMPORT, {
      body: importOf(project, {
        features: [{ name: existing, description: 'changed' }, { name: fresher }],
        featureStrategies: [{ name: 'default', featureName: fresher }, { name: 'no-such-strategy', featureName: existing }],
        tagTypes: [{ name: fresh('colour') }],
      }),
    })
    expect(res.status, res.text).toBe(400)
    expect(res.body.name).toBe('ValidationError')
    expect(res.body.details.map((d: { message: string }) => d.message)).toEqual(['We detected the following custom strategy in the import file that needs to be created first: no-such-strategy'])
    expect(await lastEvents(before)).toEqual([])
    expect(await t.query('select name from features where name = $1', [fresher])).toEqual([])
    expect((await t.query<{ description: string | null }>('select description from features where name = $1', [existing]))[0]!.description).toBeNull()
    const bad = await t.call('POST', IMPORT, { body: { project, environment: 'development', data: { features: [] } } })
    expect(bad.status).toBe(400)
  })

  it('skips archived flags as validate warns', async () => {
    const project = await createProject(t)
    const archived = (await createFlag(t, {}, project)).name as string
    await ok(t, 'DELETE', `${features(project)}/${archived}`)
    const res = await t.call('POST', IMPORT, { body: importOf(project, { features: [{ name: archived, description: 'revived?' }], featureStrategies: [{ name: 'default', featureName: archived }] }) })
    expect(res.status, res.text).toBe(200)
    expect(await t.query('select id from feature_strategies where feature_name = $1', [archived])).toEqual([])
  })

  it('is refused with 403 in an environment requiring change requests unless the caller may skip them, and needs the permissions validate lists', async () => {
    const guarded = await createProject(t, { changeRequestEnvironments: [{ name: 'development' }] })
    const member = await createSignedInUser(t, fresh('importer'), 'Editor')
    const open = await createProject(t)
    const before = await maxEventId()
    const refused = await member.call('POST', IMPORT, { body: importOf(guarded, { features: [{ name: fresh('imported') }] }) })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.name).toBe('NoAccessError')
    const asViewer = await viewer.call('POST', IMPORT, { body: importOf(open, { features: [{ name: fresh('imported') }] }) })
    expect(asViewer.status).toBe(403)
    expect(await lastEvents(before)).toEqual([])
    const asAdmin = await t.call('POST', IMPORT, { body: importOf(guarded, { features: [{ name: fresh('imported') }] }) })
    expect(asAdmin.status, asAdmin.text).toBe(200)
  })

  it('maps strategies’ segments by name to the target’s, and refuses bad variants and chained dependencies with 400, writing nothing', async () => {
    const project = await createProject(t)
    const segment = await createSegment(t, { name: fresh('mapped'), constraints: [] })
    const [a, b, c] = [fresh('imp'), fresh('imp'), fresh('imp')]
    const res = await t.call('POST', IMPORT, { body: importOf(project, { features: [{ name: a }], featureStrategies: [{ name: 'default', featureName: a, segments: [99999] }], segments: [{ id: 99999, name: segment.name }] }) })
    expect(res.status, res.text).toBe(200)
    expect(await t.query('select fss.segment_id from feature_strategy_segments fss join feature_strategies fs on fs.id = fss.strategy_id where fs.feature_name = $1', [a])).toEqual([{ segment_id: segment.id }])
    const before = await maxEventId()
    const badVariants = await t.call('POST', IMPORT, { body: importOf(project, { features: [{ name: b }], featureEnvironments: [{ featureName: b, enabled: false, variants: [{ name: 'no weight' }] }] }) })
    expect(badVariants.status, badVariants.text).toBe(400)
    expect(badVariants.body.name).toBe('ValidationError')
    const chained = await t.call('POST', IMPORT, {
      body: importOf(project, { features: [{ name: b }, { name: c }], dependencies: [{ feature: b, dependencies: [{ feature: a }] }, { feature: c, dependencies: [{ feature: b }] }] }),
    })
    expect(chained.status, chained.text).toBe(400)
    expect(await lastEvents(before)).toEqual([])
    expect(await t.query('select name from features where name = any($1)', [[b, c]])).toEqual([])
  })
})

describe('POST /api/admin/features-batch/import: nothing of the file is changed silently', () => {
  it('creates a flag the file says archived, archived, recording feature-created then feature-archived; a Viewer is told it needs to archive', async () => {
    const project = await createProject(t)
    const flag = fresh('was-archived')
    const file = importOf(project, { features: [{ name: flag, archived: true, stale: true }], featureStrategies: [{ name: 'default', featureName: flag }], featureEnvironments: [{ name: flag, featureName: flag, enabled: true }] })
    expect((await ok(t, 'POST', VALIDATE, file)).body.errors).toEqual([])
    const asViewer = await viewer.call('POST', VALIDATE, { body: file })
    expect(asViewer.body.permissions[0].affectedItems).toContain('Archive and delete feature flags')
    const before = await maxEventId()
    expect((await t.call('POST', IMPORT, { body: file })).status).toBe(200)
    const [row] = await t.query<{ archived: boolean; stale: boolean }>('select archived_at is not null as archived, stale from features where name = $1', [flag])
    expect(row).toEqual({ archived: true, stale: true })
    expect((await ok(t, 'GET', `${features(project)}/${flag}`)).body).toMatchObject({ archived: true, stale: true })
    const types = (await lastEvents(before)).map((e) => e.type)
    expect(types[0]).toBe('feature-created')
    expect(types).toContain('feature-stale-on')
    expect(types.slice(-2)).toEqual(['feature-archived', 'features-imported'])
    // It is an archived flag like any other: it can be revived.
    await ok(t, 'POST', `/api/admin/archive/revive/${flag}`)
    expect((await ok(t, 'GET', `${features(project)}/${flag}`)).body.archived).toBe(false)
  })

  it('refuses to archive a live flag of the project the file says archived (validate says so; the flag stays live)', async () => {
    const project = await createProject(t)
    const live = (await createFlag(t, {}, project)).name as string
    const file = importOf(project, { features: [{ name: live, archived: true }] })
    const res = await ok(t, 'POST', VALIDATE, file)
    expect(res.body.errors).toEqual([{ message: expect.stringContaining('live in this project but archived in the import file'), affectedItems: [live] }])
    const refused = await t.call('POST', IMPORT, { body: file })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toContain(live)
    expect((await t.query<{ archived: boolean }>('select archived_at is not null as archived from features where name = $1', [live]))[0]!.archived).toBe(false)
  })

  it('keeps stale as the file says, for new flags and existing ones, with feature-stale-on/-off', async () => {
    const project = await createProject(t)
    const existing = (await createFlag(t, {}, project)).name as string
    const created = fresh('stale')
    const before = await maxEventId()
    const res = await t.call('POST', IMPORT, { body: importOf(project, { features: [{ name: existing, stale: true }, { name: created, stale: true }] }) })
    expect(res.status, res.text).toBe(200)
    expect((await ok(t, 'GET', `${features(project)}/${existing}`)).body.stale).toBe(true)
    expect((await ok(t, 'GET', `${features(project)}/${created}`)).body.stale).toBe(true)
    const rows = await t.query<{ type: string; feature_name: string }>('select type, feature_name from events where id > $1 and type = $2 order by id', [before, 'feature-stale-on'])
    expect(rows.map((r) => r.feature_name).sort()).toEqual([existing, created].sort())
    const back = await ok(t, 'POST', IMPORT, importOf(project, { features: [{ name: existing, stale: false }] }))
    expect(back.status).toBe(200)
    expect((await ok(t, 'GET', `${features(project)}/${existing}`)).body.stale).toBe(false)
    // Absent, it is left as it is.
    await ok(t, 'POST', IMPORT, importOf(project, { features: [{ name: created }] }))
    expect((await ok(t, 'GET', `${features(project)}/${created}`)).body.stale).toBe(true)
  })

  it('keeps the strategies in the order of their sortOrder, else of the file (equal sortOrders too), and warns where that order decides the variant', async () => {
    const project = await createProject(t)
    const [bySort, byFile, tied] = [fresh('by-sort'), fresh('by-file'), fresh('tied')]
    const titled = (flag: string, titles: string[], sortOrders?: number[], variants = false) =>
      titles.map((title, i) => ({
        name: 'default',
        featureName: flag,
        title,
        ...(sortOrders ? { sortOrder: sortOrders[i] } : {}),
        ...(variants ? { variants: [{ name: `v-${title}`, weight: 1000, weightType: 'variable', stickiness: 'default' }] } : {}),
      }))
    const file = importOf(project, {
      features: [{ name: bySort }, { name: byFile }, { name: tied }],
      featureStrategies: [...titled(bySort, ['c', 'a', 'b'], [30, 10, 20], true), ...titled(byFile, ['a', 'b', 'c', 'd', 'e'], undefined, true), ...titled(tied, ['a', 'b', 'c', 'd', 'e', 'f'], [0, 0, 0, 0, 0, 0])],
    })
    const res = await ok(t, 'POST', VALIDATE, file)
    expect(res.body.warnings).toEqual([{ message: expect.stringContaining('strategies with variants whose order the import file does not give'), affectedItems: [byFile] }])
    expect((await t.call('POST', IMPORT, { body: file })).status).toBe(200)
    const order = async (flag: string) =>
      ((await ok(t, 'GET', `${features(project)}/${flag}/environments/development/strategies`)).body as { title: string }[]).map((s) => s.title)
    expect(await order(bySort)).toEqual(['a', 'b', 'c'])
    expect(await order(byFile)).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(await order(tied)).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
    const exported = (await ok(t, 'POST', EXPORT, { environment: 'development', features: [bySort, tied] })).body.featureStrategies
    expect(exported.filter((s: any) => s.featureName === bySort).map((s: any) => s.sortOrder)).toEqual([10, 20, 30])
    expect(exported.filter((s: any) => s.featureName === tied).map((s: any) => s.sortOrder)).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('orders strategies without sortOrder by their ULID ids (Unleash 8 makes them time-ordered) and says so where it decides the variant; random UUIDs keep the file order', async () => {
    const project = await createProject(t)
    const [byIds, byFile] = [fresh('by-ulid'), fresh('by-uuid')]
    // Ids as Unleash 8.2 answered them (ulid(): 10 characters of time, then 16 random): c was made first, then a, then b.
    const ulids: Record<string, string> = { c: '01M8JTWS97R0PVQPTWBJXRAYTA', a: '01M8JTWSDFX00M0GTP3TPJVKG7', b: '01m8jtwsfyq0d00pntt9rz3jzm' }
    const strategy = (flag: string, title: string, id: string) => ({ id, name: 'default', featureName: flag, title, parameters: {}, constraints: [], variants: [{ name: `v-${title}`, weight: 1000, weightType: 'variable', stickiness: 'default' }] })
    const file = importOf(project, {
      features: [{ name: byIds }, { name: byFile }],
      featureStrategies: [
        ...['a', 'b', 'c'].map((title) => strategy(byIds, title, ulids[title]!)),
        ...['a', 'b', 'c'].map((title) => strategy(byFile, title, crypto.randomUUID())),
      ],
    })
    const validated = await ok(t, 'POST', VALIDATE, file)
    expect(validated.body.warnings).toEqual(
      expect.arrayContaining([
        { message: expect.stringContaining('ordered by the creation time of their ids (ULIDs'), affectedItems: [byIds] },
        { message: expect.stringContaining("kept in the file's order"), affectedItems: [byFile] },
      ]),
    )
    expect((await t.call('POST', IMPORT, { body: file })).status).toBe(200)
    const order = async (flag: string) =>
      ((await ok(t, 'GET', `${features(project)}/${flag}/environments/development/strategies`)).body as { title: string; sortOrder: number }[]).map((s) => [s.title, s.sortOrder])
    expect(await order(byIds)).toEqual([['c', 0], ['a', 1], ['b', 2]])
    expect(await order(byFile)).toEqual([['a', 0], ['b', 1], ['c', 2]])
  })

  it('takes a strategy with sortOrder null as Unleash 8.2 does: as one without, in its place in the file', async () => {
    const project = await createProject(t)
    const flag = fresh('null-sort')
    const file = importOf(project, {
      features: [{ name: flag }],
      featureStrategies: ['a', 'b'].map((title) => ({ name: 'default', featureName: flag, title, sortOrder: null, parameters: {}, constraints: [] })),
    })
    expect((await t.call('POST', VALIDATE, { body: file })).status).toBe(200)
    const res = await t.call('POST', IMPORT, { body: file })
    expect(res.status, res.text).toBe(200)
    const strategies = (await ok(t, 'GET', `${features(project)}/${flag}/environments/development/strategies`)).body as { title: string; sortOrder: number }[]
    expect(strategies.map((s) => [s.title, s.sortOrder])).toEqual([['a', 0], ['b', 1]])
  })

  it('takes a strategy title longer than 100 characters, as Unleash 8.2 and the strategy routes do, and exports it back', async () => {
    const project = await createProject(t)
    const flag = fresh('long-title')
    const title = `A title as Unleash takes it: ${'t'.repeat(300)}`
    const file = importOf(project, { features: [{ name: flag }], featureStrategies: [{ name: 'default', featureName: flag, title, sortOrder: 0, parameters: {}, constraints: [] }] })
    const validated = await t.call('POST', VALIDATE, { body: file })
    expect(validated.status, validated.text).toBe(200)
    expect(validated.body.errors).toEqual([])
    const res = await t.call('POST', IMPORT, { body: file })
    expect(res.status, res.text).toBe(200)
    const [strategy] = (await ok(t, 'GET', `${features(project)}/${flag}/environments/development/strategies`)).body as { title: string }[]
    expect(strategy!.title).toBe(title)
    // Restored from the instance's state, it comes back whole.
    const state = (await ok(t, 'GET', '/api/admin/state/export')).body as { featureStrategies: { featureName: string; title: string }[] }
    expect(state.featureStrategies.find((s) => s.featureName === flag)!.title).toBe(title)
    // The strategy routes take it too, and the one stored is written back unchanged.
    const added = await addStrategy(t, flag, 'production', { name: 'default', title: `${title}!` }, project)
    expect(added.title).toBe(`${title}!`)
    await ok(t, 'PUT', `${features(project)}/${flag}/environments/production/strategies/${added.id}`, { name: 'default', title: added.title, parameters: {}, constraints: [] })
  })

  it('puts the default strategy an enabled flag gets after the strategies the file gives it', async () => {
    const project = await createProject(t)
    const flag = fresh('disabled-only')
    const file = importOf(project, { features: [{ name: flag }], featureStrategies: [{ name: 'default', featureName: flag, title: 'off', disabled: true, sortOrder: 10 }], featureEnvironments: [{ name: flag, featureName: flag, enabled: true }] })
    expect((await t.call('POST', IMPORT, { body: file })).status).toBe(200)
    const strategies = (await ok(t, 'GET', `${features(project)}/${flag}/environments/development/strategies`)).body as { title: string | null; name: string; sortOrder: number }[]
    expect(strategies.map((s) => [s.name, s.title, s.sortOrder])).toEqual([['default', 'off', 10], ['flexibleRollout', null, 11]])
  })

  it('reports in validate what the strategy routes would refuse against the stored definitions and legal values, as the import refuses it', async () => {
    const project = await createProject(t)
    const custom = (await ok(t, 'POST', '/api/admin/strategies', { name: fresh('tenant'), parameters: [{ name: 'tenants', type: 'list', required: true, description: '' }, { name: 'share', type: 'percentage', required: false, description: '' }] })).body.name as string
    const field = (await ok(t, 'POST', '/api/admin/context', { name: fresh('region'), legalValues: [{ value: 'eu' }] })).body.name as string
    const created = fresh('tier')
    const flag = fresh('imported')
    const file = importOf(project, {
      features: [{ name: flag }],
      contextFields: [{ name: created, legalValues: [{ value: 'gold' }] }],
      featureStrategies: [
        { name: custom, featureName: flag, parameters: { share: '250' } },
        { name: 'default', featureName: flag, constraints: [{ contextName: field, operator: 'IN', values: ['eu', 'mars'] }] },
        { name: 'default', featureName: flag, constraints: [{ contextName: created, operator: 'IN', values: ['platinum'] }] },
      ],
    })
    const res = await ok(t, 'POST', VALIDATE, file)
    expect(res.body.errors).toEqual([
      { message: 'The following strategies have parameters their strategy type refuses:', affectedItems: [expect.stringMatching(new RegExp(`^${flag} \\(${custom}\\): .*tenants.*required.*share`))] },
      { message: 'The following constraint values are not legal values of their context field:', affectedItems: [`${flag}: "mars" (${field})`, `${flag}: "platinum" (${created})`] },
    ])
    const refused = await t.call('POST', IMPORT, { body: file })
    expect(refused.status).toBe(400)
    expect(refused.body.details.map((d: { message: string }) => d.message)).toEqual(res.body.errors.map((e: any) => `${e.message} ${e.affectedItems.join(', ')}`))
    expect(await t.query('select 1 from features where name = $1', [flag])).toEqual([])
  })

  it("says in validate that a dependency of a flag the file does not import is left out, and writes none, as Unleash's import", async () => {
    const project = await createProject(t)
    const [parent, child] = [(await createFlag(t, {}, project)).name as string, (await createFlag(t, {}, project)).name as string]
    const file = importOf(project, { features: [{ name: parent }], dependencies: [{ feature: child, dependencies: [{ feature: parent }] }] })
    const res = await ok(t, 'POST', VALIDATE, file)
    expect(res.body.errors).toEqual([])
    expect(res.body.warnings).toContainEqual({ message: 'The following flags have dependencies in the import file that will not be imported, as the flags themselves are not imported:', affectedItems: [child] })
    expect((await t.call('POST', IMPORT, { body: file })).status).toBe(200)
    expect(await t.query('select 1 from feature_dependencies where child = $1', [child])).toEqual([])
  })
})

describe('export from Flagpost, import into a fresh Flagpost', () => {
  it('gives the same flags, strategies in the same order, variants, segments, tags, dependencies, stale and archived state, and evaluations; every strategy can be saved again', async () => {
    const project = await createProject(t)
    const field = (await ok(t, 'POST', '/api/admin/context', { name: fresh('tier'), legalValues: [{ value: 'gold' }, { value: 'silver' }], stickiness: true })).body.name as string
    const segment = await createSegment(t, { name: fresh('beta'), constraints: [{ contextName: 'userId', operator: 'IN', values: ['u1', 'u2', 'u3'] }] })
    const F = features(project)
    const names: string[] = []
    for (let i = 0; i < 24; i++) {
      const flag = (await createFlag(t, { type: ['release', 'experiment', 'operational', 'kill-switch'][i % 4], description: i % 2 ? `flag ${i}` : undefined }, project)).name as string
      names.push(flag)
      const variants = (tag: string) => (i % 4 === 0 ? [{ name: `${tag}-${i}`, weight: 1000, weightType: 'variable', stickiness: 'default' }] : [])
      // Added in reverse of their sortOrder: the order is sortOrder's, not the ids' or the creation's.
      await addStrategy(t, flag, 'development', { name: 'flexibleRollout', sortOrder: 5, parameters: { rollout: String((i * 7) % 101), stickiness: 'userId', groupId: flag }, variants: variants('late') }, project)
      if (i % 3 === 0) await addStrategy(t, flag, 'development', { name: 'default', title: `first ${i}`, sortOrder: 1, constraints: [{ contextName: field, operator: 'IN', values: ['gold'] }], variants: variants('early'), segments: i % 6 === 0 ? [segment.id] : [] }, project)
      if (i % 2 === 0) await enableFlag(t, flag, 'development', project)
      if (i % 5 === 1) await ok(t, 'PUT', `${F}/${flag}/environments/development/variants`, [{ name: 'blue', weightType: 'variable', weight: 500, stickiness: 'default' }, { name: 'red', weightType: 'variable', weight: 500, stickiness: 'default' }])
      if (i % 3 === 1) await ok(t, 'POST', `/api/admin/features/${flag}/tags`, { type: 'team', value: `team-${i % 2}` })
      if (i % 5 === 0) await ok(t, 'PATCH', `${F}/${flag}`, [{ op: 'replace', path: '/stale', value: true }])
      if (i % 7 === 3) await ok(t, 'POST', `${F}/${flag}/dependencies`, { feature: names[0], ...(i % 2 ? { enabled: false } : {}) })
    }
    for (const i of [7, 15, 23]) await ok(t, 'DELETE', `${F}/${names[i]}`)
    const exported = (await ok(t, 'POST', EXPORT, { environment: 'development', project })).body

    const u = await createTestApp()
    try {
      await createProject(u, { id: project })
      await createSegment(u, { name: segment.name, constraints: [{ contextName: 'userId', operator: 'IN', values: ['u1', 'u2', 'u3'] }] })
      const validation = await ok(u, 'POST', VALIDATE, { project, environment: 'development', data: exported })
      expect(validation.body.errors).toEqual([])
      const res = await u.call('POST', IMPORT, { body: { project, environment: 'development', data: exported } })
      expect(res.status, res.text).toBe(200)
      const again = (await ok(u, 'POST', EXPORT, { environment: 'development', project })).body

      // Segment ids are each database's own: compared by name.
      const bySegmentName = (data: any) => {
        const nameOf = new Map(data.segments.map((s: any) => [s.id, s.name]))
        return { ...data, segments: data.segments.map((s: any) => s.name), featureStrategies: data.featureStrategies.map(({ id: _id, ...s }: any) => ({ ...s, segments: s.segments.map((id: number) => nameOf.get(id)) })) }
      }
      expect(bySegmentName(again)).toEqual(bySegmentName(exported))
      expect(again.features.filter((f: any) => f.archived).map((f: any) => f.name)).toEqual([7, 15, 23].map((i) => names[i]).sort())
      expect(again.features.filter((f: any) => f.stale)).toHaveLength(5)
      expect(again.featureStrategies.filter((s: any) => s.featureName === names[0]).map((s: any) => s.name)).toEqual(['default', 'flexibleRollout'])

      const evaluations = async (app: TestApp) => {
        const out: Record<string, unknown> = {}
        for (const userId of ['u1', 'u2', 'u5', 'ann', 'bob', 'carol', 'dave', 'erin']) {
          for (const tier of ['gold', 'silver']) {
            const play = await ok(app, 'POST', '/api/admin/playground', { environment: 'development', projects: [project], context: { appName: 'web', userId, [field]: tier } })
            for (const f of play.body.features) out[`${f.name} ${userId} ${tier}`] = [f.isEnabled, f.variant?.name ?? null]
          }
        }
        return out
      }
      const [before, after] = [await evaluations(t), await evaluations(u)]
      expect(Object.keys(after)).toHaveLength(21 * 16)
      expect(after).toEqual(before)

      // What the import accepted the routes accept again as it is.
      for (const s of again.featureStrategies) {
        if (again.features.find((f: any) => f.name === s.featureName).archived) continue
        const { id, featureName, ...body } = s
        const put = await u.call('PUT', `${F}/${featureName}/environments/development/strategies/${id}`, { body })
        expect(put.status, put.text).toBe(200)
      }
    } finally {
      await u.close()
    }
  })
})
