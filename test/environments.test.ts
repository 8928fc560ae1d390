import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { fresh } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

describe('environments', () => {
  it('starts with development and production', async () => {
    // Environments are global: only an app of its own has not seen other tests' environments.
    const pristine = await createTestApp()
    try {
      const res = await pristine.call('GET', '/api/admin/environments')
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        version: 1,
        environments: [
          { name: 'development', type: 'development', enabled: true, protected: false, sortOrder: 100, projectCount: 1, apiTokenCount: 0 },
          { name: 'production', type: 'production', enabled: true, protected: false, sortOrder: 200, projectCount: 1, apiTokenCount: 0 },
        ],
      })
    } finally {
      await pristine.close()
    }
  })

  it('creates an environment, records environment-created, and lists it in sort order', async () => {
    const staging = fresh('staging')
    const res = await t.call('POST', '/api/admin/environments', { body: { name: staging, type: 'preproduction', sortOrder: 150 } })
    expect(res.status, res.text).toBe(201)
    expect(res.headers.get('location')).toBe(`/api/admin/environments/${staging}`)
    expect(res.body).toMatchObject({ name: staging, type: 'preproduction', enabled: true, sortOrder: 150 })
    const names = (await t.call('GET', '/api/admin/environments')).body.environments.map((e: { name: string }) => e.name)
    expect(names.filter((name: string) => ['development', staging, 'production'].includes(name))).toEqual(['development', staging, 'production'])
    const events = await t.query("select * from events where type = 'environment-created' and environment = $1", [staging])
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ environment: staging })
  })

  it('answers 409 for an existing name', async () => {
    const res = await t.call('POST', '/api/admin/environments', { body: { name: 'production', type: 'production' } })
    expect(res.status).toBe(409)
    expect(res.body.name).toBe('NameExistsError')
  })

  it.each([
    ['a name with a space', { name: 'my env', type: 'test' }],
    ['the wildcard *', { name: '*', type: 'test' }],
    ['a name holding the wildcard *', { name: 'qa*', type: 'test' }],
    ['no type', { name: 'qa' }],
    ['an empty name', { name: '', type: 'test' }],
  ])('answers 400 for %s', async (_, body) => {
    const res = await t.call('POST', '/api/admin/environments', { body })
    expect(res.status).toBe(400)
    expect(res.body.name).toBe('ValidationError')
  })
})
