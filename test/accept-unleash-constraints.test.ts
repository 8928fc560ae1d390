import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createToken, fresh, ok } from './helpers/factories.js'

// Unleash 8.2 accepts a REGEX pattern that is not RE2 syntax and IN_CIDR entries that are no address or range, and its
// SDKs evaluate them: the pattern never matches (so inverted it always holds), the entries are skipped. Flagpost
// accepts them on every path a constraint enters by, evaluates them as the SDKs do, and warns where it validates;
// a pattern whose program is over FLAGPOST_REGEX_MAX_PROGRAM is still refused (it bounds every evaluation's work).

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const cidr = (values: string[], inverted = false) => ({ contextName: 'remoteAddress', operator: 'IN_CIDR', values, inverted, caseInsensitive: false })
const regex = (value: string, inverted = false) => ({ contextName: 'userId', operator: 'REGEX', value, values: [], inverted, caseInsensitive: false })
const HUGE = '(a|b|c|d|e|f|g|h){1000}'

async function flagWith(project: string, constraints: unknown[]) {
  const flag = (await createFlag(t, {}, project)).name as string
  const F = `/api/admin/projects/${project}/features/${flag}/environments/development`
  const res = await t.call('POST', `${F}/strategies`, { body: { name: 'default', constraints } })
  expect(res.status, res.text).toBe(200)
  expect((await t.call('POST', `${F}/on`)).status).toBe(200)
  return flag
}

async function playground(project: string, context: Record<string, string>) {
  const res = await ok(t, 'POST', '/api/admin/playground', { environment: 'development', projects: [project], context: { appName: 'web', ...context } })
  return Object.fromEntries((res.body.features as { name: string; isEnabled: boolean }[]).map((f) => [f.name, f.isEnabled]))
}

describe('IN_CIDR entries that are no address or range', () => {
  it('are accepted on a strategy, skipped by the playground, the frontend API and OFREP, and warned about by constraints/validate', async () => {
    const project = await createProject(t, { environments: ['development'] })
    const mixed = await flagWith(project, [cidr(['not-an-ip', '10.0.0.0/8', '10.0.0.0/33'])])
    const only = await flagWith(project, [cidr(['example.com'])])
    const onlyInverted = await flagWith(project, [cidr(['example.com'], true)])
    expect(await playground(project, { remoteAddress: '10.1.2.3' })).toEqual({ [mixed]: true, [only]: false, [onlyInverted]: true })
    expect(await playground(project, { remoteAddress: '11.0.0.1' })).toEqual({ [mixed]: false, [only]: false, [onlyInverted]: true })

    const token = (await createToken(t, { tokenName: fresh('fe'), type: 'frontend', environment: 'development', projects: [project] })).secret
    const frontend = await t.call('POST', '/api/frontend', { token, body: { context: { appName: 'web', remoteAddress: '10.1.2.3' } } })
    expect(frontend.status, frontend.text).toBe(200)
    expect((frontend.body.toggles as { name: string }[]).map((f) => f.name).sort()).toEqual([mixed, onlyInverted].sort())
    const client = (await createToken(t, { tokenName: fresh('server'), type: 'client', environment: 'development', projects: [project] })).secret
    for (const [flag, value] of [[mixed, true], [only, false], [onlyInverted, true]] as const) {
      const ofrep = await t.call('POST', `/ofrep/v1/evaluate/flags/${flag}`, { token: client, body: { context: { targetingKey: 'u', remoteAddress: '10.1.2.3' } } })
      expect(ofrep.status, ofrep.text).toBe(200)
      expect(ofrep.body.value, flag).toBe(value)
    }

    const validated = await t.call('POST', '/api/admin/constraints/validate', { body: cidr(['not-an-ip', '10.0.0.0/8']) })
    expect(validated.status, validated.text).toBe(200)
    expect(validated.body.warnings).toEqual(['IN_CIDR entry "not-an-ip" is no IP address or CIDR range: SDKs skip it'])
    expect((await t.call('POST', '/api/admin/constraints/validate', { body: cidr(['10.0.0.0/8', '::1']) })).status).toBe(204)
    // What the engine skips is what the warning names: forms a looser parser takes (a number, hex, two parts) included.
    const loose = await t.call('POST', '/api/admin/constraints/validate', { body: cidr(['167772161', '0xa.0.0.1', '10.1', '010.0.0.1']) })
    expect(loose.body.warnings).toHaveLength(4)
  })

  it('are accepted in a segment', async () => {
    const res = await t.call('POST', '/api/admin/segments', { body: { name: fresh('seg'), constraints: [cidr(['nope', '192.168.0.0/16'])] } })
    expect(res.status, res.text).toBe(201)
    expect(res.body.constraints[0].values).toEqual(['nope', '192.168.0.0/16'])
  })
})

