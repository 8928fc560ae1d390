// GET /api/client/delta and GET /api/client/streaming at the HTTP level: what each answer holds, in which order,
// with which ETag or event id, and what a client holding an earlier payload is sent.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createApp } from '../src/app.js'
import { streamHub } from '../src/client-api/streaming.js'
import type { StreamHub } from '../src/client-api/state.js'
import { answerOf, createTestApp, type TestApp } from './helpers/app.js'
import { addStrategy, createFlag, createSegment, createToken, enableFlag, flagOnWithClientToken, ok } from './helpers/factories.js'

const SPEC = { 'unleash-client-spec': '5.2.0' }
let t: TestApp
let hub: StreamHub & { stats(): { connections: number; scopes: number } }

beforeAll(async () => {
  t = await createTestApp({
    sdk: { revisionTtlMs: 0 },
    streams: (sdk) => (hub = streamHub({ maxPerToken: 3, keepAliveMs: 200, pollMs: 100 })(sdk) as typeof hub),
  })
})
afterAll(async () => {
  await t?.close()
})

const delta = (token: string, etag?: string, query = '') => t.call('GET', `/api/client/delta${query}`, { token, headers: { ...SPEC, ...(etag ? { 'if-none-match': etag } : {}) } })

/** A default strategy for a flag in development, written by hand (as a late transaction would have). */
async function addStrategyRow(flag: string) {
  await t.query(`insert into feature_strategies (id, feature_name, environment, strategy_name, parameters, constraints, variants, sort_order) values (gen_random_uuid(), $1, 'development', 'default', '{}', '[]', '[]', 0)`, [flag])
}

/** A fresh project with a flag on in development, a second one off, and a client token of the project. */
async function ownProject() {
  const { project, flag, token } = await flagOnWithClientToken(t)
  const other = (await createFlag(t, {}, project)).name as string
  return { project, flag, other, token }
}

