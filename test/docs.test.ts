import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

describe('API documentation', () => {
  it('serves an OpenAPI document generated from the routes, with the token scheme and error responses', async () => {
    const res = await t.call('GET', '/docs/openapi.json', { token: null })
    expect(res.status).toBe(200)
    const doc = res.body
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' })
    const create = doc.paths['/api/admin/projects'].post
    expect(create.operationId).toBe('createProject')
    expect(create.security).toEqual([{ apiKey: [] }])
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409', '415']))
    for (const [path, operations] of Object.entries<Record<string, { responses: Record<string, unknown>; operationId: string }>>(doc.paths)) {
      for (const operation of Object.values(operations)) {
        expect(operation.operationId, path).toBeTruthy()
        if (path.startsWith('/api/admin')) expect(Object.keys(operation.responses), path).toEqual(expect.arrayContaining(['401', '403']))
      }
    }
  })

  it('serves an API reference page', async () => {
    const res = await t.call('GET', '/docs', { token: null })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.text).toContain('/docs/openapi.json')
  })
})
