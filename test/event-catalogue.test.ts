// The event catalogue of the flag domain, walked: through HTTP only (the Node server, src/server.ts, on a fresh embedded
// database), a signed-in Admin performs real operations, the potentially-stale job runs through the server's start with
// a clock moved past a flag type's lifetime, and every kind of WALKED is then read back through the event search (and a
// flag's through its events) and checked against the Event record of the interface specification: its fields and their
// types, `type` the kind, `featureName`/`project`/`environment` set exactly when the kind concerns one, `data` (and
// `preData` for updates and deletions) the object as the routes answer it, and `createdBy` the acting user.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { readConfig, startServer } from '../src/server.js'
import { EVENT_TYPES, type EventType } from '../src/events/types.js'

/**
 * The catalogue kinds (src/events/types.ts) this walk covers, each made by the operation its step names below. Kinds
 * another part of the work writes (the state import's `*-import` and `drop-*`) join the list with their steps.
 */
const WALKED = [
  'context-field-created',
  'context-field-updated',
  'context-field-deleted',
  'strategy-created',
  'strategy-updated',
  'strategy-deleted',
  'strategy-deprecated',
  'strategy-reactivated',
  'tag-created',
  'tag-deleted',
  'tag-type-created',
  'tag-type-updated',
  'tag-type-deleted',
  'environment-created',
  'environment-updated',
  'environment-deleted',
  'project-environment-removed',
  'feature-deleted',
  'feature-project-change',
  'feature-potentially-stale-on',
  'feature-type-updated',
  'project-deleted',
  'project-archived',
  'project-revived',
  'features-exported',
  'features-imported',
  'feature-archived',
  'feature-revived',
  'setting-created',
  'setting-updated',
  'setting-deleted',
] as const satisfies readonly EventType[]

/** The Event record of the interface specification (Resources, Event): every field present, with its type. */
const EventRecord = z
  .object({
    id: z.number().int().min(1),
    createdAt: z.iso.datetime({ offset: true }),
    type: z.enum(EVENT_TYPES),
    createdBy: z.string(),
    createdByUserId: z.number().nullable(),
    environment: z.string().nullable(),
    project: z.string().nullable(),
    featureName: z.string().nullable(),
    data: z.record(z.string(), z.unknown()).nullable(),
    preData: z.record(z.string(), z.unknown()).nullable(),
    tags: z.array(z.object({ type: z.string().min(2).max(50), value: z.string().min(2).max(50) }).strict()).nullable(),
    label: z.string().nullable(),
    summary: z.string().nullable(),
  })
  .strict()
type ApiEvent = z.infer<typeof EventRecord>

/** What one operation's event must be: the subject that picks it among its kind's, and the rest of the record. */
interface Expected {
  kind: (typeof WALKED)[number]
  /** Which of the kind's events is this operation's. */
  subject: (e: ApiEvent) => boolean
  /** Set exactly when the kind concerns one: null otherwise. */
  featureName?: string
  project?: string
  environment?: string
  data: unknown
  preData?: unknown
  /** Who acted, when not the walker: the potentially-stale job. */
  by?: { createdBy: string; createdByUserId: number | null }
}
const expected: Expected[] = []

const DAY = 86_400_000
let now = Date.now()
const clock = () => new Date(now)

let dataDir: string
let server: Awaited<ReturnType<typeof startServer>>
const TOKEN = '*:*.event-catalogue-admin'
const WALKER = { username: 'walker', email: 'walker@example.com', password: 'walk the catalogue' }
let walkerId: number
let cookie: string

const start = async () => {
  server = await startServer({ ...readConfig({ INIT_ADMIN_API_TOKENS: TOKEN, FLAGPOST_ADMIN_PASSWORD: 'catalogue-admin-password' }), port: 0, host: '127.0.0.1', dataDir }, { clock })
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'flagpost-catalogue-'))
  await start()
  walkerId = (await send('POST', '/api/admin/user-admin', { username: WALKER.username, email: WALKER.email, password: WALKER.password, rootRole: 'Admin', sendEmail: false }, { token: TOKEN })).id
  await signIn()
})