describe('GET /api/client/delta', () => {
  it('hydrates first, with the payload of /api/client/features and its ETag, then answers 304 until something changes', async () => {
    const { project, flag, other, token } = await ownProject()
    const first = await delta(token)
    expect(first.status, first.text).toBe(200)
    const features = await t.call('GET', '/api/client/features', { token, headers: SPEC })
    expect(first.headers.get('etag')).toBe(features.headers.get('etag'))
    expect(first.body.events).toHaveLength(1)
    const [hydration] = first.body.events
    expect(hydration).toMatchObject({ type: 'hydration', eventId: features.body.meta.revisionId, segments: [] })
    expect(hydration.features).toEqual(features.body.features)
    expect(hydration.features.map((f: { name: string; project: string }) => [f.name, f.project])).toEqual(
      [
        [flag, project],
        [other, project],
      ].sort(),
    )
    const again = await delta(token, first.headers.get('etag')!)
    expect(again.status).toBe(304)
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'))
  })

  it('sends only what changed since the ETag: the changed flag, then its removal when archived', async () => {
    const { project, flag, other, token } = await ownProject()
    const first = await delta(token)
    await enableFlag(t, other, 'development', project)
    const changed = await delta(token, first.headers.get('etag')!)
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(first.headers.get('etag'))
    expect(changed.body.events).toEqual([{ eventId: expect.any(Number), type: 'feature-updated', feature: expect.objectContaining({ name: other, enabled: true, project }) }])
    expect(changed.body.events[0].eventId).toBeGreaterThan(first.body.events[0].eventId)

    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${flag}`)
    const archived = await delta(token, changed.headers.get('etag')!)
    expect(archived.body.events).toEqual([{ eventId: expect.any(Number), type: 'feature-removed', featureName: flag, project }])
    // A client two payloads behind gets both changes at once.
    const behind = await delta(token, first.headers.get('etag')!)
    expect(behind.body.events.map((e: { type: string }) => e.type)).toEqual(['feature-updated', 'feature-removed'])
    expect(behind.headers.get('etag')).toBe(archived.headers.get('etag'))
  })

  it('sends a segment before the flag that starts using it, and removes it after the flag that stops', async () => {
    const { project, flag, token } = await ownProject()
    const segment = await createSegment(t, { constraints: [{ contextName: 'userId', operator: 'IN', values: ['1'] }] })
    const first = await delta(token)
    const strategy = await addStrategy(t, flag, 'development', { name: 'default', segments: [segment.id] }, project)
    const added = await delta(token, first.headers.get('etag')!)
    expect(added.body.events.map((e: { type: string }) => e.type)).toEqual(['segment-updated', 'feature-updated'])
    expect(added.body.events[0].segment).toEqual({ id: segment.id, name: segment.name, constraints: segment.constraints })
    expect(added.body.events[1].feature.strategies.at(-1).segments).toEqual([segment.id])

    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${flag}/environments/development/strategies/${strategy.id}`)
    const removed = await delta(token, added.headers.get('etag')!)
    expect(removed.body.events).toEqual([
      { eventId: expect.any(Number), type: 'feature-updated', feature: expect.objectContaining({ name: flag }) },
      { eventId: expect.any(Number), type: 'segment-removed', segmentId: segment.id },
    ])
  })

  it('hydrates a client whose ETag it does not know, and keeps to the token’s projects and the filters', async () => {
    const { project, flag, token } = await ownProject()
    const elsewhere = await flagOnWithClientToken(t)
    const unknown = await delta(token, '"0123456789abcdef0123456789abcdef"')
    expect(unknown.body.events.map((e: { type: string }) => e.type)).toEqual(['hydration'])
    expect(unknown.body.events[0].features.every((f: { project: string }) => f.project === project)).toBe(true)
    // A change in another project is no change for this token.
    await ok(t, 'DELETE', `/api/admin/projects/${elsewhere.project}/features/${elsewhere.flag}`)
    expect((await delta(token, unknown.headers.get('etag')!)).status).toBe(304)
    const prefixed = await delta(token, undefined, `?namePrefix=${flag}`)
    expect(prefixed.body.events[0].features.map((f: { name: string }) => f.name)).toEqual([flag])
  })

  it('inlines segment constraints for SDKs that do not know segments, as /api/client/features does', async () => {
    const { project, flag, token } = await ownProject()
    const segment = await createSegment(t, { constraints: [{ contextName: 'userId', operator: 'IN', values: ['9'] }] })
    await addStrategy(t, flag, 'development', { name: 'default', segments: [segment.id] }, project)
    const old = await t.call('GET', '/api/client/delta', { token })
    const [hydration] = old.body.events
    expect(hydration.segments).toEqual([])
    expect(hydration.features[0].strategies.at(-1)).toMatchObject({ constraints: segment.constraints })
    expect(hydration.features[0].strategies.at(-1).segments).toBeUndefined()
  })

  it('does not skip a change whose event committed after a newer one (an ETag names content, not an event id)', async () => {
    const { project, other, token } = await ownProject()
    // Two ids drawn as two concurrent transactions would draw them; the later one commits first (written by hand:
    // a test cannot time real transactions).
    const [early, late] = await t.query<{ id: number }>(`select nextval(pg_get_serial_sequence('events', 'id'))::int as id from generate_series(1, 2)`)
    await t.query(`insert into events (id, type, created_by) values ($1, 'feature-updated', 'late')`, [late!.id])
    const first = await delta(token)
    expect(first.body.events[0].eventId).toBe(late!.id)
    // The earlier transaction commits now: its change (the flag switched on) and its event, under the lower id.
    await t.query(`update feature_environments set enabled = true where feature_name = $1 and environment = 'development'`, [other])
    await addStrategyRow(other)
    await t.query(`insert into events (id, type, created_by, project, feature_name) values ($1, 'feature-environment-enabled', 'late', $2, $3)`, [early!.id, project, other])
    const changed = await delta(token, first.headers.get('etag')!)
    expect(changed.status).toBe(200)
    expect(changed.body.events).toEqual([{ eventId: late!.id, type: 'feature-updated', feature: expect.objectContaining({ name: other, enabled: true }) }])
  })

  it('refuses frontend tokens and answers 401 without a token, as /api/client/features', async () => {
    const frontend = (await createToken(t, { type: 'frontend', environment: 'development', projects: ['default'] })).secret
    expect((await delta(frontend)).status).toBe(403)
    expect((await t.call('GET', '/api/client/delta', { token: null })).status).toBe(401)
  })
})

