// SDK polls at the edge: the worker bundle in workerd answers from the isolate's payload without waiting on the
// database (stale-while-revalidate), and isolates of one location share payloads through the Cache API
// (Miniflare's, shared by the workers of one instance: each worker here is an isolate of the same deployment).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startLocalPostgres, type LocalPostgres } from '../../dev/local-postgres.js'
import { createToken as createTokenInDb } from '../../src/api-tokens/store.js'
import { SYSTEM_ACTOR } from '../../src/core/principal.js'
import { addStrategy, createFlag, createProject, createSegment, createToken, enableFlag, flagOnWithClientToken, ok, type Caller } from '../helpers/factories.js'
import { answerOf } from '../helpers/app.js'
import { migratedTemplate } from '../helpers/data-dir.js'
import { builtWorker, readWranglerConfig, type WranglerConfig, workerModuleOptions } from './build.js'

const ISOLATES = ['a', 'b', 'c'] as const
type Isolate = (typeof ISOLATES)[number]
const SPEC = { 'unleash-client-spec': '5.2.0' }
/** The worker's revisionTtlMs: the longest a warm isolate goes without checking the revision. */
const REVISION_TTL_MS = 1_000

let tempDir: string
let config: WranglerConfig
let scriptPath: string
/** A migrated database, which each test's database starts from. */
let template: Blob

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'flagpost-workerd-sdk-'))
  config = await readWranglerConfig()
  ;[scriptPath, template] = await Promise.all([builtWorker(), migratedTemplate()])
  d = await deploy()
})
afterAll(async () => {
  await d?.close()
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

/** Deployments a test made for itself (one whose database it stops). */
const opened: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const deployment of opened.splice(0)) await deployment.close()
})

interface Answer {
  status: number
  headers: Headers
  body: any
  text: string
}

/**
 * A deployment: a fresh database and three isolates (a, b, c) of the worker, sharing the Cache API as the
 * isolates of one location do. `as(isolate)` calls through one isolate with the admin token, as a factories
 * Caller. The tests share one (each makes its own projects and tokens, so no isolate holds their payloads
 * before they poll); a test that stops the database makes its own.
 */
