// The instance state at the edge: the export is one statement; the import a read and one batch (the locks and one
// statement writing every change with its events), a round trip more only to take new segments' ids, never a
// WebSocket. An import decided on a read another writer makes stale is decided again from a fresh one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEdgeApp, type EdgeApp } from './helpers/edge.js'
import { addStrategy, createFlag, createSegment, fresh, ok } from './helpers/factories.js'
import { racing } from './helpers/racing.js'
import { SYSTEM_ACTOR, type Caller } from '../src/core/principal.js'
import { importState } from '../src/state/import.js'

let t: EdgeApp
beforeAll(async () => {
  t = await createEdgeApp()
})
afterAll(() => t.close())

/** A request and its own round trips, with the principal remembered first (a write forgets the remembered ones). */
async function measured(method: string, path: string, body?: unknown) {
  await ok(t, 'GET', '/api/admin/environments')
  const res = await t.call(method, path, { body })
  expect(res.status >= 200 && res.status < 300, `${method} ${path} answered ${res.status}: ${res.text}`).toBe(true)
  return res
}
const trips = (res: { http: number; webSocket: number }) => ({ http: res.http, webSocket: res.webSocket })
const typesAfter = async (id: number) => (await t.query<{ type: string }>('select type from events where id > $1 order by id', [id])).map((e) => e.type)
const maxEventId = async () => (await t.query<{ max: number }>('select coalesce(max(id), 0)::int as max from events'))[0]!.max

describe('the instance state at the edge', () => {
  it('exports in one round trip', async () => {
    const res = await measured('GET', '/api/admin/state/export')
    expect(trips(res)).toEqual({ http: 1, webSocket: 0 })
    expect(res.body.version).toBe(4)
  })

  it('imports every kind in a read and one batch, a round trip more for new segments’ ids', async () => {
    const flag = fresh('edge-flag')
    const document = {
      version: 4,
      environments: [{ name: fresh('edge-env'), type: 'test' }],
      projects: [{ id: 'edge-shop', name: 'Edge shop', environments: [{ name: 'development' }, { name: 'production', changeRequestsEnabled: true }] }],
      strategies: [{ name: 'edge-tenant', parameters: [{ name: 'ids', type: 'list', required: true }] }],
      contextFields: [{ name: 'edge-tier', legalValues: [{ value: 'gold' }] }],
      tagTypes: [{ name: 'edge-team' }],
      tags: [{ type: 'edge-team', value: 'payments' }],
      segments: [{ id: 40, name: 'edge-segment', constraints: [{ contextName: 'edge-tier', operator: 'IN', values: ['gold'] }] }],
      features: [{ name: flag, project: 'edge-shop', description: 'at the edge' }],
      featureEnvironments: [{ featureName: flag, environment: 'development', enabled: true }],
      featureStrategies: [{ id: 'a6c1fb8e-3c55-4f55-9a4b-7d0b1a2f3c41', featureName: flag, environment: 'development', strategyName: 'edge-tenant', parameters: { ids: 'acme' } }],
      featureStrategySegments: [{ featureStrategyId: 'a6c1fb8e-3c55-4f55-9a4b-7d0b1a2f3c41', segmentId: 40 }],
      featureTags: [{ featureName: flag, tagType: 'edge-team', tagValue: 'payments' }],
    }
    const before = await maxEventId()
    const res = await measured('POST', '/api/admin/state/import', document)
    expect(res.status).toBe(202)
    expect(trips(res)).toEqual({ http: 3, webSocket: 0 })
    expect(await typesAfter(before)).toEqual([
      'environment-import',
      'strategy-import',
      'context-field-created',
      'tag-type-import',
      'tag-import',
      'segment-import',
      'project-import',
      'feature-import',
      'feature-tag-import',
    ])
    const imported = (await ok(t, 'GET', `/api/admin/projects/edge-shop/features/${flag}`)).body
    expect(imported.environments.find((e: { name: string }) => e.name === 'development')).toMatchObject({ enabled: true, strategies: [{ name: 'edge-tenant', parameters: { ids: 'acme' } }] })
    expect(imported.tags).toEqual([{ type: 'edge-team', value: 'payments' }])

    // The same document again: nothing to write after the read.
    const again = await measured('POST', '/api/admin/state/import', document)
    expect(again.body.events).toBe(0)
    expect(trips(again)).toEqual({ http: 1, webSocket: 0 })
    // A change with drop, and no new segment: a read and one batch.
    const dropping = await measured('POST', '/api/admin/state/import?drop=true&keep=false', { version: 4, tags: [], tagTypes: [{ name: 'edge-team' }], features: [{ name: flag, project: 'edge-shop', description: 'again' }] })
    expect(trips(dropping)).toEqual({ http: 2, webSocket: 0 })
    expect(dropping.body.dropped).toMatchObject({ tags: 1, tagTypes: 0 })
    expect((await ok(t, 'GET', `/api/admin/projects/edge-shop/features/${flag}`)).body).toMatchObject({ description: 'again', tags: [] })
  })

  it('decides again from a fresh read when a flag changes between the read and the write', async () => {
    const flag = (await createFlag(t, { description: 'first' })).name as string
    await addStrategy(t, flag, 'development', { name: 'default' })
    const segment = await createSegment(t)
    const raced = racing(t.db, () => ok(t, 'PATCH', `/api/admin/projects/default/features/${flag}`, [{ op: 'replace', path: '/description', value: 'theirs' }]))
    const caller: Caller = { principal: { kind: 'admin-token', tokenId: 0, name: 'system', rootRole: 'Admin' }, actor: SYSTEM_ACTOR, key: 'token:0', now: new Date() }
    const before = await maxEventId()
    const result = await importState(raced.db, caller, { version: 4, features: [{ name: flag, project: 'default', description: 'restored' }], segments: [{ id: 1, name: segment.name, description: 'restored too', constraints: [] }] }, { drop: false, keep: false }, () => undefined)
    expect(raced.state.raced).toBe(true)
    expect(result.imported).toMatchObject({ features: 1, segments: 1 })
    const events = await t.query<{ type: string; data: any; pre_data: any }>(`select type, data, pre_data from events where id > $1 and type like '%-import' order by id`, [before])
    // The import's preData is the flag as the other writer left it: it was read again.
    expect(events.map((e) => [e.type, e.pre_data?.description])).toEqual([
      ['segment-import', null],
      ['feature-import', 'theirs'],
    ])
    // The document has no strategies: the flag keeps its own.
    expect((await ok(t, 'GET', `/api/admin/projects/default/features/${flag}`)).body).toMatchObject({ description: 'restored', environments: expect.arrayContaining([expect.objectContaining({ name: 'development', strategies: [expect.objectContaining({ name: 'default' })] })]) })
  })
})
