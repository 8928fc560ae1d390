import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createProject, fresh, ok } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

// The flag import and the routes that write many environments at once ask, per environment they change, exactly what
// the per-environment routes ask; and their messages name nothing of a private project to those who cannot read it.

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const IMPORT = '/api/admin/features-batch/import'
const VALIDATE = '/api/admin/features-batch/validate'
const features = (project: string) => `/api/admin/projects/${project}/features`

/** A Viewer holding, in `project`, a fresh custom project role with exactly these permissions. */
async function viewerWith(project: string, permissions: { name: string; environment?: string }[]): Promise<TestUser> {
  const role = (await ok(t, 'POST', '/api/admin/roles', { name: fresh('role'), permissions })).body.roles as { id: number }
  const user = await createSignedInUser(t, fresh('user'), 'Viewer')
  await ok(t, 'POST', `/api/admin/projects/${project}/access`, { roles: [role.id], users: [user.id] })
  return user
}

const importOf = (project: string, environment: string, flag: string, extra: Record<string, unknown> = {}) => ({
  project,
  environment,
  data: { features: [{ name: flag }], featureStrategies: [], featureEnvironments: [{ name: flag, featureName: flag, enabled: true }], tagTypes: [], ...extra },
})

const isOn = async (flag: string, environment: string) =>
  (await t.query<{ enabled: boolean }>('select enabled from feature_environments where feature_name = $1 and environment = $2', [flag, environment]))[0]?.enabled ?? false

describe('POST /api/admin/features-batch/import: the permissions of the routes it stands for, in its environment', () => {
  it('needs UPDATE_FEATURE_ENVIRONMENT to switch a flag on: a role with UPDATE_FEATURE alone is refused as …/on refuses it, and the flag stays off', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    const user = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }])
    expect((await user.call('POST', `${features(project)}/${flag}/environments/production/on`)).status).toBe(403)
    const res = await user.call('POST', IMPORT, { body: importOf(project, 'production', flag) })
    expect(res.status, res.text).toBe(403)
    expect(res.body.name).toBe('NoAccessError')
    expect(await isOn(flag, 'production')).toBe(false)
    const strategies = await t.query('select 1 from feature_strategies where feature_name = $1', [flag])
    expect(strategies).toEqual([])
    // validate names both permissions the switch needs: the switch itself and the default strategy it adds.
    const validation = (await ok(user, 'POST', VALIDATE, importOf(project, 'production', flag))).body
    expect(validation.permissions[0].affectedItems).toEqual(expect.arrayContaining(['Enable/disable flags', 'Create activation strategies']))
  })

  it('holds the permission to the environment: switching in development does not let it switch production', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    const user = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }, { name: 'CREATE_FEATURE_STRATEGY', environment: 'development' }])
    expect((await user.call('POST', IMPORT, { body: importOf(project, 'production', flag) })).status).toBe(403)
    expect(await isOn(flag, 'production')).toBe(false)
    const res = await user.call('POST', IMPORT, { body: importOf(project, 'development', flag) })
    expect(res.status, res.text).toBe(200)
    expect(await isOn(flag, 'development')).toBe(true)
  })

  it('needs CREATE_FEATURE_STRATEGY when an enabled flag would get the default strategy, even with no strategy in the export', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    await addStrategy(t, flag, 'production', { name: 'default' }, project)
    await ok(t, 'POST', `${features(project)}/${flag}/environments/production/on`)
    // Switching nothing, but replacing the strategies: deleting needs DELETE, the default strategy added needs CREATE.
    const user = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'DELETE_FEATURE_STRATEGY', environment: 'production' }])
    expect((await user.call('POST', IMPORT, { body: importOf(project, 'production', flag) })).status).toBe(403)
    const user2 = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'DELETE_FEATURE_STRATEGY', environment: 'production' }, { name: 'CREATE_FEATURE_STRATEGY', environment: 'production' }])
    const res = await user2.call('POST', IMPORT, { body: importOf(project, 'production', flag) })
    expect(res.status, res.text).toBe(200)
  })

  it('asks no switch permission where the import leaves the switch as it is', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    const user = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }])
    const res = await user.call('POST', IMPORT, { body: importOf(project, 'production', flag, { featureEnvironments: [{ name: flag, featureName: flag, enabled: false }] }) })
    expect(res.status, res.text).toBe(200)
    expect(await isOn(flag, 'production')).toBe(false)
  })
})