async function deploy() {
  const postgres: LocalPostgres = await startLocalPostgres({ loadDataDir: template })
  const worker = {
    ...workerModuleOptions(scriptPath, config),
    bindings: { DATABASE_URL: postgres.databaseUrl, NEON_WS_PROXY: postgres.wsProxy, NEON_FETCH_ENDPOINT: postgres.fetchEndpoint },
    durableObjects: config.durableObjects,
  }
  // One deployment has one namespace of each Durable Object: the isolates other than `a` use a's.
  const shared = (name: string) => Object.fromEntries(Object.entries(config.durableObjects).map(([binding, object]) => [binding, name === 'a' ? object : { ...object, scriptName: 'a' }]))
  const mf = new Miniflare({ workers: ISOLATES.map((name) => ({ ...worker, name, durableObjects: shared(name) })) })
  const close = async () => {
    await mf.dispose()
    await postgres.close()
  }
  await mf.ready
  const adminToken = (
    await createTokenInDb(postgres.database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'workerd-admin', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })
  ).secret

  async function call(isolate: Isolate, method: string, path: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
    const headers: Record<string, string> = { authorization: options.token ?? adminToken, ...options.headers }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const worker = await mf.getWorker(isolate)
    const response = await worker.fetch(`http://flagpost.test${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) })
    return answerOf(response as unknown as Response)
  }

  return {
    postgres,
    as: (isolate: Isolate): Caller => ({ call: (method, path, options) => call(isolate, method, path, options) }),
    /** `GET /api/client/features` as an SDK polls it. */
    poll: (isolate: Isolate, token: string, options: { etag?: string; query?: string } = {}) =>
      call(isolate, 'GET', `/api/client/features${options.query ?? ''}`, { token, headers: { ...SPEC, ...(options.etag ? { 'if-none-match': options.etag } : {}) } }),
    /** A GET of an SDK route with the token and the client spec header. */
    sdkGet: (isolate: Isolate, path: string, token: string, headers: Record<string, string> = {}) => call(isolate, 'GET', path, { token, headers: { ...SPEC, ...headers } }),
    /** `GET /api/client/streaming`, the response unread. */
    stream: async (isolate: Isolate, token: string, headers: Record<string, string> = {}) =>
      (await mf.getWorker(isolate)).fetch('http://flagpost.test/api/client/streaming', { headers: { authorization: token, ...SPEC, ...headers } }) as unknown as Promise<Response>,
    /** `GET /api/frontend` for a context. */
    frontend: (isolate: Isolate, token: string, context: Record<string, string> = {}) => call(isolate, 'GET', `/api/frontend?${new URLSearchParams(context)}`, { token }),
    /**
     * Makes every payload load fail (the flags table is gone) while tokens and the revision can still be read.
     * It first lets a revision ttl pass: an isolate that read the revision before the last change (warm from
     * another test) would look for the payload of that older revision, which nobody stored, and load it.
     */
    async withoutFlagsTable<T>(run: () => Promise<T>): Promise<T> {
      await sleep(REVISION_TTL_MS)
      await postgres.database.client.exec('alter table features rename to features_hidden')
      try {
        return await run()
      } finally {
        await postgres.database.client.exec('alter table features_hidden rename to features')
      }
    },
    close,
  }
}

type Deployment = Awaited<ReturnType<typeof deploy>>
let d: Deployment

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Repeats `attempt` until `done` holds of its answer, for at most `timeoutMs`; returns the last answer. */
async function pollUntil<T>(attempt: () => Promise<T>, done: (answer: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let answer = await attempt()
  while (!done(answer) && Date.now() < deadline) {
    await sleep(50)
    answer = await attempt()
  }
  return answer
}

const flagOf = (answer: Answer, name: string) => (answer.body?.features as { name: string; enabled: boolean }[] | undefined)?.find((f) => f.name === name)

/** A project with one flag on (default strategy) in development, and a client token for that project. */
async function projectWithFlag(d: Deployment, isolate: Isolate = 'a') {
  const { project, flag, token } = await flagOnWithClientToken(d.as(isolate))
  return { project, flag, client: token }
}

describe('SDK polls on a warm isolate', () => {
  it('are answered (200, and 304 for the ETag) from the payload the isolate holds while the database is down', async () => {
    const d = await deploy()
    opened.push(d)
    const { flag, client } = await projectWithFlag(d)
    const frontendToken = (await createToken(d.as('a'), { type: 'frontend', environment: 'development', projects: ['*'] })).secret as string
    const first = await d.poll('a', client)
    expect(first.status, first.text).toBe(200)
    const etag = first.headers.get('etag')!
    const toggles = await d.frontend('a', frontendToken, { userId: '1' })
    expect(toggles.status, toggles.text).toBe(200)

    await d.postgres.close()
    // Past the revision's ttl: a poll that waited for the revision check would fail now.
    await sleep(REVISION_TTL_MS + 200)
    const served = await d.poll('a', client)
    expect(served.status, served.text).toBe(200)
    expect(served.text).toBe(first.text)
    const unchanged = await d.poll('a', client, { etag })
    expect(unchanged.status).toBe(304)
    expect(unchanged.headers.get('etag')).toBe(etag)
    const frontend = await d.frontend('a', frontendToken, { userId: '1' })
    expect(frontend.status, frontend.text).toBe(200)
    expect(frontend.body).toEqual(toggles.body)
    expect(flagOf(served, flag)?.enabled).toBe(true)
    // The database really is gone: a poll the isolate holds nothing for fails.
    expect((await d.poll('a', client, { query: '?namePrefix=x' })).status).toBe(500)
  })

  it('see a change made through another isolate within the revision check period, and one made through their own at once', async () => {
    const { project, flag, client } = await projectWithFlag(d)
    expect(flagOf(await d.poll('a', client), flag)?.enabled).toBe(true)
    expect(flagOf(await d.poll('b', client), flag)?.enabled).toBe(true)

    await ok(d.as('b'), 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    // The isolate that made the change serves it on its very next poll.
    expect(flagOf(await d.poll('b', client), flag)?.enabled).toBe(false)
    // The other one finds it with a check after one of its answers; a later poll gets the new payload.
    const seen = await pollUntil(
      () => d.poll('a', client),
      (answer) => flagOf(answer, flag)?.enabled === false,
      20 * REVISION_TTL_MS,
    )
    expect(seen.status, seen.text).toBe(200)
    expect(flagOf(seen, flag)?.enabled).toBe(false)
    // And its ETag moved with it: the old one no longer answers 304.
    expect(seen.headers.get('etag')).toBe((await d.poll('b', client)).headers.get('etag'))
  })
})

describe('the unchanged poll answered before the router (src/client-api/fast-poll.ts)', () => {
  it('has the routed 304’s status and headers; a deleted token and a change through the isolate are seen at once', async () => {
    const { project, flag, client } = await projectWithFlag(d)
    const first = await d.poll('a', client)
    expect(first.status, first.text).toBe(200)
    const etag = first.headers.get('etag')!
    const headers = { ...SPEC, 'if-none-match': etag, 'x-request-id': 'edge-poll-1' }
    // Within the revision's ttl of the first poll: answered before the router.
    const early = await d.sdkGet('a', '/api/client/features', client, headers)
    // Past it: routed (served from the held payload, the revision checked after the response).
    await sleep(REVISION_TTL_MS + 200)
    const late = await d.sdkGet('a', '/api/client/features', client, headers)
    expect([early.status, early.text, late.status, late.text]).toEqual([304, '', 304, ''])
    expect([...early.headers]).toEqual([...late.headers])
    expect([...early.headers]).toEqual([['etag', etag], ['x-request-id', 'edge-poll-1']])
    // A change through this isolate: the old ETag gets the new payload on the next poll.
    await ok(d.as('a'), 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    const changed = await d.poll('a', client, { etag })
    expect([changed.status, flagOf(changed, flag)?.enabled]).toEqual([200, false])
    const newEtag = changed.headers.get('etag')!
    expect((await d.poll('a', client, { etag: newEtag })).status).toBe(304)
    // A token deleted through this isolate is refused on its next poll.
    await ok(d.as('a'), 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(client)}`)
    expect((await d.poll('a', client, { etag: newEtag })).status).toBe(401)
  })
})

