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
    ['a bad CIDR range', { name: 'default', constraints: [constraint('IN_CIDR', { values: ['10.0.0.0/99'] })] }],
    ['a bad regular expression', { name: 'default', constraints: [constraint('REGEX', { value: '(unclosed', values: [] })] }],
    ['a multi-value operator with no values', { name: 'default', constraints: [constraint('IN', { values: [] })] }],
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