describe('POST /api/admin/features-batch/import: a strategy is judged as the strategy routes judge it', () => {
  const constraint = (operator: string, value: Record<string, unknown>) => ({ contextName: 'appName', operator, caseInsensitive: false, inverted: false, ...value })
  const cases: [string, Record<string, unknown>][] = [
    ['a rollout of 250', { name: 'flexibleRollout', parameters: { rollout: '250', stickiness: 'default', groupId: 'g' } }],
    ['a bad semantic version', { name: 'default', constraints: [constraint('SEMVER_EQ', { value: 'not-a-version', values: [] })] }],
    ['a regular expression over the program limit', { name: 'default', constraints: [constraint('REGEX', { value: '(a|b|c|d|e|f|g|h){1000}', values: [] })] }],
  ]
  for (const [what, strategy] of cases) {
    it(`refuses ${what} with a 400 and writes nothing, as POST …/strategies does`, async () => {
      const project = await createProject(t)
      const flag = fresh('imported')
      const byRoute = await t.call('POST', `${features(project)}/${(await createFlag(t, {}, project)).name}/environments/development/strategies`, { body: strategy })
      expect(byRoute.status, byRoute.text).toBe(400)
      const res = await t.call('POST', IMPORT, { body: importOf(project, 'development', flag, { featureStrategies: [{ featureName: flag, ...strategy }] }) })
      expect(res.status, res.text).toBe(400)
      expect(res.body).toMatchObject({ name: 'ValidationError', message: expect.any(String), id: expect.any(String) })
      expect(await t.query('select 1 from features where name = $1', [flag])).toEqual([])
    })
  }

  it('refuses a constraint value a context field does not list as legal, existing or created by the import', async () => {
    const project = await createProject(t)
    const field = fresh('region')
    await ok(t, 'POST', '/api/admin/context', { name: field, legalValues: [{ value: 'eu' }] })
    const flag = fresh('imported')
    const strategy = { featureName: flag, name: 'default', constraints: [{ contextName: field, operator: 'IN', values: ['mars'] }] }
    const res = await t.call('POST', IMPORT, { body: importOf(project, 'development', flag, { featureStrategies: [strategy] }) })
    expect(res.status, res.text).toBe(400)
    expect(res.body.message).toContain('mars')
    const created = fresh('tier')
    const other = fresh('imported')
    const withField = importOf(project, 'development', other, {
      featureStrategies: [{ featureName: other, name: 'default', constraints: [{ contextName: created, operator: 'IN', values: ['platinum'] }] }],
      contextFields: [{ name: created, legalValues: [{ value: 'gold' }] }],
    })
    const res2 = await t.call('POST', IMPORT, { body: withField })
    expect(res2.status, res2.text).toBe(400)
    expect(await t.query('select 1 from context_fields where name = $1', [created])).toEqual([])
  })

  it('stores an accepted strategy in the form the routes store it (the rollout defaults filled in)', async () => {
    const project = await createProject(t)
    const flag = fresh('imported')
    const res = await t.call('POST', IMPORT, { body: importOf(project, 'development', flag, { featureStrategies: [{ featureName: flag, name: 'flexibleRollout', parameters: { rollout: '40' } }] }) })
    expect(res.status, res.text).toBe(200)
    const [row] = await t.query<{ parameters: Record<string, string> }>('select parameters from feature_strategies where feature_name = $1', [flag])
    expect(row!.parameters).toEqual({ rollout: '40', stickiness: 'default', groupId: flag })
  })
})

describe('POST /api/admin/features-batch/validate and /import: nothing of a private project in their messages', () => {
  it('says a flag of a private project the caller may not read is in another project, without naming it; names it to those who may read it', async () => {
    const secret = await createProject(t, { mode: 'private' })
    const flag = (await createFlag(t, {}, secret)).name as string
    const project = await createProject(t)
    const viewer = await createSignedInUser(t, fresh('user'), 'Viewer')
    const body = importOf(project, 'development', flag)
    const asViewer = await ok(viewer, 'POST', VALIDATE, body)
    expect(asViewer.text).not.toContain(secret)
    expect(asViewer.body.errors).toContainEqual(expect.objectContaining({ affectedItems: [`${flag} (in another project)`] }))
    const asAdmin = await ok(t, 'POST', VALIDATE, body)
    expect(asAdmin.body.errors).toContainEqual(expect.objectContaining({ affectedItems: [`${flag} (in project ${secret})`] }))
    // The import's refusal carries validate's errors: the same rule holds there.
    const member = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'CREATE_FEATURE' }, { name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'development' }, { name: 'CREATE_FEATURE_STRATEGY', environment: 'development' }])
    const refused = await member.call('POST', IMPORT, { body })
    expect(refused.status, refused.text).toBe(400)
    expect(refused.text).not.toContain(secret)
  })
})

