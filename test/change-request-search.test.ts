import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag, createProject, fresh } from './helpers/factories.js'
import { createSignedInUser, type TestUser } from './helpers/users.js'

/*
 * GET /api/admin/search/change-requests: across projects, newest first; `requestedApproverId` (the caller's own id)
 * keeps those waiting for the caller's approval; a private project's change requests reach only who may read it.
 */
let t: TestApp
let ed: TestUser // an Editor: may approve in open projects
let eve: TestUser // another Editor, author of change requests
let viv: TestUser // a Viewer: may approve nothing
let outsider: TestUser // a Viewer, not a member of the private project (Editors, like admins, read every project)
let member: TestUser // a Viewer, Owner of the private project
let open: string
let vault: string
const S = '/api/admin/search/change-requests'

/** A change request by `as` to switch a new flag on in production of `project`, sent to review unless `draft`. */
async function changeRequest(as: TestUser, project: string, draft = false): Promise<number> {
  const flag = (await createFlag(t, { name: fresh('cr-flag') }, project)).name
  const res = await as.call('POST', `/api/admin/projects/${project}/environments/production/change-requests`, { body: { feature: flag, action: 'updateEnabled', payload: { enabled: true } } })
  expect(res.status, res.text).toBe(200)
  if (!draft) expect((await as.call('PUT', `/api/admin/projects/${project}/change-requests/${res.body.id}/state`, { body: { state: 'In review' } })).status).toBe(200)
  return res.body.id
}

beforeAll(async () => {
  t = await createTestApp()
  ed = await createSignedInUser(t, 'ed', 'Editor')
  eve = await createSignedInUser(t, 'eve', 'Editor')
  viv = await createSignedInUser(t, 'viv', 'Viewer')
  outsider = await createSignedInUser(t, 'otto', 'Viewer')
  member = await createSignedInUser(t, 'mia', 'Viewer')
  open = await createProject(t, { changeRequestEnvironments: [{ name: 'production', requiredApprovals: 2 }] })
  vault = await createProject(t, { mode: 'private', changeRequestEnvironments: [{ name: 'production' }] })
  expect((await t.call('POST', `/api/admin/projects/${vault}/access`, { body: { roles: [4], users: [member.id, eve.id] } })).status).toBe(200)
})
afterAll(() => t.close())

const ids = (res: { body: any }) => res.body.changeRequests.map((c: { id: number }) => c.id)

describe('GET /api/admin/search/change-requests', () => {
  it("lists change requests of every project, newest first, in Unleash's shape, with createdBy and paging", async () => {
    const first = await changeRequest(eve, open)
    const second = await changeRequest(eve, open, true)
    const res = await t.call('GET', `${S}?createdBy=${eve.id}&limit=2`)
    expect(res.status, res.text).toBe(200)
    expect(ids(res).slice(0, 2)).toContain(second)
    const item = res.body.changeRequests.find((c: { id: number }) => c.id === second)
    expect(item).toMatchObject({ id: second, project: open, environment: 'production', state: 'Draft', createdBy: { id: eve.id, username: 'eve' }, segments: [], title: `Change request #${second}` })
    expect(item.features).toHaveLength(1)
    const all = await t.call('GET', `${S}?createdBy=${eve.id}&limit=1000`)
    expect(ids(all)).toEqual([...ids(all)].sort((a: number, b: number) => b - a))
    expect(ids(all)).toContain(first)
    expect(all.body.total).toBe(ids(all).length)
    const paged = await t.call('GET', `${S}?createdBy=${eve.id}&limit=1&offset=1`)
    expect(ids(paged)).toEqual([ids(all)[1]])
    expect(paged.body.total).toBe(all.body.total)
  })

  it('keeps, for requestedApproverId, those In review the caller may approve: not their own, not yet approved by them', async () => {
    const waiting = await changeRequest(eve, open)
    const draft = await changeRequest(eve, open, true)
    const own = await changeRequest(ed, open)
    const approved = await changeRequest(eve, open)
    expect((await ed.call('POST', `/api/admin/projects/${open}/change-requests/${approved}/approve`)).status).toBe(200)

    const res = await ed.call('GET', `${S}?requestedApproverId=${ed.id}`)
    expect(res.status, res.text).toBe(200)
    expect(ids(res)).toContain(waiting)
    for (const id of [draft, own, approved]) expect(ids(res)).not.toContain(id)
    expect(res.body.changeRequests.every((c: { state: string }) => c.state === 'In review')).toBe(true)
    expect(res.body.total).toBe(ids(res).length)
    // A Viewer may approve nothing: nothing waits for them.
    expect((await viv.call('GET', `${S}?requestedApproverId=${viv.id}`)).body).toEqual({ changeRequests: [], total: 0 })
  })

  it("refuses requestedApproverId of another user, or from a token, with 400 ValidationError: another user's permissions are not the caller's to read", async () => {
    for (const [who, res] of [
      ['another user', await ed.call('GET', `${S}?requestedApproverId=${eve.id}`)],
      ['an admin token', await t.call('GET', `${S}?requestedApproverId=${ed.id}`)],
    ] as const) {
      expect(res.status, who).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
  })

  it("hides a private project's change requests from who may not read it, in lists and counts", async () => {
    const secret = await changeRequest(eve, vault)
    expect(ids(await outsider.call('GET', `${S}?limit=1000`))).not.toContain(secret)
    expect(ids(await outsider.call('GET', `${S}?createdBy=${eve.id}&limit=1000`))).not.toContain(secret)
    expect(ids(await outsider.call('GET', `${S}?requestedApproverId=${outsider.id}`))).not.toContain(secret)
    const outsiderTotal = (await outsider.call('GET', `${S}?createdBy=${eve.id}`)).body.total
    const memberTotal = (await member.call('GET', `${S}?createdBy=${eve.id}`)).body.total
    expect(memberTotal).toBe(outsiderTotal + 1)
    expect(ids(await member.call('GET', `${S}?limit=1000`))).toContain(secret)
    expect(ids(await t.call('GET', `${S}?limit=1000`))).toContain(secret)
  })

  it('answers 400 ValidationError for a malformed id, offset or limit, and 401 without a credential', async () => {
    for (const query of ['createdBy=abc', 'requestedApproverId=1.5', 'offset=-1', 'limit=0', 'limit=1001', 'limit=x']) {
      const res = await t.call('GET', `${S}?${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    const anonymous = await t.call('GET', S, { token: null })
    expect(anonymous.status).toBe(401)
  })
})
