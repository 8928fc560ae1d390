// SDK polls with stale-while-revalidate, as the worker runs them, on Node with PGlite: an "edge" app answers
// from what it holds and checks after the response (its background work is collected, so a test can let it
// finish), while another app on the same database stands for the other isolates that take the writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { entryFromStored, loadPayload } from '../src/client-api/load.js'
import { scopeKey, type ClientScope } from '../src/client-api/payload.js'
import { readRevision } from '../src/client-api/revision.js'
import { createSdkState, type SharedPayloads, type StoredPayload } from '../src/client-api/state.js'
import { evaluate } from '../src/evaluation/index.js'
import { rulesetOf } from '../src/frontend-api/evaluate.js'
import type { RunInBackground } from '../src/http/background.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createEnvironment, createFlag, createProject, createSegment, createToken, enableFlag, flagOnWithClientToken, ok, type Caller } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

/** Payloads shared between apps, kept in a Map (the Workers Cache API in production, tested in test/workerd). */
function mapStore(): SharedPayloads & { size: () => number } {
  const entries = new Map<string, StoredPayload>()
  const key = (origin: string, scope: string, revision: string) => JSON.stringify([origin, scope, revision])
  return {
    get: async (origin, scope, revision) => entries.get(key(origin, scope, revision.key)),
    put: async (origin, scope, payload) => void entries.set(key(origin, scope, payload.revision.key), { revision: payload.revision, etag: payload.etag, body: payload.body }),
    size: () => entries.size,
  }
}

/**
 * An app as the worker configures it (stale-while-revalidate, no shared in-flight work), on the test's
 * database. Every revision and token is due for a check on every request (ttl 0), so each poll answers
 * from what the app holds and leaves the check to `settled()`.
 */
async function edgeApp(shared?: SharedPayloads) {
  const pending: Promise<unknown>[] = []
  const background: RunInBackground = (c, task) => void pending.push(task(c.var.db))
  const app = createApp({ db: () => t.db, background, sdk: { revisionTtlMs: 0, tokenTtlMs: 0, staleWhileRevalidateMs: 60_000, shareInFlight: false, sharedPayloads: shared } })
  const call = async (method: string, path: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { authorization: options.token ?? t.adminToken, ...options.headers }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const response = await app.request(path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) })
    const text = await response.text()
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text }
  }
  return {
    admin: { call: (method, path, options) => call(method, path, options) } satisfies Caller,
    poll: (token: string, headers: Record<string, string> = {}) => call('GET', '/api/client/features', { token, headers: { 'unleash-client-spec': '5.2.0', ...headers } }),
    /** Lets the work left after the responses finish (the checks and reloads). */
    async settled() {
      while (pending.length > 0) await Promise.all(pending.splice(0))
    },
  }
}

const enabledOf = (answer: { body: { features: { name: string; enabled: boolean }[] } }, flag: string) => answer.body.features.find((f) => f.name === flag)?.enabled

const flagOnWithToken = () => flagOnWithClientToken(t)