describe('a REGEX pattern that is not RE2 syntax', () => {
  it('is accepted in a segment and in a change request, and never matches', async () => {
    const segment = await t.call('POST', '/api/admin/segments', { body: { name: fresh('seg'), constraints: [regex('^(?=team)')] } })
    expect(segment.status, segment.text).toBe(201)
    const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const flag = (await createFlag(t, {}, project)).name as string
    const draft = await t.call('POST', `/api/admin/projects/${project}/environments/production/change-requests`, {
      body: { feature: flag, action: 'addStrategy', payload: { name: 'default', constraints: [regex('(a)\\1')] } },
    })
    expect(draft.status, draft.text).toBe(200)
    const never = await flagWith(project, [regex('(a)\\1')])
    const always = await flagWith(project, [regex('(a)\\1', true)])
    expect(await playground(project, { userId: 'aa' })).toEqual({ [flag]: false, [never]: false, [always]: true })
  })

  it('over the program limit is refused on a strategy, in a segment and in a change request (400, nothing written)', async () => {
    const project = await createProject(t, { environments: ['development'], changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const flag = (await createFlag(t, {}, project)).name as string
    const strategy = await t.call('POST', `/api/admin/projects/${project}/features/${flag}/environments/development/strategies`, { body: { name: 'default', constraints: [regex(HUGE)] } })
    expect(strategy.status, strategy.text).toBe(400)
    expect(strategy.body).toMatchObject({ name: 'ValidationError', id: expect.any(String), message: expect.stringContaining('FLAGPOST_REGEX_MAX_PROGRAM') })
    expect((await t.call('POST', '/api/admin/segments', { body: { name: fresh('seg'), constraints: [regex(HUGE)] } })).status).toBe(400)
    const draft = await t.call('POST', `/api/admin/projects/${project}/environments/production/change-requests`, {
      body: { feature: flag, action: 'addStrategy', payload: { name: 'default', constraints: [regex(HUGE)] } },
    })
    expect(draft.status, draft.text).toBe(400)
    expect(await t.query('select 1 from feature_strategies where feature_name = $1', [flag])).toEqual([])
  })
})

describe('POST /api/admin/features-batch/validate and import', () => {
  const importOf = (project: string, flag: string, constraints: unknown[]) => ({
    project,
    environment: 'development',
    data: { features: [{ name: flag }], featureStrategies: [{ featureName: flag, name: 'default', constraints }], featureEnvironments: [{ name: flag, featureName: flag, enabled: true }], tagTypes: [] },
  })

  it('warns about the constraints the SDKs do not read as written, and imports them', async () => {
    const project = await createProject(t, { environments: ['development'] })
    const flag = fresh('imported')
    const body = importOf(project, flag, [regex('^(?!x)'), cidr(['10.0.0.0/8', 'bogus'])])
    const validation = (await ok(t, 'POST', '/api/admin/features-batch/validate', body)).body
    expect(validation.errors).toEqual([])
    const warning = validation.warnings.find((w: { message: string }) => w.message.includes('SDKs do not read them as written'))
    expect(warning.affectedItems).toEqual([expect.stringMatching(new RegExp(`^${flag}: REGEX pattern "\\^\\(\\?!x\\)" is not valid RE2 syntax`)), `${flag}: IN_CIDR entry "bogus" is no IP address or CIDR range: SDKs skip it`])
    expect((await t.call('POST', '/api/admin/features-batch/import', { body })).status).toBe(200)
    expect(await playground(project, { userId: 'y', remoteAddress: '10.0.0.1' })).toEqual({ [flag]: false })
  })

  it('refuses a pattern over the program limit (400, nothing written)', async () => {
    const project = await createProject(t, { environments: ['development'] })
    const flag = fresh('imported')
    const res = await t.call('POST', '/api/admin/features-batch/import', { body: importOf(project, flag, [regex(HUGE)]) })
    expect(res.status, res.text).toBe(400)
    expect(await t.query('select 1 from features where name = $1', [flag])).toEqual([])
  })
})

describe('POST /api/admin/state/import', () => {
  it('restores a REGEX that RE2 refuses and IN_CIDR entries that are no address, and refuses a pattern over the program limit', async () => {
    const flag = fresh('restored')
    const doc = (constraints: unknown[]) => ({
      version: 4,
      features: [{ name: flag, project: 'default' }],
      featureStrategies: [{ featureName: flag, environment: 'development', name: 'default', constraints }],
      segments: [{ id: 4242, name: fresh('restored-segment'), constraints: [cidr(['bogus'])] }],
    })
    const huge = await t.call('POST', '/api/admin/state/import', { body: doc([regex(HUGE)]) })
    expect(huge.status, huge.text).toBe(400)
    expect(await t.query('select 1 from features where name = $1', [flag])).toEqual([])
    const res = await t.call('POST', '/api/admin/state/import', { body: doc([regex('^(?=x)'), cidr(['10.0.0.0/8', 'bogus'])]) })
    expect(res.status, res.text).toBe(202)
    const strategies = (await ok(t, 'GET', `/api/admin/projects/default/features/${flag}/environments/development/strategies`)).body
    expect(strategies[0].constraints.map((c: { operator: string }) => c.operator)).toEqual(['REGEX', 'IN_CIDR'])
  })
})
