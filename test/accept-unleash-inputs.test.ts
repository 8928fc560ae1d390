// What Unleash 8.2 accepts and Flagpost refused before: accepted on every path it enters by (docs/ARCHITECTURE.md,
// "Checks against Unleash 8.2"), and validate's answer for a malformed document.
import { hostname } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, fresh, ok } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const F = '/api/admin/projects/default/features'

describe('accepted as Unleash 8.2 accepts it', () => {
  it('a sunset flag is created, its description changed, and it is listed with its type', async () => {
    const name = fresh('sunset')
    await ok(t, 'POST', F, { name, type: 'sunset' })
    const patched = await t.call('PATCH', `${F}/${name}`, { body: [{ op: 'replace', path: '/description', value: 'going away' }] })
    expect([patched.status, patched.body?.type, patched.body?.description]).toEqual([200, 'sunset', 'going away'])
  })

  it('a deprecated built-in strategy with a SEMVER_GTE constraint passes validate and import', async () => {
    const project = await createProject(t)
    const flag = fresh('imported')
    const data = {
      features: [{ name: flag, project, type: 'release' }],
      featureStrategies: [{ name: 'gradualRolloutUserId', featureName: flag, parameters: { percentage: '40', groupId: 'g' }, constraints: [{ contextName: 'version', operator: 'SEMVER_GTE', value: '1.0.0' }] }],
      featureEnvironments: [{ name: flag, featureName: flag, environment: 'development', enabled: true }],
      tagTypes: [],
    }
    const validated = await ok(t, 'POST', '/api/admin/features-batch/validate', { project, environment: 'development', data })
    expect(validated.body.errors, JSON.stringify(validated.body)).toEqual([])
    await ok(t, 'POST', '/api/admin/features-batch/import', { project, environment: 'development', data })
    const strategies = (await ok(t, 'GET', `/api/admin/projects/${project}/features/${flag}/environments/development/strategies`)).body
    expect(strategies.map((s: { name: string }) => s.name)).toEqual(['gradualRolloutUserId'])
  })

  it('a change request adds a deprecated strategy with a SEMVER_LTE constraint', async () => {
    const project = await createProject(t, { changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const flag = (await createFlag(t, {}, project)).name as string
    const res = await t.call('POST', `/api/admin/projects/${project}/environments/production/change-requests`, {
      body: { feature: flag, action: 'addStrategy', payload: { name: 'gradualRolloutSessionId', parameters: { percentage: '10', groupId: 'g' }, constraints: [{ contextName: 'version', operator: 'SEMVER_LTE', value: '2.0.0' }] } },
    })
    expect(res.status, res.text).toBe(200)
  })

  it('a segment with SEMVER_GTE and an empty IN list', async () => {
    const res = await t.call('POST', '/api/admin/segments', {
      body: { name: fresh('segment'), constraints: [{ contextName: 'version', operator: 'SEMVER_GTE', value: '1.2.3' }, { contextName: 'tier', operator: 'IN', values: [] }] },
    })
    expect(res.status, res.text).toBe(201)
  })
})

describe('POST /api/admin/features-batch/validate with a malformed document', () => {
  it('answers every problem in errors, never a 400 that hides the rest', async () => {
    const project = await createProject(t)
    const res = await t.call('POST', '/api/admin/features-batch/validate', {
      body: { project, environment: 'development', data: { features: [{ name: 'fine', project }, { project }], featureStrategies: 'nope' } },
    })
    expect(res.status, res.text).toBe(200)
    const paths = (res.body.errors as { affectedItems: string[] }[]).flatMap((e) => e.affectedItems)
    expect(paths, JSON.stringify(res.body)).toEqual(['body.data.features.1.name', 'body.data.featureStrategies', 'body.data.tagTypes'])
    expect(res.body.warnings).toEqual([])
    // The import itself still refuses it with a 400.
    expect((await t.call('POST', '/api/admin/features-batch/import', { body: { project, environment: 'development', data: { features: 'x' } } })).status).toBe(400)
  })

  it('still answers 400 without a project or environment, and 404 for an unknown project', async () => {
    expect((await t.call('POST', '/api/admin/features-batch/validate', { body: { environment: 'development', data: {} } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/features-batch/validate', { body: { project: fresh('nope'), environment: 'development', data: { features: 1 } } })).status).toBe(404)
  })
})

describe('applicationHostname on the server', () => {
  it('is never matched against the server\'s own host: off in the frontend API, unknown in the playground', async () => {
    const name = fresh('hosts')
    const hosts = [hostname(), process.env.HOSTNAME ?? 'localhost', 'localhost'].join(',')
    await ok(t, 'POST', F, { name })
    await ok(t, 'POST', `${F}/${name}/environments/development/strategies`, { name: 'applicationHostname', parameters: { hostNames: hosts } })
    await ok(t, 'POST', `${F}/${name}/environments/development/on`)
    const token = (await ok(t, 'POST', '/api/admin/api-tokens', { tokenName: fresh('fe'), type: 'frontend', environment: 'development', projects: ['*'] })).body.secret as string
    const frontend = await t.call('POST', '/api/frontend', { token, body: { context: { appName: 'web', sessionId: 's', remoteAddress: '10.0.0.1' } } })
    expect(frontend.status).toBe(200)
    expect((frontend.body.toggles as { name: string }[]).map((x) => x.name)).not.toContain(name)
    const playground = await ok(t, 'POST', '/api/admin/playground', { environment: 'development', projects: ['default'], context: { appName: 'web' } })
    const result = (playground.body.features as { name: string; isEnabled: boolean; strategies: { result: unknown } }[]).find((x) => x.name === name)
    expect(result?.isEnabled).toBe(false)
    expect(result?.strategies.result).toBe('unknown')
  })
})