describe('PATCH /api/admin/projects/:projectId/features/:featureName/variants (every environment)', () => {
  const patch = [{ op: 'add', path: '/0', value: { name: 'blue', weightType: 'variable', weight: 1000, stickiness: 'default' } }]
  const variantsIn = async (flag: string, environment: string) =>
    (await t.query<{ variants: unknown[] }>('select variants from feature_environments where feature_name = $1 and environment = $2', [flag, environment]))[0]!.variants

  it('needs UPDATE_FEATURE_ENVIRONMENT_VARIANTS in every environment it writes, as PUT …/environments/:environment/variants does', async () => {
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name as string
    const devOnly = await viewerWith(project, [{ name: 'UPDATE_FEATURE_VARIANTS' }, { name: 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS', environment: 'development' }])
    expect((await devOnly.call('PUT', `${features(project)}/${flag}/environments/production/variants`, { body: [] })).status).toBe(403)
    const refused = await devOnly.call('PATCH', `${features(project)}/${flag}/variants`, { body: patch })
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body.name).toBe('NoAccessError')
    expect(await variantsIn(flag, 'production')).toEqual([])
    expect(await variantsIn(flag, 'development')).toEqual([])

    const everywhere = await viewerWith(project, [
      { name: 'UPDATE_FEATURE_VARIANTS' },
      { name: 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS', environment: 'development' },
      { name: 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS', environment: 'production' },
    ])
    const res = await everywhere.call('PATCH', `${features(project)}/${flag}/variants`, { body: patch })
    expect(res.status, res.text).toBe(200)
    expect(await variantsIn(flag, 'production')).toEqual([expect.objectContaining({ name: 'blue' })])
  })

  it('still needs SKIP_CHANGE_REQUEST where an environment requires change requests', async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = (await createFlag(t, {}, project)).name as string
    const user = await viewerWith(project, [
      { name: 'UPDATE_FEATURE_VARIANTS' },
      { name: 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS', environment: 'development' },
      { name: 'UPDATE_FEATURE_ENVIRONMENT_VARIANTS', environment: 'production' },
    ])
    expect((await user.call('PATCH', `${features(project)}/${flag}/variants`, { body: patch })).status).toBe(403)
    expect(await variantsIn(flag, 'production')).toEqual([])
  })
})

describe("POST /api/admin/features-batch/import: an environment's variants are judged as PUT …/environments/:environment/variants judges them", () => {
  it('refuses variants the route refuses (a name given twice, a payload that is not the JSON it says) with a 400 and writes nothing', async () => {
    const project = await createProject(t)
    const bad: [string, unknown[]][] = [
      ['a name given twice', [{ name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' }, { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' }]],
      ['a json payload that is not JSON', [{ name: 'a', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{not json' } }]],
    ]
    for (const [what, variants] of bad) {
      const flag = (await createFlag(t, {}, project)).name as string
      expect((await t.call('PUT', `${features(project)}/${flag}/environments/development/variants`, { body: variants })).status, what).toBe(400)
      const res = await t.call('POST', IMPORT, { body: importOf(project, 'development', flag, { featureEnvironments: [{ name: flag, featureName: flag, enabled: false, variants }] }) })
      expect(res.status, `${what}: ${res.text}`).toBe(400)
      expect(res.body.name).toBe('ValidationError')
      const [row] = await t.query<{ variants: unknown[] }>('select variants from feature_environments where feature_name = $1 and environment = $2', [flag, 'development'])
      expect(row!.variants).toEqual([])
    }
  })
})

describe('POST /api/admin/features-batch/import: flag metadata SDKs receive needs what PATCH …/features/:featureName needs', () => {
  const metadataOf = async (flag: string) =>
    (await t.query<{ type: string; impression_data: boolean }>('select type, impression_data from features where name = $1', [flag]))[0]!

  it("needs SKIP_CHANGE_REQUEST in every protected environment to change an existing flag's type or impressionData, even importing into an unprotected one", async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = (await createFlag(t, {}, project)).name as string
    const user = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }])
    // The flag's own PATCH refuses it: production's SDKs receive impressionData.
    expect((await user.call('PATCH', `${features(project)}/${flag}`, { body: [{ op: 'replace', path: '/impressionData', value: true }] })).status).toBe(403)
    for (const change of [{ impressionData: true }, { type: 'kill-switch' }]) {
      const body = { project, environment: 'development', data: { features: [{ name: flag, ...change }], featureStrategies: [], tagTypes: [] } }
      const validation = (await ok(user, 'POST', VALIDATE, body)).body
      expect(validation.permissions[0]?.affectedItems, JSON.stringify(change)).toContain('Skip change request process')
      const res = await user.call('POST', IMPORT, { body })
      expect(res.status, res.text).toBe(403)
      expect(res.body.name).toBe('NoAccessError')
      expect(await metadataOf(flag)).toEqual({ type: 'release', impression_data: false })
    }
    // What reaches no SDK needs no more: the same metadata, or a description.
    const same = { project, environment: 'development', data: { features: [{ name: flag, type: 'release', impressionData: false, description: 'new words' }], featureStrategies: [], tagTypes: [] } }
    expect((await ok(user, 'POST', VALIDATE, same)).body.permissions).toEqual([])
    expect((await user.call('POST', IMPORT, { body: same })).status).toBe(200)
    // A flag the import creates is off in production, as a created flag is: no change request needed there.
    const created = { project, environment: 'development', data: { features: [{ name: fresh('new'), type: 'kill-switch', impressionData: true }], featureStrategies: [], tagTypes: [] } }
    const creator = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'CREATE_FEATURE' }])
    expect((await creator.call('POST', IMPORT, { body: created })).status).toBe(200)
    // Who may skip change requests in production may change it.
    const skipper = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'SKIP_CHANGE_REQUEST', environment: 'production' }])
    const change = { project, environment: 'development', data: { features: [{ name: flag, type: 'kill-switch', impressionData: true }], featureStrategies: [], tagTypes: [] } }
    expect((await skipper.call('POST', IMPORT, { body: change })).status).toBe(200)
    expect(await metadataOf(flag)).toEqual({ type: 'kill-switch', impression_data: true })
  })
})