describe('SDK payloads shared between the isolates of a location (Cache API)', () => {
  it('a cold isolate answers its first poll from the payload another isolate loaded, without loading it, with the same ETag', async () => {
    const { flag, client } = await projectWithFlag(d)
    const { client: unpolled } = await projectWithFlag(d)
    const loaded = await d.poll('a', client)
    expect(loaded.status, loaded.text).toBe(200)
    const etag = loaded.headers.get('etag')!

    await d.withoutFlagsTable(async () => {
      const cold = await d.poll('b', client)
      expect(cold.status, cold.text).toBe(200)
      expect(cold.text).toBe(loaded.text)
      expect(cold.headers.get('etag')).toBe(etag)
      expect(flagOf(cold, flag)?.enabled).toBe(true)
      const coldUnchanged = await d.poll('c', client, { etag })
      expect(coldUnchanged.status).toBe(304)
      // A namePrefix narrows the scope's shared payload in memory: nothing to load.
      const prefixed = await d.poll('c', client, { query: `?namePrefix=${flag}` })
      expect(prefixed.status, prefixed.text).toBe(200)
      expect(flagOf(prefixed, flag)?.enabled).toBe(true)
      // A payload nobody stored must be loaded, and cannot be now: the answers above did not load theirs.
      expect((await d.poll('c', unpolled)).status).toBe(500)
    })
  })

  it('the frontend API gives the same answers from a payload rebuilt from the shared body as from the one the isolate built', async () => {
    const admin = d.as('a')
    const project = await createProject(admin)
    const segment = await createSegment(admin, { constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro'] }] })
    const rollout = (await createFlag(admin, {}, project)).name as string
    await addStrategy(admin, rollout, 'development', { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'userId', groupId: rollout } }, project)
    await enableFlag(admin, rollout, 'development', project)
    const targeted = (await createFlag(admin, { impressionData: true }, project)).name as string
    await addStrategy(
      admin,
      targeted,
      'development',
      {
        name: 'default',
        constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE'] }],
        segments: [segment.id],
        variants: [
          { name: 'red', weight: 500, weightType: 'variable', stickiness: 'userId', payload: { type: 'string', value: 'Red' } },
          { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'userId' },
        ],
      },
      project,
    )
    await enableFlag(admin, targeted, 'development', project)
    const child = (await createFlag(admin, {}, project)).name as string
    await ok(admin, 'POST', `/api/admin/projects/${project}/features/${child}/dependencies`, { feature: targeted })
    await enableFlag(admin, child, 'development', project)
    const frontendToken = (await createToken(admin, { type: 'frontend', environment: 'development', projects: [project] })).secret as string

    const contexts = Array.from({ length: 24 }, (_, i) => ({ userId: String(i), country: ['NO', 'SE', 'DK'][i % 3]!, plan: i % 2 ? 'pro' : 'free', sessionId: 's' }))
    const built: unknown[] = []
    for (const context of contexts) built.push((await d.frontend('a', frontendToken, context)).body)
    // Not the same answer for everyone: the contexts exercise the rollout, constraints, segment, variants and dependency.
    expect(new Set(built.map((b) => JSON.stringify(b))).size).toBeGreaterThan(2)

    await d.withoutFlagsTable(async () => {
      for (const [i, context] of contexts.entries()) {
        const rebuilt = await d.frontend('b', frontendToken, context)
        expect(rebuilt.status, rebuilt.text).toBe(200)
        expect(rebuilt.body, JSON.stringify(context)).toEqual(built[i])
      }
    })
  })

  it('never answers a token with the payload of projects it may not see', async () => {
    const first = await projectWithFlag(d)
    const second = await projectWithFlag(d)
    const frontendFirst = (await createToken(d.as('a'), { type: 'frontend', environment: 'development', projects: [first.project] })).secret as string
    // Every payload below is loaded (and stored) at the revision of this last change.
    const names = (answer: Answer) => (answer.body.features as { name: string }[]).map((f) => f.name)
    expect(names(await d.poll('a', first.client))).toEqual([first.flag])
    expect(names(await d.poll('a', second.client))).toEqual([second.flag])
    // Asking for the other project narrows to nothing (a scope of its own), never to the other project's payload.
    expect(names(await d.poll('a', first.client, { query: `?project=${second.project}` }))).toEqual([])
    expect((await d.frontend('a', frontendFirst)).body.toggles.map((t: { name: string }) => t.name)).toEqual([first.flag])

    await d.withoutFlagsTable(async () => {
      // Cold isolates, each payload from the shared cache: every token gets its own scope's.
      expect(names(await d.poll('b', second.client))).toEqual([second.flag])
      expect(names(await d.poll('b', first.client))).toEqual([first.flag])
      expect(names(await d.poll('c', first.client, { query: `?project=${second.project}` }))).toEqual([])
      expect((await d.frontend('c', frontendFirst)).body.toggles.map((t: { name: string }) => t.name)).toEqual([first.flag])
    })
  })
})

describe('GET /api/client/delta and /api/client/streaming at the edge', () => {
  const delta = (isolate: Isolate, token: string, etag?: string) => d.sdkGet(isolate, '/api/client/delta', token, etag ? { 'if-none-match': etag } : {})

  it('hydrates, answers 304 for its ETag, and sends what changed since through the isolate that holds the earlier payload', async () => {
    const { project, flag, client } = await projectWithFlag(d)
    const first = await delta('a', client)
    expect(first.status, first.text).toBe(200)
    expect(first.body.events.map((e: { type: string }) => e.type)).toEqual(['hydration'])
    expect(first.headers.get('etag')).toBe((await d.poll('a', client)).headers.get('etag'))
    expect((await delta('a', client, first.headers.get('etag')!)).status).toBe(304)

    await ok(d.as('a'), 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    const changed = await delta('a', client, first.headers.get('etag')!)
    expect(changed.status, changed.text).toBe(200)
    expect(changed.body.events).toEqual([{ eventId: expect.any(Number), type: 'feature-updated', feature: expect.objectContaining({ name: flag, enabled: false }) }])
    // An isolate that never held the client's payload hydrates it instead.
    const elsewhere = await pollUntil(
      () => delta('c', client, first.headers.get('etag')!),
      (answer) => answer.headers.get('etag') === changed.headers.get('etag'),
      20 * REVISION_TTL_MS,
    )
    expect(elsewhere.body.events[0]).toMatchObject({ type: 'hydration', features: [expect.objectContaining({ name: flag, enabled: false })] })
  })

  it('streams from the Durable Object of the scope: hydration, a change made through any isolate, and a resume from Last-Event-ID', async () => {
    const { project, flag, client } = await projectWithFlag(d)
    const first = await events(await d.stream('a', client))
    const connected = await first.next()
    expect(connected.event).toBe('unleash-connected')
    expect(connected.id).toBe((await d.poll('a', client)).headers.get('etag')!.replaceAll('"', ''))
    expect(connected.data.events[0]).toMatchObject({ type: 'hydration', features: [expect.objectContaining({ name: flag, enabled: true })] })

    await ok(d.as('b'), 'POST', `/api/admin/projects/${project}/features/${flag}/environments/development/off`)
    const updated = await first.next(10_000)
    expect(updated.event).toBe('unleash-updated')
    expect(updated.data.events).toEqual([{ eventId: expect.any(Number), type: 'feature-updated', feature: expect.objectContaining({ name: flag, enabled: false }) }])
    await first.close()

    // Through another isolate, to the same object, which still holds the payload the client had.
    const resumed = await events(await d.stream('c', client, { 'last-event-id': connected.id! }))
    expect((await resumed.next()).data).toEqual(updated.data)
    await resumed.close()
  })
})

interface Frame {
  event?: string
  id?: string
  data?: any
}

/** The events of a stream, one at a time (comments skipped). */
async function events(response: Response) {
  expect(response.status).toBe(200)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  return {
    async next(timeoutMs = 5_000): Promise<Frame> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const end = buffer.indexOf('\n\n')
        if (end >= 0) {
          const frame: Frame = {}
          for (const line of buffer.slice(0, end).split('\n')) {
            if (line.startsWith('event: ')) frame.event = line.slice(7)
            else if (line.startsWith('id: ')) frame.id = line.slice(4)
            else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6))
          }
          buffer = buffer.slice(end + 2)
          if (frame.event) return frame
          continue
        }
        const left = deadline - Date.now()
        const chunk = left > 0 ? await Promise.race([reader.read(), sleep(left).then(() => 'late' as const)]) : 'late'
        if (chunk === 'late') throw new Error('no event came')
        if (chunk.done) throw new Error('the stream ended')
        buffer += decoder.decode(chunk.value, { stream: true })
      }
    },
    close: () => reader.cancel(),
  }
}
