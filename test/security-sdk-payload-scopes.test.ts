import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NARROWED_BYTES_PER_MINUTE } from '../src/client-api/service.js'
import { DATABASE_BUILD_WEIGHT } from '../src/client-api/load.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createPat, createSignedInUser } from './helpers/users.js'

/*
 * The SDK payload of a scope is built once from the database and kept; the caller's filters (`project`, `namePrefix`,
 * `tag`) choose other scopes. A client token of every project (the usual `*`) or an admin token used to make the server
 * read and prepare a whole payload for each made-up filter value (`?project=heavy,x1`, `?project=heavy,x2`, …, or
 * `?tag=simple:heavy&tag=simple:xN`): a new scope each time, nothing charged. Now a project filter is a filter of the
 * token's own payload in memory, and every narrowed payload the process does not hold is charged to the token.
 */

let t: TestApp
const builds: string[] = []
let size = 0

/** A client token's secret, of these projects. */
const token = async (name: string, projects: string[]) =>
  (await t.call('POST', '/api/admin/api-tokens', { body: { tokenName: name, type: 'client', environment: 'development', projects } })).body.secret as string

const poll = (secret: string, query: string) => t.call('GET', `/api/client/features${query}`, { token: secret })

beforeAll(async () => {
  t = await createTestApp({ sdk: { onBuild: (key) => builds.push(key) } })
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await t.call(method, path, { body })
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBeLessThan(300)
    return res.body
  }
  await ok('POST', '/api/admin/projects', { id: 'heavy', name: 'heavy', environments: ['development'] })
  await ok('POST', '/api/admin/projects', { id: 'light', name: 'light', environments: ['development'] })
  await ok('POST', '/api/admin/projects/heavy/features', { name: 'heavy-flag' })
  await ok('POST', '/api/admin/projects/light/features', { name: 'light-flag' })
  await ok('POST', '/api/admin/projects/light/features/light-flag/environments/development/on')
  await ok('POST', '/api/admin/features/heavy-flag/tags', { type: 'simple', value: 'heavy' })
  const s = await ok('POST', '/api/admin/projects/heavy/features/heavy-flag/environments/development/strategies', { name: 'default' })
  // About 3.4 MB of payload: 900 constraints of 250 values.
  const constraints = Array.from({ length: 900 }, (_, c) => ({ contextName: 'userId', operator: 'IN', inverted: false, caseInsensitive: false, values: Array.from({ length: 250 }, (_, v) => `member-${c}-${v}`) }))
  await t.query('update feature_strategies set constraints = $1 where id = $2', [JSON.stringify(constraints), s.id])
  await ok('POST', '/api/admin/projects/heavy/features/heavy-flag/environments/development/on')
  size = (await poll(await token('sizer', ['heavy']), '')).text.length
  expect(size).toBeGreaterThan(3_000_000)
})
afterAll(() => t.close())

describe('SDK payloads narrowed by a project filter', () => {
  it('are filtered from the token’s own payload: made-up project names never read the database again, and answer what a build would', async () => {
    const all = await token('all-projects', ['*'])
    builds.length = 0
    const first = await poll(all, '?project=light')
    expect(first.status).toBe(200)
    expect(first.body.features.map((f: any) => f.name)).toEqual(['light-flag'])
    expect(first.body.query.project).toEqual(['light'])
    for (let i = 0; i < 5; i++) {
      const res = await poll(all, `?project=light,made-up-${i}`)
      expect(res.status).toBe(200)
      expect(res.body.features.map((f: any) => f.name)).toEqual(['light-flag'])
      expect(res.body.query.project).toEqual(['light', `made-up-${i}`])
    }
    // One read: the token's own scope (every project); each filter is a filter of it.
    expect(builds).toHaveLength(1)
    expect(JSON.parse(builds[0]!)[1]).toBe('*')
    // The same as a token of that project alone gets (its own scope, built from the database).
    const own = await poll(await token('light-only', ['light']), '')
    expect(own.body.features).toEqual(first.body.features)
    expect(own.body.segments).toEqual(first.body.segments)
    // A project the token does not cover stays out, whatever the filter says.
    const narrow = await poll(await token('light-filter', ['light']), '?project=light,heavy')
    expect(narrow.body.features.map((f: any) => f.name)).toEqual(['light-flag'])
  })

  it('are charged to the token by the bytes made: made-up project names get 429 with Retry-After; one filter polled again, and another token, do not', async () => {
    const cycling = await token('cycling', ['*'])
    // One filter polled again is served from the cache, however often: charged once.
    for (let i = 0; i < 20; i++) expect((await poll(cycling, '?project=heavy')).status).toBe(200)
    let refused: Awaited<ReturnType<typeof poll>> | undefined
    let polls = 0
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await poll(cycling, `?project=heavy,made-up-${i}`)
      polls++
      if (res.status !== 200) refused = res
    }
    expect(refused?.status).toBe(429)
    expect(refused?.body).toEqual({ id: expect.any(String), name: 'TooManyRequestsError', message: expect.stringContaining('narrowed by project, namePrefix or tag') })
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(polls).toBeLessThanOrEqual(Math.ceil(NARROWED_BYTES_PER_MINUTE / size) + 1)
    // The filter it already holds still answers; another token is not held to this one's charge.
    expect((await poll(cycling, '?project=heavy')).status).toBe(200)
    expect((await poll(await token('other', ['*']), '?project=heavy,made-up-0')).status).toBe(200)
  })
})

describe('SDK payloads narrowed by tags', () => {
  it('are read from the database, charged DATABASE_BUILD_WEIGHT times their bytes: a token making up tag sets gets 429 sooner', async () => {
    const tagging = await token('tagging', ['*'])
    builds.length = 0
    let refused: Awaited<ReturnType<typeof poll>> | undefined
    let polls = 0
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await poll(tagging, `?tag=simple:heavy&tag=simple:made-up-${i}`)
      polls++
      if (res.status === 200) expect(res.body.features.map((f: any) => f.name)).toEqual(['heavy-flag'])
      else refused = res
    }
    expect(refused?.status).toBe(429)
    expect(polls).toBeLessThanOrEqual(Math.ceil(NARROWED_BYTES_PER_MINUTE / (size * DATABASE_BUILD_WEIGHT)) + 1)
    // Each tag set that was answered was one read; the refused one read nothing.
    expect(builds).toHaveLength(polls - 1)
  })
})

describe('writes that change no flag', () => {
  it('do not make SDK payloads be read again: a Viewer’s personal access token, a new user, an SDK registration, a token; a flag’s change does', async () => {
    const light = await token('light-revision', ['light'])
    const polled = async () => {
      const res = await poll(light, '')
      expect(res.status).toBe(200)
      return res
    }
    const first = await polled()
    builds.length = 0
    // Before: each of these moved the revision, and the next poll of every scope read and prepared its payload again.
    const viewer = await createSignedInUser(t, 'viewing', 'Viewer')
    await createPat(viewer)
    expect((await t.call('POST', '/api/client/register', { token: light, body: { appName: 'made-up-app', instanceId: 'i', strategies: [], started: new Date().toISOString(), interval: 1000 } })).status).toBe(202)
    await token('another', ['heavy'])
    const again = await polled()
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'))
    expect(builds).toEqual([])
    // A flag's change (in another project too: the payload may not show it, but it is read again) still does.
    expect((await t.call('POST', '/api/admin/projects/light/features/light-flag/environments/development/off')).status).toBe(200)
    const changed = await polled()
    expect(builds).toHaveLength(1)
    expect(changed.body.features[0].enabled).toBe(false)
  })
})