describe("POST /api/admin/features-batch/validate and /import: dependencies follow the dependency route's rules", () => {
  const dependsOn = async (child: string) => (await t.query<{ parent: string }>('select parent from feature_dependencies where child = $1', [child])).map((r) => r.parent)

  it('refuses a parent of another (private) project, archived or not, and an archived parent of the project, even when the export names it', async () => {
    const secret = await createProject(t, { mode: 'private' })
    const foreignArchived = (await createFlag(t, {}, secret)).name as string
    await ok(t, 'DELETE', `${features(secret)}/${foreignArchived}`)
    const project = await createProject(t)
    const ownArchived = (await createFlag(t, {}, project)).name as string
    await ok(t, 'DELETE', `${features(project)}/${ownArchived}`)
    for (const parent of [foreignArchived, ownArchived]) {
      const child = fresh('child')
      const body = { project, environment: 'development', data: { features: [{ name: child }, { name: parent }], featureStrategies: [], tagTypes: [], dependencies: [{ feature: child, dependencies: [{ feature: parent }] }] } }
      const validation = (await ok(t, 'POST', VALIDATE, body)).body
      expect(validation.errors.length, JSON.stringify(validation)).toBeGreaterThan(0)
      const res = await t.call('POST', IMPORT, { body })
      expect(res.status, res.text).toBe(400)
      expect(await dependsOn(child)).toEqual([])
    }
  })
})