/** Signs the walker in (again, once the clock has moved past their session). */
async function signIn() {
  const signedIn = await fetch(`${server.url}/auth/simple/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: WALKER.username, password: WALKER.password }) })
  expect(signedIn.status).toBe(200)
  cookie = /flagpost-session=[^;]*/.exec(signedIn.headers.get('set-cookie') ?? '')![0]
}
afterAll(async () => {
  await server?.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** A request as the walker (or with `token`), over HTTP, a second after the one before; anything but 2xx fails the test. Answers the parsed body. */
async function send(method: string, path: string, body?: unknown, options: { token?: string } = {}): Promise<any> {
  // Time passes between requests, so events of one kind on one subject tell apart.
  now += 1_000
  const headers: Record<string, string> = options.token ? { authorization: options.token } : { cookie }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  expect(res.ok, `${method} ${path} answered ${res.status}: ${text}`).toBe(true)
  return text ? JSON.parse(text) : undefined
}
const get = (path: string) => send('GET', path)

/** A flag's metadata as the flag's route answers it (what its events carry of it). */
const metadataOf = (flag: any) => ({ name: flag.name, project: flag.project, description: flag.description, type: flag.type, stale: flag.stale, impressionData: flag.impressionData, archived: flag.archived })
const named = (name: string) => (e: ApiEvent) => (e.data ?? e.preData)?.name === name
const F = (project: string) => `/api/admin/projects/${project}/features`

describe('the walk', () => {
  it('context fields: create, update, delete, global and a project\'s own', async () => {
    const created = await send('POST', '/api/admin/context', { name: 'plan', legalValues: [{ value: 'gold' }] })
    expected.push({ kind: 'context-field-created', subject: named('plan'), data: created })
    await send('PUT', '/api/admin/context/plan', { description: 'What they pay', legalValues: [{ value: 'gold' }, { value: 'silver' }] })
    const updated = await get('/api/admin/context/plan')
    expected.push({ kind: 'context-field-updated', subject: named('plan'), data: updated, preData: created })
    await send('DELETE', '/api/admin/context/plan')
    expected.push({ kind: 'context-field-deleted', subject: named('plan'), data: null, preData: updated })

    await send('POST', '/api/admin/projects', { id: 'fields', name: 'Fields' })
    const own = await send('POST', '/api/admin/projects/fields/context', { name: 'seat' })
    expected.push({ kind: 'context-field-created', subject: named('seat'), project: 'fields', data: own })
    await send('POST', '/api/admin/projects/fields/context/seat/legal-values', { value: 'aisle' })
    const ownUpdated = await get('/api/admin/projects/fields/context/seat')
    expected.push({ kind: 'context-field-updated', subject: named('seat'), project: 'fields', data: ownUpdated, preData: own })
    await send('DELETE', '/api/admin/projects/fields/context/seat')
    expected.push({ kind: 'context-field-deleted', subject: named('seat'), project: 'fields', data: null, preData: ownUpdated })
  })

  it('strategy types: create, update, deprecate, reactivate, delete', async () => {
    const created = await send('POST', '/api/admin/strategies', { name: 'tenant', description: 'By tenant', parameters: [{ name: 'ids', type: 'list', required: true }] })
    expect(await get('/api/admin/strategies/tenant')).toEqual(created)
    expected.push({ kind: 'strategy-created', subject: named('tenant'), data: created })
    await send('PUT', '/api/admin/strategies/tenant', { description: 'By tenant id', parameters: [{ name: 'ids', type: 'list', required: true }] })
    const updated = await get('/api/admin/strategies/tenant')
    expected.push({ kind: 'strategy-updated', subject: named('tenant'), data: updated, preData: created })
    await send('POST', '/api/admin/strategies/tenant/deprecate')
    const deprecated = await get('/api/admin/strategies/tenant')
    expected.push({ kind: 'strategy-deprecated', subject: named('tenant'), data: deprecated, preData: updated })
    await send('POST', '/api/admin/strategies/tenant/reactivate')
    const reactivated = await get('/api/admin/strategies/tenant')
    expected.push({ kind: 'strategy-reactivated', subject: named('tenant'), data: reactivated, preData: deprecated })
    await send('DELETE', '/api/admin/strategies/tenant')
    // Its data names the type, as Unleash's strategy-deleted does.
    expected.push({ kind: 'strategy-deleted', subject: named('tenant'), data: { name: 'tenant' }, preData: reactivated })
  })

  it('tag types and tags: create, update, delete', async () => {
    const type = await send('POST', '/api/admin/tag-types', { name: 'team', description: 'Who owns it' })
    expected.push({ kind: 'tag-type-created', subject: named('team'), data: type })
    await send('PUT', '/api/admin/tag-types/team', { description: 'The owning team', icon: 'people' })
    const updatedType = await get('/api/admin/tag-types/team')
    expected.push({ kind: 'tag-type-updated', subject: named('team'), data: updatedType, preData: type })
    const tag = (await send('POST', '/api/admin/tags', { type: 'team', value: 'payments' })).tag
    expect((await get('/api/admin/tags/team/payments')).tag).toEqual(tag)
    const isTag = (e: ApiEvent) => (e.data ?? e.preData)?.value === 'payments'
    expected.push({ kind: 'tag-created', subject: isTag, data: tag })
    await send('DELETE', '/api/admin/tags/team/payments')
    expected.push({ kind: 'tag-deleted', subject: isTag, data: null, preData: tag })
    await send('DELETE', '/api/admin/tag-types/team')
    expected.push({ kind: 'tag-type-deleted', subject: named('team'), data: null, preData: updatedType })
  })

  it("environments: create, update, delete; one taken out of a project", async () => {
    const created = await send('POST', '/api/admin/environments', { name: 'qa', type: 'test' })
    expect(await get('/api/admin/environments/qa')).toEqual(created)
    expected.push({ kind: 'environment-created', subject: named('qa'), environment: 'qa', data: created })
    const updated = await send('PUT', '/api/admin/environments/qa', { type: 'preproduction', sortOrder: 7 })
    expected.push({ kind: 'environment-updated', subject: named('qa'), environment: 'qa', data: updated, preData: created })

    await send('POST', '/api/admin/projects', { id: 'rooms', name: 'Rooms', environments: ['development', 'qa'] })
    await send('PUT', '/api/admin/projects/rooms/environments/qa/default-strategy', { name: 'default' })
    const before = (await get('/api/admin/environments/project/rooms')).environments.find((e: any) => e.name === 'qa')
    await send('DELETE', '/api/admin/projects/rooms/environments/qa')
    expected.push({
      kind: 'project-environment-removed',
      subject: (e) => e.project === 'rooms',
      project: 'rooms',
      environment: 'qa',
      data: null,
      preData: { environment: 'qa', changeRequestsEnabled: false, requiredApprovals: 1, defaultStrategy: before.defaultStrategy },
    })

    const last = await get('/api/admin/environments/qa')
    await send('DELETE', '/api/admin/environments/qa')
    expected.push({ kind: 'environment-deleted', subject: named('qa'), environment: 'qa', data: null, preData: last })
  })

  it("a flag's life: type changed, archived, revived, moved, archived again and deleted for good", async () => {
    await send('POST', '/api/admin/projects', { id: 'shop', name: 'Shop' })
    await send('POST', '/api/admin/projects', { id: 'warehouse', name: 'Warehouse' })
    await send('POST', F('shop'), { name: 'basket', description: 'The basket' })
    const released = metadataOf(await get(`${F('shop')}/basket`))
    await send('PATCH', `${F('shop')}/basket`, [{ op: 'replace', path: '/type', value: 'experiment' }])
    const experiment = metadataOf(await get(`${F('shop')}/basket`))
    expected.push({ kind: 'feature-type-updated', subject: (e) => e.featureName === 'basket', featureName: 'basket', project: 'shop', data: { type: experiment.type }, preData: { type: released.type } })

    await send('DELETE', `${F('shop')}/basket`)
    const archived = metadataOf(await get(`${F('shop')}/basket`))
    expected.push({ kind: 'feature-archived', subject: (e) => e.featureName === 'basket' && e.project === 'shop', featureName: 'basket', project: 'shop', data: archived, preData: experiment })
    await send('POST', '/api/admin/archive/revive/basket')
    const revived = metadataOf(await get(`${F('shop')}/basket`))
    expected.push({ kind: 'feature-revived', subject: (e) => e.featureName === 'basket', featureName: 'basket', project: 'shop', data: revived, preData: archived })

    await send('POST', `${F('shop')}/basket/changeProject`, { newProjectId: 'warehouse' })
    const moved = await get(`${F('warehouse')}/basket`)
    expect(moved.project).toBe('warehouse')
    expected.push({ kind: 'feature-project-change', subject: (e) => e.featureName === 'basket', featureName: 'basket', project: 'warehouse', data: { oldProject: 'shop', newProject: 'warehouse' }, preData: { project: 'shop' } })

    await send('DELETE', `${F('warehouse')}/basket`)
    const gone = metadataOf(await get(`${F('warehouse')}/basket`))
    expected.push({ kind: 'feature-archived', subject: (e) => e.featureName === 'basket' && e.project === 'warehouse', featureName: 'basket', project: 'warehouse', data: gone, preData: metadataOf(moved) })
    await send('DELETE', '/api/admin/archive/basket')
    expected.push({ kind: 'feature-deleted', subject: (e) => e.featureName === 'basket', featureName: 'basket', project: 'warehouse', data: null, preData: gone })
  })

  it('projects: archived, revived, deleted', async () => {
    await send('POST', '/api/admin/projects', { id: 'attic', name: 'Attic', description: 'Old things', mode: 'open' })
    const live = (await get('/api/admin/projects')).projects.find((p: any) => p.id === 'attic')
    await send('POST', '/api/admin/projects/archive/attic')
    const archived = (await get('/api/admin/projects?archived=true')).projects.find((p: any) => p.id === 'attic')
    const life = (p: any) => ({ id: p.id, name: p.name, archivedAt: p.archivedAt ?? null })
    expected.push({ kind: 'project-archived', subject: (e) => e.project === 'attic', project: 'attic', data: life(archived), preData: life(live) })
    await send('POST', '/api/admin/projects/revive/attic')
    const revived = (await get('/api/admin/projects')).projects.find((p: any) => p.id === 'attic')
    expected.push({ kind: 'project-revived', subject: (e) => e.project === 'attic', project: 'attic', data: life(revived), preData: life(archived) })
    await send('POST', '/api/admin/projects', { id: 'cellar', name: 'Cellar', description: 'Older things', mode: 'protected' })
    await send('POST', '/api/admin/projects/archive/cellar')
    const gone = (await get('/api/admin/projects?archived=true')).projects.find((p: any) => p.id === 'cellar')
    await send('DELETE', '/api/admin/projects/cellar')
    expected.push({ kind: 'project-deleted', subject: (e) => e.project === 'cellar', project: 'cellar', data: null, preData: { ...life(gone), description: 'Older things', mode: 'protected' } })
  })

  it('flags exported and imported', async () => {
    await send('POST', F('shop'), { name: 'checkout' })
    await send('POST', `${F('shop')}/checkout/environments/development/strategies`, { name: 'default' })
    const exported = await send('POST', '/api/admin/features-batch/export', { environment: 'development', project: 'shop' })
    expected.push({ kind: 'features-exported', subject: (e) => (e.data?.features as any[])?.some((f) => f.name === 'checkout'), data: exported })
    const data = { ...exported, features: exported.features.map((f: any) => ({ ...f, name: 'checkout-copy' })), featureStrategies: exported.featureStrategies.map((s: any) => ({ ...s, featureName: 'checkout-copy' })), featureEnvironments: [] }
    await send('POST', '/api/admin/features-batch/import', { project: 'warehouse', environment: 'production', data })
    expect((await get(`${F('warehouse')}/checkout-copy`)).name).toBe('checkout-copy')
    expected.push({ kind: 'features-imported', subject: (e) => e.project === 'warehouse', project: 'warehouse', environment: 'production', data: { features: ['checkout-copy'] } })
  })

  it('single sign-on settings: created, updated, reset', async () => {
    const secretless = ({ secret: _secret, ...rest }: any) => rest
    const isOidc = (e: ApiEvent) => (e.data ?? e.preData)?.id === 'oidc'
    const created = await send('POST', '/api/admin/auth/oidc/settings', { enabled: true, clientId: 'flagpost', secret: 'very-secret', discoverUrl: 'https://sso.example.com/.well-known/openid-configuration' })
    expect(created.secret).toBe('********')
    expected.push({ kind: 'setting-created', subject: isOidc, data: { id: 'oidc', ...secretless(created), secretChanged: true } })
    const updated = await send('POST', '/api/admin/auth/oidc/settings', { ...created, clientId: 'flagpost-2' })
    expected.push({ kind: 'setting-updated', subject: isOidc, data: { id: 'oidc', ...secretless(updated), secretChanged: false }, preData: { id: 'oidc', ...secretless(created) } })
    await send('DELETE', '/api/admin/auth/oidc/settings')
    expected.push({ kind: 'setting-deleted', subject: isOidc, data: null, preData: { id: 'oidc', ...secretless(updated) } })
  })

  it("the potentially-stale job, run by the server's start with its clock past a release flag's lifetime", async () => {
    await send('POST', F('shop'), { name: 'banner', type: 'release' })
    const lifetime = (await get('/api/admin/feature-types')).types.find((t: any) => t.id === 'release').lifetimeDays as number
    await server.close()
    now += (lifetime + 1) * DAY
    await start()
    await signIn()
    await expect.poll(async () => (await get(`${F('shop')}/banner`)).potentiallyStale, { timeout: 10_000 }).toBe(true)
    expected.push({ kind: 'feature-potentially-stale-on', subject: (e) => e.featureName === 'banner', featureName: 'banner', project: 'shop', data: { name: 'banner', potentiallyStale: true }, by: { createdBy: 'system', createdByUserId: expect.any(Number) } })
  })
})

describe('each walked kind, read back', () => {
  it('walks kinds of the catalogue (src/events/types.ts), each once', () => {
    expect(WALKED.filter((k) => !(EVENT_TYPES as readonly string[]).includes(k))).toEqual([])
    expect(new Set(WALKED).size).toBe(WALKED.length)
  })

  it.each(WALKED)('%s occurred with the documented shape', async (kind) => {
    const mine = expected.filter((x) => x.kind === kind)
    expect(mine.length, `the walk made no ${kind}`).toBeGreaterThan(0)
    const found = (await get(`/api/admin/search/events?type=IS:${kind}&limit=1000`)) as { events: unknown[] }
    const events = found.events.map((e) => EventRecord.parse(e))
    for (const x of mine) {
      const matching = events.filter(x.subject)
      expect(matching, `one ${kind} of this operation`).toHaveLength(1)
      const event = matching[0]!
      expect(event.type).toBe(kind)
      expect({ featureName: event.featureName, project: event.project, environment: event.environment }).toEqual({ featureName: x.featureName ?? null, project: x.project ?? null, environment: x.environment ?? null })
      expect(event.data, `${kind} data`).toEqual(x.data)
      expect(event.preData, `${kind} preData`).toEqual(x.preData ?? null)
      expect({ createdBy: event.createdBy, createdByUserId: event.createdByUserId }).toEqual(x.by ?? { createdBy: WALKER.email, createdByUserId: walkerId })
      if (event.featureName) {
        const ofFlag = (await get(`/api/admin/events/${event.featureName}?limit=1000`)).events as ApiEvent[]
        expect(ofFlag.find((e) => e.id === event.id), `${kind} among the events of ${event.featureName}`).toEqual(event)
      }
    }
  })
})
