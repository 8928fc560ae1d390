import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createUser, fresh } from './helpers/factories.js'
import { createPat } from './helpers/users.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ now: () => new Date('2026-11-20T10:00:00.000Z') })
})
afterAll(() => t.close())

describe('POST /api/admin/feedback and PUT /api/admin/feedback/{id}', () => {
  it('keeps each user their own feedback state, as GET /api/admin/user reads it back', async () => {
    const alice = await createUser(t, 'Viewer')
    const bob = await createUser(t, 'Viewer')
    const created = await alice.call('POST', '/api/admin/feedback', { body: { feedbackId: 'pnps' } })
    expect(created.status, created.text).toBe(200)
    expect(created.body).toEqual({ userId: alice.id, feedbackId: 'pnps', neverShow: false, given: '2026-11-20T10:00:00.000Z' })

    const updated = await alice.call('PUT', '/api/admin/feedback/pnps', { body: { neverShow: true } })
    expect(updated.status, updated.text).toBe(200)
    // Only the fields sent change: `given` stays.
    expect(updated.body).toEqual({ userId: alice.id, feedbackId: 'pnps', neverShow: true, given: '2026-11-20T10:00:00.000Z' })

    const cleared = await alice.call('PUT', '/api/admin/feedback/pnps', { body: { given: null } })
    expect(cleared.body).toEqual({ userId: alice.id, feedbackId: 'pnps', neverShow: true, given: null })

    // An unknown id starts not given and shown; a userId in the body names nobody else.
    const other = await alice.call('PUT', '/api/admin/feedback/other', { body: { userId: bob.id } })
    expect(other.body).toEqual({ userId: alice.id, feedbackId: 'other', neverShow: false, given: null })

    expect((await alice.call('GET', '/api/admin/user')).body.feedback).toEqual([other.body, cleared.body])
    expect((await bob.call('GET', '/api/admin/user')).body.feedback).toEqual([])
  })

  it('takes a personal access token, and refuses an API token (no user) with a 400', async () => {
    const user = await createUser(t, 'Viewer')
    const pat = await createPat(user)
    const res = await t.call('POST', '/api/admin/feedback', { token: pat, body: { feedbackId: 'with-pat', neverShow: true } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ userId: user.id, neverShow: true })
    const admin = await t.call('POST', '/api/admin/feedback', { body: { feedbackId: 'x' } })
    expect(admin.status).toBe(400)
    expect(admin.body.name).toBe('ValidationError')
  })

  it('refuses bad input with a 400 and no credentials with a 401', async () => {
    const user = await createUser(t, 'Viewer')
    for (const body of [{}, { feedbackId: '' }, { feedbackId: 'x'.repeat(101) }, { feedbackId: 'x', neverShow: 'yes' }]) {
      const res = await user.call('POST', '/api/admin/feedback', { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.name).toBe('ValidationError')
    }
    expect((await user.call('PUT', '/api/admin/feedback/x', { body: { given: 'yesterday' } })).status).toBe(400)
    expect((await t.call('POST', '/api/admin/feedback', { token: null, body: { feedbackId: 'x' } })).status).toBe(401)
  })

  it('bounds how many prompts one user keeps: a new one beyond 200 is a 400, a known one still updates', async () => {
    const user = await createUser(t, 'Viewer')
    await t.query(`insert into user_feedback (user_id, feedback_id) select $1, 'f' || n from generate_series(1, 200) n`, [user.id])
    const refused = await user.call('POST', '/api/admin/feedback', { body: { feedbackId: 'one-more' } })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toContain('at most 200')
    expect((await user.call('PUT', '/api/admin/feedback/f7', { body: { neverShow: true } })).status).toBe(200)
  })
})

describe('POST /api/admin/splash/{id}', () => {
  it('marks the splash screen seen for the caller only, and is idempotent', async () => {
    const alice = await createUser(t, 'Viewer')
    const bob = await createUser(t, 'Viewer')
    const id = fresh('splash')
    for (let i = 0; i < 2; i++) {
      const res = await alice.call('POST', `/api/admin/splash/${id}`)
      expect(res.status, res.text).toBe(200)
      expect(res.body).toEqual({ userId: alice.id, splashId: id, seen: true })
    }
    expect((await alice.call('GET', '/api/admin/user')).body.splash).toEqual({ [id]: true })
    expect((await bob.call('GET', '/api/admin/user')).body.splash).toEqual({})
    expect((await t.call('POST', `/api/admin/splash/${id}`)).status).toBe(400)
    await t.query(`insert into user_splash (user_id, splash_id, seen) select $1, 's' || n, true from generate_series(1, 199) n`, [bob.id])
    expect((await bob.call('POST', '/api/admin/splash/last')).status).toBe(200)
    expect((await bob.call('POST', '/api/admin/splash/beyond')).status).toBe(400)
  })
})
