import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, createToken, fresh, ok } from './helpers/factories.js'
import { createSignedInUser } from './helpers/users.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const S = '/api/admin/instance-admin/statistics'

describe('instance statistics', () => {
  it("counts what the instance holds, in Unleash's shape, with a checksum of the rest", async () => {
    const before = (await ok(t, 'GET', S)).body
    const project = await createProject(t)
    const flag = (await createFlag(t, {}, project)).name
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/production/strategies`, {
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness: 'default', groupId: flag },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 'aa', 'bb', 'cc', 'dd', 'ee', 'ff', 'gg', 'hh', 'ii', 'jj', 'kk', 'll', 'mm', 'nn', 'oo', 'pp', 'qq', 'rr', 'ss', 'tt', 'uu', 'vv', 'ww', 'xx', 'yy', 'zz', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8', 'b9', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9'] }],
    })
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/production/on`)
    await createToken(t, { type: 'frontend', environment: 'development' })
    await createSignedInUser(t, fresh('viewer'), 'Viewer')
    const after = (await ok(t, 'GET', S)).body
    expect(after.instanceId).toMatch(/^[0-9a-f-]{36}$/)
    expect(after.featureToggles).toBe(before.featureToggles + 1)
    expect(after.projects).toBe(before.projects + 1)
    expect(after.apiTokens.frontend).toBe(before.apiTokens.frontend + 1)
    expect(after.users).toBe(before.users + 1)
    expect(after.readOnlyUsers).toBe(before.readOnlyUsers + 1)
    expect(after.activeUsers.last7).toBeGreaterThanOrEqual(1)
    expect(after.productionChanges.last30).toBeGreaterThanOrEqual(before.productionChanges.last30 + 2)
    expect(after.maxConstraintValues).toBeGreaterThanOrEqual(106)
    expect(after.maxConstraints).toBeGreaterThanOrEqual(1)
    expect(after.clientApps.map((a: any) => a.range)).toEqual(['allTime', '30d', '7d'])
    expect(after).toMatchObject({ SAMLenabled: false, OIDCenabled: false, passwordAuthEnabled: true, SCIMenabled: false, versionOSS: expect.any(String) })
    const { sum, ...rest } = after
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(rest)))
    expect(sum).toBe([...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join(''))
  })

  it("answers the same as Unleash's CSV: its columns, one row, objects as JSON", async () => {
    const res = await t.call('GET', `${S}/csv`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/)
    expect(res.headers.get('content-disposition')).toContain('attachment')
    const [header, row, end] = res.text.split('\n')
    expect(end).toBe('')
    expect(header!.split(',').slice(0, 4)).toEqual(['"OIDCenabled"', '"SAMLenabled"', '"passwordAuthEnabled"', '"SCIMenabled"'])
    expect(header!.split(',')).toHaveLength(37)
    expect(row).toMatch(/^false,false,true,false,"\[\{""range"":""allTime"",""count"":\d+\}/)
  })

  it('is for admins only', async () => {
    const editor = await createSignedInUser(t, fresh('editor'), 'Editor')
    expect((await editor.call('GET', S)).status).toBe(403)
    expect((await editor.call('GET', `${S}/csv`)).status).toBe(403)
    expect((await t.call('GET', S, { token: null })).status).toBe(401)
  })
})
