// A project's API tokens at the edge: creating one is one statement over Neon's HTTP (the insert decides, with its
// event), deleting one a read and one statement, listing one round trip; no WebSocket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createProject, ok } from './helpers/factories.js'
import { racing } from './helpers/racing.js'
import { createProjectToken, deleteProjectToken } from '../src/api-tokens/project-tokens.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })

describe("a project's API tokens at the edge", () => {
  it('creates, lists and deletes a token, with their events, and the token serves its SDK in between', async () => {
    const project = await createProject(t)
    const path = `/api/admin/projects/${project}/api-tokens`
    await ok(t, 'GET', path)
    const created = await t.call('POST', path, { body: { tokenName: 'edge', type: 'client' } })
    expect(created.status, created.text).toBe(201)
    expect(trips(created)).toEqual({ http: 1, webSocket: 0 })
    expect((await t.call('GET', '/api/client/features', { token: created.body.secret })).status).toBe(200)
    await ok(t, 'GET', path)
    const listed = await t.call('GET', path)
    expect(trips(listed)).toEqual({ http: 1, webSocket: 0 })
    expect(listed.body.tokens.map((x: { tokenName: string }) => x.tokenName)).toEqual(['edge'])
    const deleted = await t.call('DELETE', `${path}/${encodeURIComponent(listed.body.tokens[0].secret)}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(trips(deleted)).toEqual({ http: 2, webSocket: 0 })
    expect(await t.query(`select type from events where type like 'api-token-%' and project = '${project}' order by id`)).toEqual([{ type: 'api-token-created' }, { type: 'api-token-deleted' }])
    expect((await t.call('GET', '/api/client/features', { token: created.body.secret })).status).toBe(401)
    const refused = await t.call('POST', path, { body: { tokenName: 'edge', type: 'client', environment: 'nowhere' } })
    expect(refused.status, refused.text).toBe(400)
    expect(trips(refused).webSocket).toBe(0)
  })

  it('a token deleted by another writer between the read and the write is a 404, with one event', async () => {
    const project = await createProject(t)
    const caller = { actor: SYSTEM_ACTOR, now: new Date() }
    const { secret } = await createProjectToken(t.db, caller, project, { tokenName: 'raced', type: 'client', environment: 'development', expiresAt: null })
    const raced = racing(t.db, () => deleteProjectToken(t.db, caller, project, secret))
    await expect(deleteProjectToken(raced.db, caller, project, secret)).rejects.toMatchObject({ name: 'NotFoundError' })
    expect(raced.state.raced).toBe(true)
    expect(await t.query(`select type from events where type = 'api-token-deleted' and project = '${project}'`)).toEqual([{ type: 'api-token-deleted' }])
  })
})
