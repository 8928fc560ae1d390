// Names that become a URL path segment: `.` and `..` are resolved away by every client and proxy, so an object so named
// could never be read, changed or deleted by its own routes. Refused wherever such a name is made (flags, environments
// and signal endpoints are held in their own tests and test/security-import.test.ts). A tag value `..` stays accepted,
// as Unleash accepts it: the bulk tag route (PUT …/tags) removes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
  expect((await t.call('POST', '/api/admin/projects/default/features', { body: { name: 'tagged' } })).status).toBe(201)
})
afterAll(() => t.close())

const refused = (res: { status: number; text: string }) => {
  expect(res.status, res.text).toBe(400)
  expect(res.text).toContain('must not be')
}

describe('. and .. as names of path segments', () => {
  it('are refused as tag type names', async () => {
    refused(await t.call('POST', '/api/admin/tag-types', { body: { name: '..' } }))
    refused(await t.call('POST', '/api/admin/tag-types/validate', { body: { name: '..' } }))
  })

  it('are refused as project ids, and a name that would make one gets another id', async () => {
    for (const id of ['.', '..']) refused(await t.call('POST', '/api/admin/projects', { body: { id, name: 'Dots' } }))
    const made = await t.call('POST', '/api/admin/projects', { body: { name: '..' } })
    expect(made.status, made.text).toBe(201)
    expect(made.body.id).not.toMatch(/^\.{1,2}$/)
    expect((await t.call('GET', `/api/admin/projects/${made.body.id}`)).status).toBe(200)
  })

  it('are refused as strategy type names', async () => {
    for (const name of ['.', '..']) refused(await t.call('POST', '/api/admin/strategies', { body: { name, parameters: [] } }))
  })

  it('are refused as a tag type the import would create', async () => {
    const validate = await t.call('POST', '/api/admin/features-batch/validate', {
      body: { project: 'default', environment: 'development', data: { features: [{ name: 'tagged' }], featureStrategies: [], tagTypes: [{ name: '..' }], featureTags: [{ featureName: 'tagged', tagType: '..', tagValue: 'v1' }] } },
    })
    expect(validate.status, validate.text).toBe(200)
    expect(JSON.stringify(validate.body.errors)).toContain('must not be ..')
  })
})
