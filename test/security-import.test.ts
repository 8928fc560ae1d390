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
