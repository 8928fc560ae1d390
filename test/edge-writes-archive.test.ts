// The archive's writes of many flags at the edge (archiving, reviving, deleting for good): a read, then one batch
// (the flags' locks and one statement), over HTTP, with no WebSocket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { createFlag, createProject, enableFlag, ok } from './helpers/factories.js'

let t: EdgeApp
let project: string
beforeAll(async () => {
  t = await createEdgeApp()
  project = await createProject(t)
})
afterAll(() => t.close())

const F = (flag: string) => `/api/admin/projects/${project}/features/${flag}`
const newFlag = async () => (await createFlag(t, {}, project)).name as string

/** Makes the request with the principal remembered, so the round trips counted are the route's own. */
async function measured(method: string, path: string, body?: unknown) {
  await t.call('GET', '/api/admin/projects')
  const res = await t.call(method, path, { body })
  expect(res.status >= 200 && res.status < 300, `${method} ${path} answered ${res.status}: ${res.text}`).toBe(true)
  return { http: res.http, webSocket: res.webSocket }
}

describe('the archive at the edge', () => {
  it('archives, revives and deletes many flags in two round trips each', async () => {
    const [a, b] = [await newFlag(), await newFlag()]
    await enableFlag(t, a, 'development', project)
    expect(await measured('POST', `/api/admin/projects/${project}/archive`, { features: [a, b] })).toEqual({ http: 2, webSocket: 0 })
    expect(await measured('POST', `/api/admin/projects/${project}/revive`, { features: [a, b] })).toEqual({ http: 2, webSocket: 0 })
    await ok(t, 'POST', `/api/admin/projects/${project}/archive`, { features: [a, b] })
    expect(await measured('POST', `/api/admin/projects/${project}/delete`, { features: [a] })).toEqual({ http: 2, webSocket: 0 })
    expect(await measured('DELETE', `/api/admin/archive/${b}`)).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(b))).status).toBe(404)
    expect(await measured('POST', `/api/admin/projects/${project}/archive/validate`, { features: [await newFlag()] })).toEqual({ http: 1, webSocket: 0 })
  })
})

describe('cloning at the edge', () => {
  it('clones a flag with its strategies in a read and one batch', async () => {
    const source = await newFlag()
    await enableFlag(t, source, 'development', project)
    expect(await measured('POST', `${F(source)}/clone`, { name: `${source}-copy` })).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', F(`${source}-copy`))).body.environments.find((e: { name: string }) => e.name === 'development').strategies).toHaveLength(1)
  })
})

describe('moving at the edge', () => {
  it('moves a flag to another project in a read and one statement', async () => {
    const flag = await newFlag()
    const to = await createProject(t)
    expect(await measured('POST', `${F(flag)}/changeProject`, { newProjectId: to })).toEqual({ http: 2, webSocket: 0 })
    expect((await t.call('GET', `/api/admin/projects/${to}/features/${flag}`)).body.project).toBe(to)
  })
})