describe('stale-while-revalidate (the worker’s SDK settings)', () => {
  it('answers from the payload it holds, checks after the response, and serves a change made elsewhere on the poll after the check', async () => {
    const edge = await edgeApp()
    const { project, flag, token } = await flagOnWithToken()
    expect(enabledOf(await edge.poll(token), flag)).toBe(true)
    await edge.settled()

    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    const stale = await edge.poll(token)
    expect(stale.status).toBe(200)
    expect(enabledOf(stale, flag)).toBe(true)
    await edge.settled()
    const fresh = await edge.poll(token, { 'if-none-match': stale.headers.get('etag')! })
    expect(fresh.status).toBe(200)
    expect(enabledOf(fresh, flag)).toBe(false)
  })

  it('serves a change made through itself on the very next poll, for every scope it holds', async () => {
    const edge = await edgeApp()
    const { project, flag, token } = await flagOnWithToken()
    const wide = (await createToken(t, { type: 'client', environment: 'development', projects: ['*'] })).secret as string
    expect(enabledOf(await edge.poll(token), flag)).toBe(true)
    expect(enabledOf(await edge.poll(wide), flag)).toBe(true)
    await edge.settled()

    await ok(edge.admin, 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    expect(enabledOf(await edge.poll(token), flag)).toBe(false)
    expect(enabledOf(await edge.poll(wide), flag)).toBe(false)
  })

  it('accepts a remembered token while it checks it again, and refuses it once the check found it deleted', async () => {
    const edge = await edgeApp()
    const { token } = await flagOnWithToken()
    expect((await edge.poll(token)).status).toBe(200)
    await edge.settled()

    await ok(t, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(token)}`)
    expect((await edge.poll(token)).status).toBe(200)
    await edge.settled()
    expect((await edge.poll(token)).status).toBe(401)
  })

  it('moves admin tokens to a new default environment after a check', async () => {
    const edge = await edgeApp()
    expect((await edge.poll(t.adminToken)).body.query.environment).toBe('development')
    await edge.settled()

    const first = await createEnvironment(t, { sortOrder: -1 })
    expect((await edge.poll(t.adminToken)).body.query.environment).toBe('development')
    await edge.settled()
    expect((await edge.poll(t.adminToken)).body.query.environment).toBe(first.name)
  })

  it('a fresh app takes the payload another stored, and answers from it with the same ETag', async () => {
    const shared = mapStore()
    const { token } = await flagOnWithToken()
    const loaded = await (await edgeApp(shared)).poll(token)
    expect(loaded.status).toBe(200)
    expect(shared.size()).toBe(1)

    await t.query('alter table features rename to features_hidden')
    try {
      const cold = await (await edgeApp(shared)).poll(token, { 'if-none-match': loaded.headers.get('etag')! })
      expect(cold.status).toBe(304)
      const coldBody = await (await edgeApp(shared)).poll(token)
      expect(coldBody.text).toBe(loaded.text)
    } finally {
      await t.query('alter table features_hidden rename to features')
    }
  })
})

describe('a payload rebuilt from its stored body', () => {
  it('has the features and segments of the build, and its prepared ruleset answers every context the same', async () => {
    const project = await createProject(t)
    const segment = await createSegment(t, { constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }] })
    const flags: string[] = []
    for (let i = 0; i < 3; i++) flags.push((await createFlag(t, { impressionData: i === 1 }, project)).name as string)
    await addStrategy(t, flags[0]!, 'development', { name: 'flexibleRollout', parameters: { rollout: '40', stickiness: 'userId', groupId: flags[0] } }, project)
    await addStrategy(
      t,
      flags[1]!,
      'development',
      {
        name: 'default',
        constraints: [
          { contextName: 'country', operator: 'IN', values: ['NO', 'SE'] },
          { contextName: 'appVersion', operator: 'SEMVER_GT', value: '1.2.0' },
        ],
        segments: [segment.id],
        variants: [
          { name: 'red', weight: 700, weightType: 'variable', stickiness: 'userId', payload: { type: 'json', value: '{"a":1}' } },
          { name: 'blue', weight: 300, weightType: 'variable', stickiness: 'userId' },
        ],
      },
      project,
    )
    await ok(t, 'POST', `/api/admin/projects/${project}/features/${flags[2]}/dependencies`, { feature: flags[1], variants: ['red'] })
    for (const flag of flags) await enableFlag(t, flag, 'development', project)

    for (const inlineSegmentConstraints of [false, true]) {
      const scope: ClientScope = { environment: 'development', projects: [project], inlineSegmentConstraints }
      const shared = mapStore()
      const sdk = createSdkState({ clock: () => new Date(), sharedPayloads: shared })
      const built = await loadPayload(sdk, t.db, scope, scopeKey(scope), await readRevision(t.db), 'http://flagpost.test')
      expect(shared.size()).toBe(1)
      const stored = await shared.get('http://flagpost.test', scopeKey(scope), built.revision)
      const rebuilt = entryFromStored(stored!, 0)!
      expect(rebuilt.features).toEqual(built.features)
      expect(rebuilt.segments).toEqual(built.segments)
      expect(rebuilt.etag).toBe(built.etag)

      const fromBuild = rulesetOf(built)
      const fromBody = rulesetOf(rebuilt)
      expect(fromBody.flags).toEqual(fromBuild.flags)
      let enabled = 0
      for (let i = 0; i < 60; i++) {
        const context = { userId: String(i), sessionId: 's', environment: 'development', appVersion: i % 2 ? '1.3.0' : '1.0.0', properties: { plan: i % 3 ? 'pro' : 'free', country: ['NO', 'SE', 'DK'][i % 3]! } }
        for (const { name } of fromBuild.flags) {
          const expected = evaluate(fromBuild.ruleset.flags.get(name), context, { now: new Date() })
          expect(evaluate(fromBody.ruleset.flags.get(name), context, { now: new Date() }), `${name} for ${JSON.stringify(context)}`).toEqual(expected)
          if (expected.enabled) enabled++
        }
      }
      // Some answers are on and some off: the contexts reach the rollout, constraints, segment, variants and dependency.
      expect(enabled).toBeGreaterThan(0)
      expect(enabled).toBeLessThan(60 * flags.length)
    }
  })
})
