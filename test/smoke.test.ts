import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

describe('smoke', () => {
  it('answers health', async () => {
    const res = await t.call('GET', '/health', { token: null })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ health: 'GOOD' })
  })
  it('creates a project', async () => {
    const res = await t.call('POST', '/api/admin/projects', { body: { name: 'My Project' } })
    expect(res.status, res.text).toBe(201)
    expect(res.body.id).toBe('my-project')
  })
})