/** An open event stream, read frame by frame. */
async function connect(token: string, headers: Record<string, string> = {}, app: { request: TestApp['app']['request'] } = t.app) {
  const controller = new AbortController()
  const response = await app.request('/api/client/streaming', { headers: { authorization: token, ...SPEC, ...headers }, signal: controller.signal })
  if (response.status !== 200) return { status: response.status, body: (await answerOf(response)).body, frames: [] as Frame[], next: async () => undefined as never, close: async () => {} }
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  const frames: Frame[] = []
  /** The next frame that is an event (comments are kept in `frames` too). */
  async function next(timeoutMs = 3_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const end = buffer.indexOf('\n\n')
      if (end >= 0) {
        const frame = parseFrame(buffer.slice(0, end))
        buffer = buffer.slice(end + 2)
        frames.push(frame)
        if (frame.event) return frame
        continue
      }
      const left = deadline - Date.now()
      if (left <= 0) throw new Error('no event came')
      const chunk = await Promise.race([reader.read(), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), left))])
      if (chunk === 'late') throw new Error('no event came')
      if (chunk.done) throw new Error('the stream ended')
      buffer += decoder.decode(chunk.value, { stream: true })
    }
  }
  return {
    status: 200,
    headers: response.headers,
    frames,
    next,
    async close() {
      await reader.cancel()
    },
  }
}

interface Frame {
  event?: string
  id?: string
  data?: any
  comment?: string
}

function parseFrame(text: string): Frame {
  const frame: Frame = {}
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim()
    else if (line.startsWith('event: ')) frame.event = line.slice(7)
    else if (line.startsWith('id: ')) frame.id = line.slice(4)
    else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6))
  }
  return frame
}