describe('POST /api/admin/features-batch/validate and /import: the objects it creates are held to their routes\' schemas', () => {
  const base = (project: string, data: Record<string, unknown>) => ({ project, environment: 'development', data: { features: [], featureStrategies: [], tagTypes: [], ...data } })
  const long = 'x'.repeat(251)

  it('reports each problem in validate and refuses the import with a 400, storing nothing', async () => {
    const project = await createProject(t)
    const cases: [string, (flag: string) => Record<string, unknown>, string, unknown[]][] = [
      ['a flag name that is not URL-friendly', () => ({ features: [{ name: 'a/b c<script>' }] }), 'select 1 from features where name = $1', ['a/b c<script>']],
      ['a flag named ..', () => ({ features: [{ name: '..' }] }), 'select 1 from features where name = $1', ['..']],
      ['a flag named .', () => ({ features: [{ name: '.' }] }), 'select 1 from features where name = $1', ['.']],
      ['a type that is not a flag type', (flag) => ({ features: [{ name: flag, type: 'evil-type' }] }), 'select 1 from features where name = $1', []],
      ['a tag type name that is not URL-friendly', (flag) => ({ features: [{ name: flag }], tagTypes: [{ name: 'a b<' }], featureTags: [{ featureName: flag, tagType: 'a b<', tagValue: 'ok-value' }] }), 'select 1 from tag_types where name = $1', ['a b<']],
      ['a tag type name of one character', (flag) => ({ features: [{ name: flag }], tagTypes: [{ name: 'q' }], featureTags: [{ featureName: flag, tagType: 'q', tagValue: 'ok-value' }] }), 'select 1 from tag_types where name = $1', ['q']],
      ['a tag value of one character', (flag) => ({ features: [{ name: flag }], featureTags: [{ featureName: flag, tagType: 'simple', tagValue: 'v' }] }), 'select 1 from tags where value = $1', ['v']],
      ['a tag value of 51 characters', (flag) => ({ features: [{ name: flag }], featureTags: [{ featureName: flag, tagType: 'simple', tagValue: 'v'.repeat(51) }] }), 'select 1 from tags where value = $1', ['v'.repeat(51)]],
      ['a context field name that is not URL-friendly', () => ({ contextFields: [{ name: 'bad field/x' }] }), 'select 1 from context_fields where name = $1', ['bad field/x']],
      ['a context field description over 250 characters', () => ({ contextFields: [{ name: 'longdesc-field', description: long }] }), 'select 1 from context_fields where name = $1', ['longdesc-field']],
      ['an empty legal value', () => ({ contextFields: [{ name: 'empty-legal', legalValues: [{ value: '' }] }] }), 'select 1 from context_fields where name = $1', ['empty-legal']],
      ['a legal value given twice', () => ({ contextFields: [{ name: 'twice-legal', legalValues: [{ value: 'a' }, { value: 'a' }] }] }), 'select 1 from context_fields where name = $1', ['twice-legal']],
    ]
    for (const [what, data, check, params] of cases) {
      const flag = fresh('flag')
      const body = base(project, data(flag))
      const validation = await t.call('POST', VALIDATE, { body })
      expect(validation.status, `${what}: ${validation.text}`).toBe(200)
      expect(validation.body.errors.length, `${what}: ${validation.text}`).toBeGreaterThan(0)
      const res = await t.call('POST', IMPORT, { body })
      expect(res.status, `${what}: ${res.text}`).toBe(400)
      expect(res.body.name).toBe('ValidationError')
      expect(await t.query(check, params.length > 0 ? params : [flag]), what).toEqual([])
    }
  })

  it('lists every problem at once rather than a schema 400 hiding the rest', async () => {
    const project = await createProject(t)
    const body = base(project, { features: [{ name: '..', type: 'evil-type' }], contextFields: [{ name: 'x y' }] })
    const validation = (await ok(t, 'POST', VALIDATE, body)).body
    expect(validation.errors.length).toBeGreaterThanOrEqual(3)
  })

  it('accepts what the routes accept: every flag type they take, trimmed tags', async () => {
    const project = await createProject(t)
    const flag = fresh('flag')
    const body = base(project, { features: [{ name: flag, type: 'permission' }], featureTags: [{ featureName: flag, tagType: 'simple', tagValue: '  trimmed-value ' }] })
    const validation = (await ok(t, 'POST', VALIDATE, body)).body
    expect(validation.errors, JSON.stringify(validation)).toEqual([])
    expect((await t.call('POST', IMPORT, { body })).status).toBe(200)
    expect(await t.query('select tag_value from feature_tags where feature_name = $1', [flag])).toEqual([{ tag_value: 'trimmed-value' }])
  })

  it('refuses . and .. as flag names on every route that creates a flag (they could never be reached by name)', async () => {
    const project = await createProject(t)
    for (const name of ['.', '..']) {
      const res = await t.call('POST', features(project), { body: { name } })
      expect(res.status, res.text).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    const source = (await createFlag(t, {}, project)).name as string
    expect((await t.call('POST', `${features(project)}/${source}/clone`, { body: { name: '..' } })).status).toBe(400)
    expect(await t.query("select 1 from features where name in ('.', '..')")).toEqual([])
  })
})

describe('POST /api/admin/features-batch/validate and /import: a context field listed twice', () => {
  it('is an error, so the legal-value check cannot be passed with one copy and the field stored from the other', async () => {
    const project = await createProject(t)
    const field = fresh('field')
    const flag = fresh('flag')
    const body = {
      project,
      environment: 'development',
      data: {
        features: [{ name: flag }],
        featureStrategies: [{ name: 'default', featureName: flag, constraints: [{ contextName: field, operator: 'IN', values: ['evil'] }] }],
        tagTypes: [],
        contextFields: [{ name: field, legalValues: [{ value: 'good' }] }, { name: field, legalValues: [{ value: 'evil' }] }],
      },
    }
    const validation = (await ok(t, 'POST', VALIDATE, body)).body
    expect(validation.errors).toContainEqual(expect.objectContaining({ affectedItems: [field] }))
    const res = await t.call('POST', IMPORT, { body })
    expect(res.status, res.text).toBe(400)
    expect(await t.query('select 1 from context_fields where name = $1', [field])).toEqual([])
  })
})

describe('POST /api/admin/features-batch/validate: answers about a private project as about unknown names', () => {
  it("names no archived flag of a private project, and answers a private project's context field as an unknown name", async () => {
    const secret = await createProject(t, { mode: 'private' })
    const archived = (await createFlag(t, {}, secret)).name as string
    await ok(t, 'DELETE', `${features(secret)}/${archived}`)
    const privateField = fresh('privfield')
    await ok(t, 'POST', `/api/admin/projects/${secret}/context`, { name: privateField })
    const project = await createProject(t)
    const viewer = await createSignedInUser(t, fresh('user'), 'Viewer')
    const withFlag = (await ok(viewer, 'POST', VALIDATE, { project, environment: 'development', data: { features: [{ name: archived }], featureStrategies: [], tagTypes: [] } })).body
    expect(JSON.stringify(withFlag.warnings)).not.toContain(archived)
    expect(JSON.stringify(withFlag)).not.toContain(secret)
    const unknownField = fresh('nofield')
    const answer = async (field: string) =>
      JSON.stringify((await ok(viewer, 'POST', VALIDATE, { project, environment: 'development', data: { features: [], featureStrategies: [], tagTypes: [], contextFields: [{ name: field }] } })).body).replaceAll(field, 'FIELD')
    expect(await answer(privateField)).toBe(await answer(unknownField))
    // The import refuses it (the name is taken), and only once the caller may create fields, whose route says as much.
    const member = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'UPDATE_PROJECT_CONTEXT' }])
    const asProjectField = { project, environment: 'development', data: { features: [], featureStrategies: [], tagTypes: [], contextFields: [{ name: privateField, project: 'elsewhere' }] } }
    expect((await ok(member, 'POST', VALIDATE, asProjectField)).body.errors).toEqual([])
    const res = await member.call('POST', IMPORT, { body: asProjectField })
    expect(res.status, res.text).toBe(409)
    expect(res.text).not.toContain(secret)
  })
})