describe('GET /api/client/streaming', () => {
  it('hydrates a new connection, then sends each change made through the admin API, with the payload’s tag as its id', async () => {
    const { project, flag, other, token } = await ownProject()
    const stream = await connect(token)
    expect(stream.status).toBe(200)
    expect(stream.headers?.get('content-type')).toBe('text/event-stream')
    const connected = await stream.next()
    const features = await t.call('GET', '/api/client/features', { token, headers: SPEC })
    expect(connected).toMatchObject({ event: 'unleash-connected', id: features.headers.get('etag')!.replaceAll('"', '') })
    expect(connected.data.events[0]).toMatchObject({ type: 'hydration', features: features.body.features })

    await enableFlag(t, other, 'development', project)
    const updated = await stream.next()
    expect(updated.event).toBe('unleash-updated')
    expect(updated.data.events).toEqual([{ eventId: expect.any(Number), type: 'feature-updated', feature: expect.objectContaining({ name: other, enabled: true }) }])
    expect((await delta(token, `"${connected.id}"`)).body).toEqual(updated.data)

    await ok(t, 'DELETE', `/api/admin/projects/${project}/features/${flag}`)
    expect((await stream.next()).data.events).toEqual([{ eventId: expect.any(Number), type: 'feature-removed', featureName: flag, project }])
    await stream.close()
  })

  it('resumes from Last-Event-ID: what changed since, nothing when nothing did, a hydration for a tag it does not know', async () => {
    const { project, other, token } = await ownProject()
    const first = await connect(token)
    const connected = await first.next()
    await first.close()

    const resumed = await connect(token, { 'last-event-id': connected.id! })
    await expect(resumed.next(300)).rejects.toThrow('no event came')
    expect(resumed.frames[0]).toEqual({ comment: 'connected' })
    await resumed.close()

    await enableFlag(t, other, 'development', project)
    const behind = await connect(token, { 'last-event-id': connected.id! })
    const caughtUp = await behind.next()
    expect(caughtUp.event).toBe('unleash-updated')
    expect(caughtUp.data.events.map((e: { type: string; feature?: { name: string } }) => [e.type, e.feature?.name])).toEqual([['feature-updated', other]])
    await behind.close()

    const stranger = await connect(token, { 'last-event-id': 'not-a-tag-this-server-made' })
    expect((await stranger.next()).data.events[0].type).toBe('hydration')
    await stranger.close()
  })

  it('sends keep-alive comments, and forgets a connection when the client goes', async () => {
    const { token } = await ownProject()
    const before = hub.stats().connections
    const stream = await connect(token)
    await stream.next()
    expect(hub.stats().connections).toBe(before + 1)
    await expect(stream.next(500)).rejects.toThrow('no event came')
    expect(stream.frames.some((f) => f.comment === 'keep-alive')).toBe(true)
    await stream.close()
    await vi.waitFor(() => expect(hub.stats().connections).toBe(before))
  })

  it('answers 429 past the connections allowed per token (SDKs then poll)', async () => {
    const { token } = await ownProject()
    const open = [await connect(token), await connect(token), await connect(token)]
    const refused = await connect(token)
    expect(refused.status).toBe(429)
    expect(refused.body.name).toBe('TooManyRequestsError')
    await open[0]!.close()
    await vi.waitFor(async () => {
      const again = await connect(token)
      expect(again.status).toBe(200)
      open.push(again)
    })
    for (const stream of open) await stream.close()
  })

  it('sends the writes of another process sharing the database, found by reading the revision', async () => {
    const { project, other, token } = await ownProject()
    const stream = await connect(token)
    await stream.next()
    const elsewhere = createApp({ db: () => t.db })
    const res = await elsewhere.request(`/api/admin/projects/${project}/features/${other}/environments/development/on`, { method: 'POST', headers: { authorization: t.adminToken } })
    expect(res.status).toBe(200)
    const updated = await stream.next()
    expect(updated.data.events[0]).toMatchObject({ type: 'feature-updated', feature: { name: other, enabled: true } })
    await stream.close()
    await elsewhere.idle()
  })

  it('ends a stream whose token is deleted, before sending it anything more, and the SDK reconnecting is refused', async () => {
    const { project, other, token } = await ownProject()
    const kept = await connect(token)
    await kept.next()
    const doomedToken = (await createToken(t, { type: 'client', environment: 'development', projects: [project] })).secret as string
    const doomed = await connect(doomedToken)
    await doomed.next()
    await ok(t, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(doomedToken)}`)
    await enableFlag(t, other, 'development', project)
    await expect(doomed.next()).rejects.toThrow('the stream ended')
    expect(doomed.frames.filter((f) => f.event === 'unleash-updated')).toEqual([])
    expect((await kept.next()).data.events[0]).toMatchObject({ type: 'feature-updated', feature: { name: other } })
    expect((await connect(doomedToken)).status).toBe(401)
    await kept.close()
  })

  it('ends a stream when its token expires (which writes nothing), within a keep-alive interval', async () => {
    const { project } = await ownProject()
    const expiresAt = new Date(Date.now() + 1_500).toISOString()
    const token = (await createToken(t, { type: 'client', environment: 'development', projects: [project], expiresAt })).secret as string
    const stream = await connect(token)
    await stream.next()
    await expect(stream.next(4_000)).rejects.toThrow('the stream ended')
  })

  it('ends every stream when the app stops', async () => {
    const own = await createTestApp({ streams: streamHub() })
    const { token } = await flagOnWithClientToken(own)
    const stream = await connect(token, {}, own.app)
    await stream.next()
    await own.close()
    await expect(stream.next()).rejects.toThrow('the stream ended')
  })

  it('is answered 404 where no hub serves streams (Workers), on which SDKs fall back to polling', async () => {
    const own = await createTestApp()
    try {
      const { token } = await flagOnWithClientToken(own)
      const res = await connect(token, {}, own.app)
      expect(res.status).toBe(404)
      expect(res.body.name).toBe('NotFoundError')
    } finally {
      await own.close()
    }
  })
})