describe('POST /api/admin/features-batch/validate reports what the import refuses', () => {
  it('a strategy sortOrder out of range, variants that are not variants or name one twice, a self-dependency, a chain', async () => {
    const project = await createProject(t)
    const existingParent = (await createFlag(t, {}, project)).name as string
    const grandparent = (await createFlag(t, {}, project)).name as string
    await ok(t, 'POST', `${features(project)}/${existingParent}/dependencies`, { feature: grandparent })
    const variant = { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' }
    const cases: [string, (flag: string) => Record<string, unknown>][] = [
      ['a sortOrder out of range', (flag) => ({ featureStrategies: [{ name: 'default', featureName: flag, sortOrder: 99999999999 }] })],
      ['variants: [null]', (flag) => ({ featureEnvironments: [{ name: flag, featureName: flag, enabled: false, variants: [null] }] })],
      ['a variant name twice', (flag) => ({ featureEnvironments: [{ name: flag, featureName: flag, enabled: false, variants: [variant, variant] }] })],
      ['a self-dependency', (flag) => ({ dependencies: [{ feature: flag, dependencies: [{ feature: flag }] }] })],
      ['a chain', (flag) => ({ dependencies: [{ feature: flag, dependencies: [{ feature: existingParent }] }] })],
    ]
    for (const [what, data] of cases) {
      const flag = fresh('flag')
      const body = { project, environment: 'development', data: { features: [{ name: flag }], featureStrategies: [], tagTypes: [], ...data(flag) } }
      const validation = await t.call('POST', VALIDATE, { body })
      expect(validation.status, `${what}: ${validation.text}`).toBe(200)
      expect(validation.body.errors.length, `${what}: ${validation.text}`).toBeGreaterThan(0)
      const res = await t.call('POST', IMPORT, { body })
      expect(res.status, `${what}: ${res.text}`).toBe(400)
      expect(await t.query('select 1 from features where name = $1', [flag]), what).toEqual([])
    }
  })
})

describe('POST /api/admin/features-batch/import: stale and archived state need what their own routes need', () => {
  it('needs DELETE_FEATURE to create a flag archived, as the archive route does; without it nothing is created', async () => {
    const project = await createProject(t)
    const flag = fresh('archived')
    const body = { project, environment: 'development', data: { features: [{ name: flag, archived: true }], featureStrategies: [], tagTypes: [] } }
    const creator = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'CREATE_FEATURE' }])
    expect((await ok(creator, 'POST', VALIDATE, body)).body.permissions[0]?.affectedItems).toEqual(['Archive and delete feature flags'])
    const res = await creator.call('POST', IMPORT, { body })
    expect(res.status, res.text).toBe(403)
    expect(res.body.name).toBe('NoAccessError')
    expect(await t.query('select 1 from features where name = $1', [flag])).toEqual([])
    const archiver = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }, { name: 'CREATE_FEATURE' }, { name: 'DELETE_FEATURE' }])
    expect((await archiver.call('POST', IMPORT, { body })).status).toBe(200)
    expect((await t.query<{ archived: boolean }>('select archived_at is not null as archived from features where name = $1', [flag]))[0]!.archived).toBe(true)
  })

  it("needs SKIP_CHANGE_REQUEST in every protected environment to change an existing flag's stale (SDKs receive it), as PATCH …/features/:featureName does", async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production' }] })
    const flag = (await createFlag(t, {}, project)).name as string
    const user = await viewerWith(project, [{ name: 'UPDATE_FEATURE' }])
    expect((await user.call('PATCH', `${features(project)}/${flag}`, { body: [{ op: 'replace', path: '/stale', value: true }] })).status).toBe(403)
    const body = { project, environment: 'development', data: { features: [{ name: flag, stale: true }], featureStrategies: [], tagTypes: [] } }
    expect((await ok(user, 'POST', VALIDATE, body)).body.permissions[0]?.affectedItems).toContain('Skip change request process')
    const res = await user.call('POST', IMPORT, { body })
    expect(res.status, res.text).toBe(403)
    expect((await t.query<{ stale: boolean }>('select stale from features where name = $1', [flag]))[0]!.stale).toBe(false)
  })

  it('exports no archived flag of a private project to a caller who may not read it', async () => {
    const hidden = await createProject(t, { mode: 'private' })
    const secret = (await createFlag(t, {}, hidden)).name as string
    await ok(t, 'DELETE', `${features(hidden)}/${secret}`)
    const viewer = await createSignedInUser(t, fresh('viewer'), 'Viewer')
    for (const query of [{ features: [secret] }, { project: hidden }, {}]) {
      const res = await viewer.call('POST', '/api/admin/features-batch/export', { body: { environment: 'development', ...query } })
      expect(res.status, res.text).toBe(200)
      expect(JSON.stringify(res.body)).not.toContain(secret)
    }
    expect((await ok(t, 'POST', '/api/admin/features-batch/export', { environment: 'development', features: [secret] })).body.features).toMatchObject([{ name: secret, archived: true }])
  })
})
