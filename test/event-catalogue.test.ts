// The event catalogue, walked: through HTTP only (the Node server, src/server.ts, on a fresh embedded database), a
// signed-in Admin performs real operations, the jobs run through the server's start with its clock moved on (the
// scheduled change requests' past their time, the potentially-stale job's past a flag type's lifetime; SDK reports are
// folded in the background), and every kind of WALKED is then read back through the event search (and a flag's through
// its events) and checked against the Event record of the interface specification: its fields and their types, `type`
// the kind, `featureName`/`project`/`environment` set exactly when the kind concerns one, `data` (and `preData` for
// updates and deletions) the object as the routes answer it (where a kind carries less, or Unleash's shape, its step
// says so), and `createdBy` the acting user (or, where a step says so, who else acted: a job, an SDK's token, a
// reviewer, someone signing up).
import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { readConfig, startServer } from '../src/server.js'
import { EVENT_TYPES, type EventType } from '../src/events/types.js'
import { ADMIN_TOKEN_USER_ID } from '../src/core/principal.js'
import { browserAgent, startTestProvider } from './helpers/oidc-provider.js'
import { migratedDataDir } from './helpers/data-dir.js'

/**
 * The catalogue kinds (src/events/types.ts) this walk covers, each made by the operation its step names below: every
 * kind an operation writes (see UNWRITTEN for the others), single sign-on's group sync's against a test OpenID provider.
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
  'feature-created',
  'feature-metadata-updated',
  'feature-stale-on',
  'feature-stale-off',
  'feature-tagged',
  'feature-untagged',
  'feature-strategy-add',
  'feature-strategy-update',
  'feature-strategy-remove',
  'strategy-order-changed',
  'feature-environment-enabled',
  'feature-environment-disabled',
  'feature-environment-variants-updated',
  'feature-variants-updated',
  'feature-dependency-added',
  'feature-dependency-removed',
  'feature-dependencies-removed',
  'feature-link-added',
  'feature-link-updated',
  'feature-link-removed',
  'feature-favorited',
  'feature-unfavorited',
  'project-favorited',
  'project-unfavorited',
  'feature-completed',
  'feature-uncompleted',
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
  'environment-import',
  'project-import',
  'strategy-import',
  'tag-type-import',
  'tag-import',
  'segment-import',
  'feature-import',
  'feature-tag-import',
  'drop-environments',
  'drop-projects',
  'drop-features',
  'drop-strategies',
  'drop-tag-types',
  'drop-tags',
  'drop-feature-tags',
  'role-created',
  'role-updated',
  'role-deleted',
  'group-created',
  'group-updated',
  'group-deleted',
  'group-user-removed',
  'group-user-added',
  'project-access-added',
  'project-access-updated',
  'project-access-user-roles-updated',
  'project-access-user-roles-deleted',
  'project-access-group-roles-updated',
  'project-access-group-roles-deleted',
  'project-user-added',
  'project-user-role-changed',
  'project-user-removed',
  'project-group-added',
  'project-group-role-changed',
  'project-group-removed',
  'banner-created',
  'maintenance-mode-toggled',
  'banner-updated',
  'banner-deleted',
  'user-created',
  'user-updated',
  'user-deleted',
  'service-account-created',
  'service-account-updated',
  'service-account-deleted',
  'pat-created',
  'pat-deleted',
  'api-token-created',
  'api-token-updated',
  'api-token-deleted',
  'signal-endpoint-created',
  'signal-endpoint-updated',
  'signal-endpoint-deleted',
  'signal-endpoint-token-created',
  'signal-endpoint-token-updated',
  'signal-endpoint-token-deleted',
  'actions-created',
  'actions-updated',
  'actions-deleted',
  'public-signup-token-created',
  'public-signup-token-updated',
  'public-signup-token-user-added',
  'project-created',
  'project-updated',
  'project-environment-added',
  'default-strategy-updated',
  'segment-created',
  'segment-updated',
  'segment-deleted',
  'addon-config-created',
  'addon-config-updated',
  'addon-config-deleted',
  'change-request-configuration-updated',
  'change-request-created',
  'change-added',
  'change-request-sent-to-review',
  'change-request-approval-added',
  'change-request-approved',
  'change-request-applied',
  'change-request-rejected',
  'change-request-cancelled',
  'application-created',
  'change-edited',
  'change-discarded',
  'change-request-discarded',
  'change-request-scheduled',
  'change-request-schedule-suspended',
  'change-request-scheduled-application-success',
  'change-request-scheduled-application-failure',
] as const satisfies readonly EventType[]

/**
 * The catalogue kinds no Flagpost operation writes (docs/ARCHITECTURE.md, Events): Unleash's in-process signals
 * (`db-pool-update`, `client-metrics`, `client-register`) and its legacy whole-flag update (`feature-updated`, replaced by
 * the kinds of what changed).
 */
const UNWRITTEN = ['db-pool-update', 'client-metrics', 'client-register', 'feature-updated'] as const satisfies readonly EventType[]

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
  dataDir = await migratedDataDir('flagpost-catalogue-')
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
/** Restarts the server with its clock moved on by `ms`, so the jobs it runs at start run as of then, and signs the walker in again. */
async function restartLater(ms: number) {
  await server.close()
  now += ms
  await start()
  await signIn()
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

  it("a flag's configuration: created, described, made stale and fresh, tagged, its strategies, switched, its variants, its dependencies, its links, favorited, completed", async () => {
    await send('POST', '/api/admin/projects', { id: 'garden', name: 'Garden' })
    const G = F('garden')
    const flag = (name: string) => get(`${G}/${name}`)
    const of = (name: string, environment?: string) => ({ featureName: name, project: 'garden', ...(environment ? { environment } : {}) })
    const isFlag = (name: string) => (e: ApiEvent) => e.featureName === name && e.project === 'garden'

    const created = metadataOf(await send('POST', G, { name: 'roses', description: 'Red ones' }))
    expect(metadataOf(await flag('roses'))).toEqual(created)
    expected.push({ kind: 'feature-created', subject: isFlag('roses'), ...of('roses'), data: created })
    await send('PATCH', `${G}/roses`, [{ op: 'replace', path: '/description', value: 'Red and white' }])
    const described = metadataOf(await flag('roses'))
    expected.push({ kind: 'feature-metadata-updated', subject: (e) => isFlag('roses')(e) && e.preData?.description === 'Red ones', ...of('roses'), data: described, preData: created })
    await send('PATCH', `${G}/roses`, [{ op: 'replace', path: '/stale', value: true }])
    expect((await flag('roses')).stale).toBe(true)
    // Unleash's shape: what changed, before and after.
    expected.push({ kind: 'feature-stale-on', subject: isFlag('roses'), ...of('roses'), data: { stale: true }, preData: { stale: false } })
    await send('PATCH', `${G}/roses`, [{ op: 'replace', path: '/stale', value: false }])
    expected.push({ kind: 'feature-stale-off', subject: isFlag('roses'), ...of('roses'), data: { stale: false }, preData: { stale: true } })

    await send('POST', '/api/admin/features/roses/tags', { type: 'simple', value: 'thorny' })
    const [tag] = (await get('/api/admin/features/roses/tags')).tags
    expect(tag).toEqual({ type: 'simple', value: 'thorny' })
    expected.push({ kind: 'feature-tagged', subject: isFlag('roses'), ...of('roses'), data: tag })
    await send('DELETE', '/api/admin/features/roses/tags/simple/thorny')
    expect((await get('/api/admin/features/roses/tags')).tags).toEqual([])
    expected.push({ kind: 'feature-untagged', subject: isFlag('roses'), ...of('roses'), data: null, preData: tag })

    const S = `${G}/roses/environments/development/strategies`
    const strategies = () => get(S)
    const rollout = await send('POST', S, { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'roses' } })
    expect((await strategies()).find((s: any) => s.id === rollout.id)).toEqual(rollout)
    const isStrategy = (id: string) => (e: ApiEvent) => isFlag('roses')(e) && (e.data ?? e.preData)?.id === id
    expected.push({ kind: 'feature-strategy-add', subject: isStrategy(rollout.id), ...of('roses', 'development'), data: rollout })
    const plain = await send('POST', S, { name: 'default' })
    const changed = await send('PUT', `${S}/${rollout.id}`, { name: 'flexibleRollout', parameters: { rollout: '75', stickiness: 'default', groupId: 'roses' } })
    expect((await strategies()).find((s: any) => s.id === rollout.id)).toEqual(changed)
    expected.push({ kind: 'feature-strategy-update', subject: isStrategy(rollout.id), ...of('roses', 'development'), data: changed, preData: rollout })
    const before = (await strategies()).map((s: any) => s.id)
    await send('POST', `${S}/set-sort-order`, [{ id: plain.id, sortOrder: 0 }, { id: rollout.id, sortOrder: 1 }])
    const after = (await strategies()).map((s: any) => s.id)
    expect(after).toEqual([plain.id, rollout.id])
    // Unleash's shape: the strategies' ids in their order.
    expected.push({ kind: 'strategy-order-changed', subject: isFlag('roses'), ...of('roses', 'development'), data: { strategyIds: after }, preData: { strategyIds: before } })
    const last = (await strategies()).find((s: any) => s.id === plain.id)
    await send('DELETE', `${S}/${plain.id}`)
    expected.push({ kind: 'feature-strategy-remove', subject: isStrategy(plain.id), ...of('roses', 'development'), data: null, preData: last })

    // Unleash's shape: the environment's `enabled`, before and after.
    await send('POST', `${G}/roses/environments/development/on`)
    expected.push({ kind: 'feature-environment-enabled', subject: isFlag('roses'), ...of('roses', 'development'), data: { enabled: true }, preData: { enabled: false } })
    await send('POST', `${G}/roses/environments/development/off`)
    expected.push({ kind: 'feature-environment-disabled', subject: isFlag('roses'), ...of('roses', 'development'), data: { enabled: false }, preData: { enabled: true } })

    const V = `${G}/roses/environments/production/variants`
    await send('PUT', V, [{ name: 'red', weight: 1000, weightType: 'variable', stickiness: 'default' }])
    const variants = (await get(V)).variants
    expected.push({ kind: 'feature-environment-variants-updated', subject: isFlag('roses'), ...of('roses', 'production'), data: { variants }, preData: { variants: [] } })
    await send('PATCH', `${G}/roses/variants`, [{ op: 'add', path: '/-', value: { name: 'white', weightType: 'variable', stickiness: 'default' } }])
    const everywhere = (await flag('roses')).environments.map((e: any) => [e.name, e.variants])
    expect(everywhere.length).toBeGreaterThan(1)
    for (const [environment, current] of everywhere) {
      // Each environment's own variants before: the patch applies to the first environment's and is stored in every one.
      const was = environment === 'production' ? variants : []
      expected.push({ kind: 'feature-variants-updated', subject: (e) => isFlag('roses')(e) && e.environment === environment, ...of('roses', environment), data: { variants: current }, preData: { variants: was } })
    }

    await send('POST', G, { name: 'tulips' })
    await send('POST', `${G}/tulips/dependencies`, { feature: 'roses', enabled: false })
    const [dependency] = (await flag('tulips')).dependencies
    expected.push({ kind: 'feature-dependency-added', subject: (e) => isFlag('tulips')(e) && e.data?.enabled === false, ...of('tulips'), data: dependency })
    await send('DELETE', `${G}/tulips/dependencies/roses`)
    expect((await flag('tulips')).dependencies).toEqual([])
    expected.push({ kind: 'feature-dependency-removed', subject: isFlag('tulips'), ...of('tulips'), data: null, preData: dependency })
    await send('POST', `${G}/tulips/dependencies`, { feature: 'roses' })
    const again = (await flag('tulips')).dependencies
    await send('DELETE', `${G}/tulips/dependencies`)
    // The dependencies that went, under a name (an event's preData is an object).
    expected.push({ kind: 'feature-dependencies-removed', subject: isFlag('tulips'), ...of('tulips'), data: null, preData: { dependencies: again } })

    // Unleash's shape: the link's url and title, as stored (normalized), before and after.
    await send('POST', `${G}/roses/link`, { url: 'example.com/roses/', title: 'Care guide' })
    const [link] = (await flag('roses')).links
    expect(link).toMatchObject({ url: 'https://example.com/roses', title: 'Care guide' })
    expected.push({ kind: 'feature-link-added', subject: isFlag('roses'), ...of('roses'), data: { url: link.url, title: 'Care guide' } })
    await send('PUT', `${G}/roses/link/${link.id}`, { url: 'https://example.com/pruning', title: null })
    expected.push({ kind: 'feature-link-updated', subject: isFlag('roses'), ...of('roses'), data: { url: 'https://example.com/pruning', title: null }, preData: { url: link.url, title: 'Care guide' } })
    await send('DELETE', `${G}/roses/link/${link.id}`)
    expect((await flag('roses')).links).toEqual([])
    expected.push({ kind: 'feature-link-removed', subject: isFlag('roses'), ...of('roses'), data: null, preData: { url: 'https://example.com/pruning', title: null } })

    // Unleash's shape: the flag or project and whether it is a favorite, before and after.
    await send('POST', `${G}/roses/favorites`)
    expect((await flag('roses')).favorite).toBe(true)
    expected.push({ kind: 'feature-favorited', subject: isFlag('roses'), ...of('roses'), data: { feature: 'roses', favorite: true }, preData: { feature: 'roses', favorite: false } })
    await send('DELETE', `${G}/roses/favorites`)
    expected.push({ kind: 'feature-unfavorited', subject: isFlag('roses'), ...of('roses'), data: { feature: 'roses', favorite: false }, preData: { feature: 'roses', favorite: true } })
    await send('POST', '/api/admin/projects/garden/favorites')
    expected.push({ kind: 'project-favorited', subject: (e) => e.project === 'garden', project: 'garden', data: { project: 'garden', favorite: true }, preData: { project: 'garden', favorite: false } })
    await send('DELETE', '/api/admin/projects/garden/favorites')
    expected.push({ kind: 'project-unfavorited', subject: (e) => e.project === 'garden', project: 'garden', data: { project: 'garden', favorite: false }, preData: { project: 'garden', favorite: true } })

    // The flag's current stage as its lifecycle route answers it, without when it was entered; a completed flag's with
    // what was kept (`statusValue`), which that route does not answer.
    const stage = async () => {
      const { enteredStageAt: _enteredStageAt, ...current } = (await get(`${G}/roses/lifecycle`)).at(-1)
      return current
    }
    const live = await stage()
    await send('POST', `${G}/roses/lifecycle/complete`, { status: 'kept', statusValue: 'red' })
    expect(await stage()).toEqual({ stage: 'completed', status: 'kept' })
    const completed = { ...(await stage()), statusValue: 'red' }
    expected.push({ kind: 'feature-completed', subject: isFlag('roses'), ...of('roses'), data: completed, preData: live })
    await send('POST', `${G}/roses/lifecycle/uncomplete`)
    expected.push({ kind: 'feature-uncompleted', subject: isFlag('roses'), ...of('roses'), data: await stage(), preData: completed })
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
    // These settings' (the group sync step saves others).
    const isOidc = (e: ApiEvent) => (e.data ?? e.preData)?.id === 'oidc' && (e.data ?? e.preData)?.discoverUrl === 'https://sso.example.com/.well-known/openid-configuration'
    const created = await send('POST', '/api/admin/auth/oidc/settings', { enabled: true, clientId: 'flagpost', secret: 'very-secret', discoverUrl: 'https://sso.example.com/.well-known/openid-configuration' })
    expect(created.secret).toBe('********')
    expected.push({ kind: 'setting-created', subject: isOidc, data: { id: 'oidc', ...secretless(created), secretChanged: true } })
    const updated = await send('POST', '/api/admin/auth/oidc/settings', { ...created, clientId: 'flagpost-2' })
    expected.push({ kind: 'setting-updated', subject: isOidc, data: { id: 'oidc', ...secretless(updated), secretChanged: false }, preData: { id: 'oidc', ...secretless(created) } })
    await send('DELETE', '/api/admin/auth/oidc/settings')
    expected.push({ kind: 'setting-deleted', subject: isOidc, data: null, preData: { id: 'oidc', ...secretless(updated) } })
  })

  it('the instance state: a document imported, then what it made dropped by a second import of the rest', async () => {
    const doc = {
      version: 4,
      environments: [{ name: 'restored-env', type: 'test' }],
      projects: [{ id: 'restored', name: 'Restored', environments: [{ name: 'development' }] }],
      strategies: [{ name: 'restored-type', description: 'Restored', parameters: [{ name: 'ids', type: 'list', required: true }] }],
      tagTypes: [{ name: 'restored-tags', description: 'Restored' }],
      tags: [{ type: 'simple', value: 'restored-loose' }],
      segments: [{ id: 1, name: 'restored-segment', project: 'restored', constraints: [] }],
      features: [
        { name: 'restored-flag', project: 'restored', description: 'Restored' },
        { name: 'restored-kept', project: 'default', description: 'Kept' },
      ],
      featureStrategies: [{ featureName: 'restored-flag', environment: 'development', name: 'default' }],
      featureTags: [
        { featureName: 'restored-flag', tagType: 'restored-tags', tagValue: 'stuck' },
        { featureName: 'restored-kept', tagType: 'simple', tagValue: 'restored-stuck' },
      ],
    }
    await send('POST', '/api/admin/state/import', doc)
    // An `*-import` event's data is the object as the state document (the export, what an import takes) shows it.
    const state = await get('/api/admin/state/export')
    const one = (list: any[], pick: (x: any) => boolean) => list.filter(pick).at(0)
    expected.push({ kind: 'environment-import', subject: named('restored-env'), environment: 'restored-env', data: one(state.environments, (e) => e.name === 'restored-env') })
    // The project's settings and environments: its times (createdAt, updatedAt) are none of what the import sets.
    const { createdAt: _created, updatedAt: _updated, ...project } = one(state.projects, (p) => p.id === 'restored')
    expected.push({ kind: 'project-import', subject: (e) => e.project === 'restored', project: 'restored', data: project })
    expected.push({ kind: 'strategy-import', subject: named('restored-type'), data: one(state.strategies, (s) => s.name === 'restored-type') })
    expected.push({ kind: 'tag-type-import', subject: named('restored-tags'), data: one(state.tagTypes, (t) => t.name === 'restored-tags') })
    expect((await get('/api/admin/tag-types/restored-tags'))).toEqual(one(state.tagTypes, (t) => t.name === 'restored-tags'))
    for (const [type, value] of [['simple', 'restored-loose'], ['restored-tags', 'stuck'], ['simple', 'restored-stuck']] as const) {
      expect((await get(`/api/admin/tags/${type}/${value}`)).tag).toEqual({ type, value })
      expected.push({ kind: 'tag-import', subject: (e) => e.data?.type === type && e.data?.value === value, data: one(state.tags, (t) => t.type === type && t.value === value) })
    }
    expected.push({ kind: 'segment-import', subject: named('restored-segment'), project: 'restored', data: one(state.segments, (s) => s.name === 'restored-segment') })
    // A flag's configuration, as the flag route answers it without what is derived (lifecycle, collaborators, when last
    // seen…) or carried elsewhere (its tags: the event's own `tags`).
    const configuration = (f: any) => ({
      ...Object.fromEntries(['name', 'project', 'type', 'description', 'stale', 'impressionData', 'archived', 'dependencies'].map((k) => [k, f[k]])),
      environments: f.environments.map((e: any) => ({ name: e.name, enabled: e.enabled, variants: e.variants, strategies: e.strategies.map(({ featureName: _, ...s }: any) => s) })),
      links: f.links.map((l: any) => ({ url: l.url, title: l.title })),
    })
    for (const [flag, project] of [['restored-flag', 'restored'], ['restored-kept', 'default']] as const) {
      expected.push({ kind: 'feature-import', subject: (e) => e.featureName === flag, featureName: flag, project, data: configuration(await get(`${F(project)}/${flag}`)) })
    }
    for (const t of state.featureTags.filter((t: any) => t.featureName.startsWith('restored-'))) {
      expected.push({ kind: 'feature-tag-import', subject: (e) => e.featureName === t.featureName, featureName: t.featureName, project: t.featureName === 'restored-flag' ? 'restored' : 'default', data: t })
    }

    // The rest of the instance, exported, imported with drop: what the first import made, and only that, goes.
    const rest = {
      ...state,
      environments: state.environments.filter((e: any) => e.name !== 'restored-env'),
      projects: state.projects.filter((p: any) => p.id !== 'restored'),
      strategies: state.strategies.filter((s: any) => s.name !== 'restored-type'),
      tagTypes: state.tagTypes.filter((t: any) => t.name !== 'restored-tags'),
      tags: state.tags.filter((t: any) => t.type !== 'restored-tags' && !t.value.startsWith('restored-')),
      segments: state.segments.filter((s: any) => s.name !== 'restored-segment'),
      features: state.features.filter((f: any) => f.name !== 'restored-flag'),
      featureEnvironments: state.featureEnvironments.filter((e: any) => e.featureName !== 'restored-flag'),
      featureStrategies: state.featureStrategies.filter((s: any) => s.featureName !== 'restored-flag'),
      featureTags: state.featureTags.filter((t: any) => !t.featureName.startsWith('restored-')),
    }
    await send('POST', '/api/admin/state/import?drop=true', rest)
    const after = await get('/api/admin/state/export')
    expect(after).toEqual({ ...rest, features: rest.features.map(({ tags, ...f }: any) => (f.name === 'restored-kept' ? f : { ...f, tags })) })
    // Unleash's drop events: one per kind, `data` naming the kind, `preData` what went (not a route's answer).
    const drop = (kind: Expected['kind'], name: string, key: string, list: unknown[]) => expected.push({ kind, subject: (e) => e.data?.name === name, data: { name }, preData: { [key]: list } })
    drop('drop-environments', 'all-environments', 'environments', ['restored-env'])
    drop('drop-projects', 'all-projects', 'projects', ['restored'])
    drop('drop-features', 'all-features', 'features', ['restored-flag'])
    drop('drop-strategies', 'all-strategies', 'strategies', ['restored-type'])
    drop('drop-tag-types', 'all-tag-types', 'tagTypes', ['restored-tags'])
    drop('drop-tags', 'all-tags', 'tags', [{ type: 'simple', value: 'restored-loose' }, { type: 'simple', value: 'restored-stuck' }])
    drop('drop-feature-tags', 'all-feature-tags', 'featureTags', [{ featureName: 'restored-kept', tagType: 'simple', tagValue: 'restored-stuck' }])
  })

  it('custom roles: create, update, delete', async () => {
    const created = await send('POST', '/api/admin/roles', { name: 'releaser', description: 'Releases', permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }] })
    const id = created.roles?.id ?? created.id
    // A role's events name its permissions as Unleash's do: by name, with the environment of an environment's permission.
    const asEvent = (r: any) => ({ ...r, permissions: r.permissions.map(({ name, environment }: any) => (environment ? { name, environment } : { name })) })
    const role = asEvent(await get(`/api/admin/roles/${id}`))
    expected.push({ kind: 'role-created', subject: named('releaser'), data: role })
    await send('PUT', `/api/admin/roles/${id}`, { name: 'release-manager', description: 'Manages releases', permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: 'production' }, { name: 'CREATE_FEATURE' }] })
    const updated = asEvent(await get(`/api/admin/roles/${id}`))
    expected.push({ kind: 'role-updated', subject: named('release-manager'), data: updated, preData: role })
    await send('DELETE', `/api/admin/roles/${id}`)
    expected.push({ kind: 'role-deleted', subject: named('release-manager'), data: null, preData: updated })
  })

  it('groups: create, update, delete; a member deleted leaves their group', async () => {
    const member = async (username: string) => (await send('POST', '/api/admin/user-admin', { username, email: `${username}@example.com`, rootRole: 'Viewer', sendEmail: false })).id as number
    const [ann, bob] = [await member('ann'), await member('bob')]
    const created = await send('POST', '/api/admin/groups', { name: 'crew', description: 'The crew', users: [{ user: { id: ann } }] })
    const group = await get(`/api/admin/groups/${created.id}`)
    // A group's events carry the group as Unleash's do, its members by id; the group route answers them as users, and more
    // (who made it and when, its projects, its member count).
    const asEvent = (g: any) => ({ id: g.id, name: g.name, description: g.description, mappingsSSO: g.mappingsSSO, rootRole: g.rootRole, users: g.users.map((u: any) => u.user.id) })
    expected.push({ kind: 'group-created', subject: named('crew'), data: asEvent(group) })
    await send('PUT', `/api/admin/groups/${created.id}`, { name: 'deck-crew', description: 'On deck', users: [{ user: { id: ann } }, { user: { id: bob } }] })
    const updated = await get(`/api/admin/groups/${created.id}`)
    expected.push({ kind: 'group-updated', subject: named('deck-crew'), data: asEvent(updated), preData: asEvent(group) })
    await send('DELETE', `/api/admin/user-admin/${bob}`)
    expect((await get(`/api/admin/groups/${created.id}`)).users.map((u: any) => u.user.id)).toEqual([ann])
    // Unleash's shape: which group, which user.
    expected.push({ kind: 'group-user-removed', subject: (e) => e.preData?.userId === bob, data: null, preData: { groupId: created.id, userId: bob } })
    const last = await get(`/api/admin/groups/${created.id}`)
    await send('DELETE', `/api/admin/groups/${created.id}`)
    expected.push({ kind: 'group-deleted', subject: named('deck-crew'), data: null, preData: asEvent(last) })
  })

  it("groups joined through single sign-on's group sync", async () => {
    const provider = await startTestProvider({ redirectUris: [`${server.url}/auth/oidc/callback`], accounts: [{ email: 'dora@example.com', name: 'Dora', groups: ['crew-sso'] }], clientId: 'catalogue-walk' })
    try {
      const dora = (await send('POST', '/api/admin/user-admin', { email: 'dora@example.com', rootRole: 'Viewer', sendEmail: false })).id as number
      const synced = (await send('POST', '/api/admin/groups', { name: 'sso-crew', mappingsSSO: ['crew-sso'] })).id as number
      await send('POST', '/api/admin/auth/oidc/settings', { enabled: true, discoverUrl: provider.discoverUrl, clientId: provider.clientId, secret: provider.clientSecret, enableGroupSyncing: true, groupJsonPath: 'groups', addGroupsScope: true })
      const agent = browserAgent(server.url, (request) => fetch(request))
      const start = await agent.send(`${server.url}/auth/oidc/login`)
      const page = await agent.follow(start.headers.get('location')!)
      const back = await agent.follow(page.url, { method: 'POST', body: new URLSearchParams({ email: 'dora@example.com' }) }, (url) => url.origin === server.url && url.pathname !== '/auth/oidc/callback')
      expect(new URL(back.url).pathname).toBe('/')
      expect((await get(`/api/admin/groups/${synced}`)).users.map((u: any) => [u.user.id, u.createdBy])).toEqual([[dora, 'SSO']])
      // Unleash's shape: which group, which user; by the system.
      expected.push({ kind: 'group-user-added', subject: (e) => e.data?.userId === dora, data: { groupId: synced, userId: dora }, by: { createdBy: 'system', createdByUserId: expect.any(Number) } })
    } finally {
      await send('DELETE', '/api/admin/auth/oidc/settings')
      await provider.close()
    }
  })

  it("a project's access: users and groups given roles, all at once, one role at a time, and taken away", async () => {
    await send('POST', '/api/admin/projects', { id: 'access', name: 'Access' })
    const A = '/api/admin/projects/access'
    const cid = (await send('POST', '/api/admin/user-admin', { username: 'cid', email: 'cid@example.com', rootRole: 'Viewer', sendEmail: false })).id as number
    const team = (await send('POST', '/api/admin/groups', { name: 'team', users: [{ user: { id: cid } }] })).id as number
    const access = () => get(`${A}/access`)
    const { roles } = await access()
    const roleId = (name: string) => roles.find((r: any) => r.name === name).id as number
    const [owner, member] = [roleId('Owner'), roleId('Member')]
    const roleName = (id: number) => roles.find((r: any) => r.id === id).name as string
    // Unleash's shapes, from the access the route answers: each role held with its users and groups; a user's or group's roles.
    const byRole = (a: any) =>
      [...new Set([...a.users, ...a.groups].flatMap((x: any) => x.roles as number[]))]
        .sort((x, y) => x - y)
        .map((id) => ({ roleId: id, userIds: a.users.filter((u: any) => u.roles.includes(id)).map((u: any) => u.id), groupIds: a.groups.filter((g: any) => g.roles.includes(id)).map((g: any) => g.id) }))
    const rolesOf = (a: any, kind: 'users' | 'groups', id: number) => a[kind].find((x: any) => x.id === id)?.roles ?? []
    const inAccess = (e: ApiEvent) => e.project === 'access'

    await send('POST', `${A}/access`, { roles: [member], users: [cid], groups: [team] })
    const given = await access()
    // (Creating the project gave the walker its Owner role, with an event of this kind too.)
    expected.push({ kind: 'project-access-added', subject: (e) => inAccess(e) && (e.data?.roles as any[]).some((r) => r.groupIds.includes(team)), project: 'access', data: { roles: byRole(given).filter((r) => r.roleId === member) } })
    // The walker stays an owner: a project keeps one.
    await send('PUT', `${A}/access`, { roles: [{ id: owner, users: [walkerId, cid] }, { id: member, groups: [team] }] })
    const set = await access()
    expected.push({ kind: 'project-access-updated', subject: inAccess, project: 'access', data: { roles: byRole(set) }, preData: { roles: byRole(given) } })

    await send('PUT', `${A}/users/${cid}/roles`, { roles: [owner, member] })
    const userRoles = await access()
    expected.push({ kind: 'project-access-user-roles-updated', subject: inAccess, project: 'access', data: { roles: rolesOf(userRoles, 'users', cid), userId: cid }, preData: { roles: rolesOf(set, 'users', cid), userId: cid } })
    await send('DELETE', `${A}/users/${cid}/roles`)
    expect(rolesOf(await access(), 'users', cid)).toEqual([])
    expected.push({ kind: 'project-access-user-roles-deleted', subject: inAccess, project: 'access', data: null, preData: { roles: rolesOf(userRoles, 'users', cid), userId: cid } })
    await send('PUT', `${A}/groups/${team}/roles`, { roles: [owner, member] })
    const groupRoles = await access()
    expected.push({ kind: 'project-access-group-roles-updated', subject: inAccess, project: 'access', data: { roles: rolesOf(groupRoles, 'groups', team), groupId: team }, preData: { roles: rolesOf(set, 'groups', team), groupId: team } })
    await send('DELETE', `${A}/groups/${team}/roles`)
    expect(rolesOf(await access(), 'groups', team)).toEqual([])
    expected.push({ kind: 'project-access-group-roles-deleted', subject: inAccess, project: 'access', data: null, preData: { roles: rolesOf(groupRoles, 'groups', team), groupId: team } })

    // One role at a time (Unleash's older routes): the role named, and for a change the roles held before.
    for (const [kind, id, key, extra] of [['users', cid, { userId: cid }, {}], ['groups', team, { groupId: team }, { projectId: 'access' }]] as const) {
      const one = kind === 'users' ? 'user' : 'group'
      await send('POST', `${A}/${kind}/${id}/roles/${member}`)
      expect(rolesOf(await access(), kind, id)).toEqual([member])
      expected.push({ kind: `project-${one}-added`, subject: inAccess, project: 'access', data: { ...key, ...extra, roleId: member, roleName: roleName(member) } })
      await send('PUT', `${A}/${kind}/${id}/roles/${owner}`)
      expect(rolesOf(await access(), kind, id)).toEqual([owner])
      expected.push({ kind: `project-${one}-role-changed`, subject: inAccess, project: 'access', data: { ...key, ...extra, roleId: owner, roleName: roleName(owner) }, preData: { ...key, ...extra, roleId: member, roleName: roleName(member), roles: [member] } })
      await send('DELETE', `${A}/${kind}/${id}/roles/${owner}`)
      expect(rolesOf(await access(), kind, id)).toEqual([])
      expected.push({ kind: `project-${one}-removed`, subject: inAccess, project: 'access', data: null, preData: { ...key, ...extra, roleId: owner, roleName: roleName(owner) } })
    }
  })

  it('maintenance mode: on, then off', async () => {
    await send('POST', '/api/admin/maintenance', { enabled: true })
    await send('POST', '/api/admin/maintenance', { enabled: false })
    expected.push({ kind: 'maintenance-mode-toggled', subject: (e) => e.data?.enabled === true, data: { enabled: true }, preData: { enabled: false } })
    expected.push({ kind: 'maintenance-mode-toggled', subject: (e) => e.data?.enabled === false, data: { enabled: false }, preData: { enabled: true } })
  })

  it('banners: create, update, switch off, delete', async () => {
    const created = await send('POST', '/api/admin/banners', { message: 'Maintenance tonight', variant: 'warning', link: 'https://status.example.com', linkText: 'Status' })
    const banner = async () => (await get('/api/admin/banners')).banners.find((b: any) => b.id === created.id)
    expect(await banner()).toEqual(created)
    const isBanner = (e: ApiEvent) => (e.data ?? e.preData)?.id === created.id
    expected.push({ kind: 'banner-created', subject: isBanner, data: created })
    const updated = await send('PUT', `/api/admin/banners/${created.id}`, { message: 'Maintenance at ten', variant: 'info', link: 'https://status.example.com', linkText: 'Status' })
    expect(await banner()).toEqual(updated)
    expected.push({ kind: 'banner-updated', subject: (e) => isBanner(e) && e.data?.enabled === true, data: updated, preData: created })
    const off = await send('POST', `/api/admin/banners/${created.id}/off`)
    expected.push({ kind: 'banner-updated', subject: (e) => isBanner(e) && e.data?.enabled === false, data: off, preData: updated })
    await send('DELETE', `/api/admin/banners/${created.id}`)
    expected.push({ kind: 'banner-deleted', subject: isBanner, data: null, preData: off })
  })

  it('users: create, update, delete', async () => {
    const created = await send('POST', '/api/admin/user-admin', { username: 'dana', email: 'dana@example.com', name: 'Dana', rootRole: 'Viewer', sendEmail: false })
    const user = async () => get(`/api/admin/user-admin/${created.id}`)
    const before = await user()
    // A user's events carry the user as the user route answers it, without what is derived or changes with no event of
    // its own (the image, sign-in attempts, when last seen, the account type, permissions).
    const asEvent = (u: any) => ({ id: u.id, name: u.name, username: u.username, email: u.email ?? null, rootRole: u.rootRole, createdAt: u.createdAt })
    const isUser = (e: ApiEvent) => (e.data ?? e.preData)?.id === created.id
    expected.push({ kind: 'user-created', subject: isUser, data: asEvent(before) })
    await send('PUT', `/api/admin/user-admin/${created.id}`, { name: 'Dana Explorer', rootRole: 'Editor' })
    const after = await user()
    expected.push({ kind: 'user-updated', subject: isUser, data: asEvent(after), preData: asEvent(before) })
    await send('DELETE', `/api/admin/user-admin/${created.id}`)
    expected.push({ kind: 'user-deleted', subject: isUser, data: null, preData: asEvent(after) })
  })

  it("service accounts: create, update, a token made and deleted, delete; the walker's own token made and deleted", async () => {
    const SA = '/api/admin/service-account'
    const created = await send('POST', SA, { name: 'Deployer', username: 'deployer', rootRole: 'Editor' })
    const account = async () => (await get(SA)).serviceAccounts.find((a: any) => a.id === created.id)
    expect(await account()).toEqual(created)
    // A service account's events carry it as its routes answer it, without what is derived (its image, when last seen,
    // `isAPI`) or has events of its own (its tokens).
    const asEvent = (a: any) => ({ id: a.id, name: a.name, username: a.username, rootRole: a.rootRole, createdAt: a.createdAt })
    const isAccount = (e: ApiEvent) => (e.data ?? e.preData)?.id === created.id
    expected.push({ kind: 'service-account-created', subject: isAccount, data: asEvent(created) })
    const updated = await send('PUT', `${SA}/${created.id}`, { name: 'Deploy bot', rootRole: 'Viewer' })
    expect(await account()).toEqual(updated)
    expected.push({ kind: 'service-account-updated', subject: isAccount, data: asEvent(updated), preData: asEvent(created) })

    // A personal access token's events: the token as its routes list it, never its secret, nor when it was last used.
    const asToken = ({ secret: _secret, seenAt: _seenAt, ...token }: any) => token
    const isToken = (id: number) => (e: ApiEvent) => (e.data ?? e.preData)?.id === id
    const expiresAt = new Date(now + 30 * DAY).toISOString()
    const token = await send('POST', `${SA}/${created.id}/token`, { description: 'deploys', expiresAt })
    expect((await get(`${SA}/${created.id}/token`)).pats).toEqual([{ ...asToken(token), seenAt: null }])
    expected.push({ kind: 'pat-created', subject: isToken(token.id), data: asToken(token) })
    await send('DELETE', `${SA}/${created.id}/token/${token.id}`)
    expected.push({ kind: 'pat-deleted', subject: isToken(token.id), data: null, preData: asToken(token) })
    const own = await send('POST', '/api/admin/user/tokens', { description: 'my scripts', expiresAt })
    expect((await get('/api/admin/user/tokens')).pats).toEqual([{ ...asToken(own), seenAt: null }])
    expected.push({ kind: 'pat-created', subject: isToken(own.id), data: asToken(own) })
    await send('DELETE', `/api/admin/user/tokens/${own.id}`)
    expected.push({ kind: 'pat-deleted', subject: isToken(own.id), data: null, preData: asToken(own) })

    const last = await account()
    await send('DELETE', `${SA}/${created.id}`)
    expected.push({ kind: 'service-account-deleted', subject: isAccount, data: null, preData: asEvent(last) })
  })

  it("API tokens: create, the expiry changed, delete", async () => {
    await send('POST', '/api/admin/projects', { id: 'vault', name: 'Vault' })
    const created = await send('POST', '/api/admin/api-tokens', { tokenName: 'vault-reader', type: 'client', environment: 'development', projects: ['vault'] })
    const listed = async () => (await get('/api/admin/api-tokens')).tokens.find((x: any) => x.tokenName === 'vault-reader')
    // An API token's events: the token as the listing shows it, without its secret (not even masked), its one `project`
    // (of `projects`), when it was last used and its alias.
    const asEvent = ({ secret: _secret, project: _project, seenAt: _seenAt, alias: _alias, ...token }: any) => token
    expect(asEvent(await listed())).toEqual(asEvent(created))
    const isToken = (e: ApiEvent) => (e.data ?? e.preData)?.tokenName === 'vault-reader'
    const scope = { project: 'vault', environment: 'development' }
    expected.push({ kind: 'api-token-created', subject: isToken, ...scope, data: asEvent(created) })
    await send('PUT', `/api/admin/api-tokens/${encodeURIComponent(created.secret)}`, { expiresAt: new Date(now + 7 * DAY).toISOString() })
    const updated = await listed()
    expect(updated.expiresAt).not.toBeNull()
    expected.push({ kind: 'api-token-updated', subject: isToken, ...scope, data: asEvent(updated), preData: asEvent(created) })
    await send('DELETE', `/api/admin/api-tokens/${encodeURIComponent(created.secret)}`)
    expected.push({ kind: 'api-token-deleted', subject: isToken, ...scope, data: null, preData: asEvent(updated) })
  })

  it('signal endpoints and their tokens: create, update, switch off, rename, delete', async () => {
    const E = '/api/admin/signal-endpoints'
    // An endpoint's events carry it as its routes answer it, without its tokens (events of their own) and its URL (in the
    // answers of its writes only).
    const asEvent = ({ tokens: _tokens, url: _url, ...endpoint }: any) => endpoint
    const created = await send('POST', E, { name: 'alerts', description: 'From the pager' })
    const endpoint = async () => (await get(E)).signalEndpoints.find((x: any) => x.id === created.id)
    expect(asEvent(await endpoint())).toEqual(asEvent(created))
    const isEndpoint = (e: ApiEvent) => (e.data ?? e.preData)?.id === created.id && !('signalEndpointId' in ((e.data ?? e.preData) as object))
    expected.push({ kind: 'signal-endpoint-created', subject: isEndpoint, data: asEvent(created) })
    const updated = await send('PUT', `${E}/${created.id}`, { name: 'pager-alerts', description: 'From the pager, critical' })
    expected.push({ kind: 'signal-endpoint-updated', subject: (e) => isEndpoint(e) && e.data?.enabled === true, data: asEvent(updated), preData: asEvent(created) })
    const off = await send('POST', `${E}/${created.id}/off`)
    expect(off.enabled).toBe(false)
    expected.push({ kind: 'signal-endpoint-updated', subject: (e) => isEndpoint(e) && e.data?.enabled === false, data: asEvent(off), preData: asEvent(updated) })

    // A token's events: the token as its routes list it, never the token itself.
    const { token: secret, ...token } = await send('POST', `${E}/${created.id}/tokens`, { name: 'grafana' })
    expect(secret).toEqual(expect.any(String))
    expect(await get(`${E}/${created.id}/tokens`)).toEqual({ signalEndpointTokens: [token] })
    const isToken = (e: ApiEvent) => (e.data ?? e.preData)?.id === token.id && (e.data ?? e.preData)?.signalEndpointId === created.id
    expected.push({ kind: 'signal-endpoint-token-created', subject: isToken, data: token })
    const renamed = await send('PUT', `${E}/${created.id}/tokens/${token.id}`, { name: 'grafana-prod' })
    expected.push({ kind: 'signal-endpoint-token-updated', subject: isToken, data: renamed, preData: token })
    await send('DELETE', `${E}/${created.id}/tokens/${token.id}`)
    expected.push({ kind: 'signal-endpoint-token-deleted', subject: isToken, data: null, preData: renamed })

    const last = await endpoint()
    await send('DELETE', `${E}/${created.id}`)
    expected.push({ kind: 'signal-endpoint-deleted', subject: isEndpoint, data: null, preData: asEvent(last) })
  })

  it("a project's action sets: create, update, switch off, delete", async () => {
    await send('POST', '/api/admin/projects', { id: 'pager', name: 'Pager' })
    await send('POST', F('pager'), { name: 'maintenance-mode' })
    const actor = (await send('POST', '/api/admin/service-account', { name: 'Pager bot', username: 'pager-bot', rootRole: 'Editor' })).id as number
    const source = (await send('POST', '/api/admin/signal-endpoints', { name: 'incidents' })).id as number
    const A = '/api/admin/projects/pager/actions'
    const body = (name: string, action: string) => ({
      name,
      actorId: actor,
      match: { source: 'signal-endpoint', sourceId: source, payload: { severity: { operator: 'IN', values: ['critical'] } } },
      actions: [{ action, sortOrder: 0, executionParams: { environment: 'production', featureName: 'maintenance-mode' } }],
    })
    const created = await send('POST', A, body('on-incident', 'TOGGLE_FEATURE_ON'))
    const set = async () => (await get(A)).actions.find((x: any) => x.id === created.id)
    expect(await set()).toEqual(created)
    const isSet = (e: ApiEvent) => (e.data ?? e.preData)?.id === created.id
    expected.push({ kind: 'actions-created', subject: isSet, project: 'pager', data: created })
    const updated = await send('PUT', `${A}/${created.id}`, body('on-incident-off', 'TOGGLE_FEATURE_OFF'))
    expect(await set()).toEqual(updated)
    expected.push({ kind: 'actions-updated', subject: (e) => isSet(e) && e.data?.enabled === true, project: 'pager', data: updated, preData: created })
    const off = await send('POST', `${A}/${created.id}/off`)
    expected.push({ kind: 'actions-updated', subject: (e) => isSet(e) && e.data?.enabled === false, project: 'pager', data: off, preData: updated })
    await send('DELETE', `${A}/${created.id}`)
    expected.push({ kind: 'actions-deleted', subject: isSet, project: 'pager', data: null, preData: off })
  })

  it('invite links: create, switch off and on, and someone signs up with one', async () => {
    const L = '/api/admin/invite-link/tokens'
    const created = await send('POST', L, { name: 'Support team', expiresAt: new Date(now + 14 * DAY).toISOString(), role: 'Editor' })
    const masked = (await get(L)).tokens.find((l: any) => l.name === 'Support team').secret as string
    const link = () => get(`${L}/${encodeURIComponent(masked)}`)
    // A link's events carry it as its routes answer it, without its secret (its first characters, as the listing shows,
    // name it), its URL (in the creation's answer only) and who signed up with it (events of their own).
    const asEvent = ({ url: _url, users: _users, ...l }: any) => ({ ...l, secret: masked })
    expect(asEvent(await link())).toEqual(asEvent(created))
    const isLink = (e: ApiEvent) => (e.data ?? e.preData)?.name === 'Support team'
    expected.push({ kind: 'public-signup-token-created', subject: isLink, data: asEvent(created) })
    const off = await send('PUT', `${L}/${encodeURIComponent(masked)}`, { enabled: false })
    expect(await link()).toEqual(off)
    expected.push({ kind: 'public-signup-token-updated', subject: (e) => isLink(e) && e.data?.enabled === false, data: asEvent(off), preData: asEvent(created) })
    const on = await send('PUT', `${L}/${encodeURIComponent(masked)}`, { enabled: true, expiresAt: new Date(now + 20 * DAY).toISOString() })
    expected.push({ kind: 'public-signup-token-updated', subject: (e) => isLink(e) && e.data?.enabled === true, data: asEvent(on), preData: asEvent(off) })

    const joined = await send('POST', `/invite/${created.secret}/signup`, { name: 'Sam', email: 'sam@example.com', password: 'sign me up please' })
    expect((await link()).users).toEqual([{ id: joined.id, name: 'Sam', email: 'sam@example.com', username: null, createdAt: joined.createdAt }])
    // Who joined, by the link they used (named as the listing names it) and the role it gave them; the new user acts.
    expected.push({
      kind: 'public-signup-token-user-added',
      subject: (e) => e.data?.userId === joined.id,
      data: { secret: masked, name: 'Support team', userId: joined.id, email: 'sam@example.com', role: created.role.name },
      by: { createdBy: 'sam@example.com', createdByUserId: joined.id },
    })
  })

  it("projects: created, its settings changed, an environment added and its default strategy set", async () => {
    const created = await send('POST', '/api/admin/projects', { id: 'orchard', name: 'Orchard', description: 'Fruit', environments: ['development'] })
    expected.push({ kind: 'project-created', subject: (e) => e.project === 'orchard', project: 'orchard', data: created })
    // A project's settings as its overview answers them.
    const settings = async () => {
      const p = await get('/api/admin/projects/orchard')
      return { id: 'orchard', name: p.name, description: p.description, mode: p.mode, defaultStickiness: p.defaultStickiness, featureLimit: p.featureLimit, featureNaming: p.featureNaming }
    }
    const before = await settings()
    await send('PUT', '/api/admin/projects/orchard', { name: 'The orchard', description: 'Apples and pears', mode: 'protected', featureNaming: { pattern: 'fruit-.*', example: 'fruit-apple', description: 'Starts with fruit-' } })
    const after = await settings()
    expect(after).toMatchObject({ name: 'The orchard', mode: 'protected', featureNaming: { pattern: 'fruit-.*' } })
    expected.push({ kind: 'project-updated', subject: (e) => e.project === 'orchard', project: 'orchard', data: after, preData: before })

    await send('POST', '/api/admin/projects/orchard/environments', { environment: 'production' })
    const environment = async (name: string) => (await get('/api/admin/environments/project/orchard')).environments.find((e: any) => e.name === name)
    expect(await environment('production')).toBeDefined()
    // The environment as the project has it: its change-request settings (a new one needs one approval, as Unleash).
    expected.push({ kind: 'project-environment-added', subject: (e) => e.project === 'orchard', project: 'orchard', environment: 'production', data: { environment: 'production', changeRequestsEnabled: false, requiredApprovals: 1 } })
    const previous = (await environment('production')).defaultStrategy ?? null
    await send('PUT', '/api/admin/projects/orchard/environments/production/default-strategy', { name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'default', groupId: '' } })
    const strategy = (await environment('production')).defaultStrategy
    expect(strategy).toMatchObject({ name: 'flexibleRollout' })
    expected.push({ kind: 'default-strategy-updated', subject: (e) => e.project === 'orchard', project: 'orchard', environment: 'production', data: strategy, ...(previous ? { preData: previous } : {}) })
  })

  it('segments: create, update, delete', async () => {
    const created = await send('POST', '/api/admin/segments', { name: 'gold-members', description: 'Who pays most', constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }] })
    const segment = () => get(`/api/admin/segments/${created.id}`)
    // A segment's events carry it as its route answers it, without when and by whom it was last changed.
    const asEvent = (s: any) => ({ id: s.id, name: s.name, description: s.description, project: s.project ?? null, constraints: s.constraints, createdAt: s.createdAt, createdBy: s.createdBy })
    const first = await segment()
    const isSegment = (e: ApiEvent) => (e.data ?? e.preData)?.id === created.id
    expected.push({ kind: 'segment-created', subject: isSegment, data: asEvent(first) })
    await send('PUT', `/api/admin/segments/${created.id}`, { name: 'gold-members', description: 'Who pays most, and more', constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2', '3'] }] })
    const updated = await segment()
    expected.push({ kind: 'segment-updated', subject: isSegment, data: asEvent(updated), preData: asEvent(first) })
    await send('DELETE', `/api/admin/segments/${created.id}`)
    expected.push({ kind: 'segment-deleted', subject: isSegment, data: null, preData: asEvent(updated) })
  })

  it('integrations: a webhook created, updated, deleted', async () => {
    const created = await send('POST', '/api/admin/addons', { provider: 'webhook', enabled: false, description: 'To the chat', parameters: { url: 'https://hooks.example.com/flagpost' }, events: ['feature-created'], projects: [], environments: [] })
    const addon = () => get(`/api/admin/addons/${created.id}`)
    // An integration's events carry it as its routes answer it (its secrets masked as there), without when it was made.
    const asEvent = ({ createdAt: _createdAt, ...a }: any) => a
    const first = await addon()
    const isAddon = (e: ApiEvent) => (e.data ?? e.preData)?.id === created.id
    expected.push({ kind: 'addon-config-created', subject: isAddon, data: asEvent(first) })
    await send('PUT', `/api/admin/addons/${created.id}`, { provider: 'webhook', enabled: false, description: 'To the team chat', parameters: { url: 'https://hooks.example.com/flagpost' }, events: ['feature-created', 'feature-archived'], projects: [], environments: [] })
    const updated = await addon()
    expected.push({ kind: 'addon-config-updated', subject: isAddon, data: asEvent(updated), preData: asEvent(first) })
    await send('DELETE', `/api/admin/addons/${created.id}`)
    expected.push({ kind: 'addon-config-deleted', subject: isAddon, data: null, preData: asEvent(updated) })
  })

  it('change requests: settings changed, one proposed, sent to review, approved by two and applied; one rejected, one cancelled', async () => {
    await send('POST', '/api/admin/projects', { id: 'review', name: 'Review', changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const P = '/api/admin/projects/review'
    await send('PUT', `${P}/change-requests/config`, { environment: 'production', changeRequestsEnabled: true, requiredApprovals: 2 })
    // Unleash's shape: the environment's settings, before and after.
    expected.push({ kind: 'change-request-configuration-updated', subject: (e) => e.project === 'review', project: 'review', environment: 'production', data: { changeRequestsEnabled: true, requiredApprovals: 2 }, preData: { changeRequestsEnabled: true, requiredApprovals: 1 } })
    await send('POST', F('review'), { name: 'reviewed' })
    // A second reviewer: a service account with the Admin root role, through its token.
    const reviewer = await send('POST', '/api/admin/service-account', { name: 'Reviewer', username: 'reviewer', rootRole: 'Admin' })
    const reviewerToken = (await send('POST', `/api/admin/service-account/${reviewer.id}/token`, { description: 'reviews', expiresAt: new Date(now + 30 * DAY).toISOString() })).secret as string
    const inProduction = { project: 'review', environment: 'production' }
    const isRequest = (id: number) => (e: ApiEvent) => (e.data ?? e.preData)?.changeRequestId === id
    const request = (id: number) => get(`${P}/change-requests/${id}`)
    const propose = async () => (await send('POST', `${P}/environments/production/change-requests`, [{ feature: 'reviewed', action: 'updateEnabled', payload: { enabled: true } }])).id as number
    const state = (id: number, to: string, token?: string) => send('PUT', `${P}/change-requests/${id}/state`, { state: to }, token ? { token } : {})
    // Unleash's shapes: which request and its state, after (with what the move adds) and before.
    const moved = (id: number, from: string, to: string, extra: Record<string, unknown> = {}) => ({ data: { changeRequestId: id, state: to, ...extra }, preData: { changeRequestId: id, state: from } })
    // The admin token acts under its name (the first of INIT_ADMIN_API_TOKENS).
    const token = { createdBy: 'init-admin-token-1', createdByUserId: ADMIN_TOKEN_USER_ID }

    const applied = await propose()
    const [change] = (await request(applied)).features.flatMap((f: any) => f.changes)
    expect((await request(applied)).state).toBe('Draft')
    expected.push({ kind: 'change-request-created', subject: isRequest(applied), ...inProduction, data: { changeRequestId: applied, state: 'Draft' } })
    expected.push({ kind: 'change-added', subject: isRequest(applied), featureName: 'reviewed', ...inProduction, data: { changeRequestId: applied, change: { id: change.id, action: change.action, payload: change.payload } } })
    await state(applied, 'In review')
    expected.push({ kind: 'change-request-sent-to-review', subject: isRequest(applied), ...inProduction, ...moved(applied, 'Draft', 'In review') })
    await send('POST', `${P}/change-requests/${applied}/approve`, undefined, { token: TOKEN })
    expect((await request(applied)).state).toBe('In review')
    expected.push({ kind: 'change-request-approval-added', subject: isRequest(applied), ...inProduction, data: { changeRequestId: applied, approvals: 1, minApprovals: 2 }, by: token })
    await send('POST', `${P}/change-requests/${applied}/approve`, undefined, { token: reviewerToken })
    expect((await request(applied)).state).toBe('Approved')
    expected.push({ kind: 'change-request-approved', subject: isRequest(applied), ...inProduction, ...moved(applied, 'In review', 'Approved', { approvals: 2, minApprovals: 2 }), by: { createdBy: 'reviewer', createdByUserId: reviewer.id } })
    await state(applied, 'Applied')
    expect((await get(`${F('review')}/reviewed`)).environments.find((e: any) => e.name === 'production').enabled).toBe(true)
    expected.push({ kind: 'change-request-applied', subject: isRequest(applied), ...inProduction, ...moved(applied, 'Approved', 'Applied', { changes: 1 }) })

    const rejected = await propose()
    await state(rejected, 'In review')
    await state(rejected, 'Rejected', TOKEN)
    expect((await request(rejected)).state).toBe('Rejected')
    expected.push({ kind: 'change-request-rejected', subject: isRequest(rejected), ...inProduction, ...moved(rejected, 'In review', 'Rejected'), by: token })
    const cancelled = await propose()
    await state(cancelled, 'Cancelled')
    expect((await request(cancelled)).state).toBe('Cancelled')
    expected.push({ kind: 'change-request-cancelled', subject: isRequest(cancelled), ...inProduction, ...moved(cancelled, 'Draft', 'Cancelled') })
  })

  it('an application, first registered by an SDK, folded in the background', async () => {
    const client = (await send('POST', '/api/admin/api-tokens', { tokenName: 'catalogue-sdk', type: 'client', environment: 'development', projects: ['*'] })).secret as string
    await send('POST', '/api/client/register', { appName: 'catalogue-app', instanceId: 'catalogue-1', sdkVersion: 'unleash-client-node:6.1.0', strategies: ['default', 'flexibleRollout'], started: new Date(now).toISOString(), interval: 15_000 }, { token: client })
    const application = async () => (await get('/api/admin/metrics/applications?query=catalogue-app')).applications.find((a: any) => a.appName === 'catalogue-app')
    await expect.poll(application, { timeout: 10_000 }).toBeDefined()
    const app = await application()
    // An application's events carry what its SDK registered, as the listing answers it, without when it was last seen and
    // what it reported metrics for (`usage`); the token that reported it first is its author.
    expected.push({
      kind: 'application-created',
      subject: (e) => e.data?.appName === 'catalogue-app',
      environment: 'development',
      data: { appName: app.appName, sdkVersion: app.sdkVersion, strategies: app.strategies, createdAt: app.createdAt },
      by: { createdBy: 'catalogue-sdk', createdByUserId: expect.any(Number) },
    })
  })

  it('change requests: a change edited and one discarded, a draft discarded, and three scheduled: applied, failed and suspended by the job at the server\'s start', async () => {
    await send('POST', '/api/admin/projects', { id: 'gated', name: 'Gated', changeRequestEnvironments: [{ name: 'production', requiredApprovals: 1 }] })
    const P = '/api/admin/projects/gated'
    for (const name of ['gate', 'gate-child', 'gate-doomed']) await send('POST', F('gated'), { name })
    await send('POST', `${F('gated')}/gate-child/dependencies`, { feature: 'gate' })
    const strategy = await send('POST', `${F('gated')}/gate-doomed/environments/production/strategies`, { name: 'flexibleRollout', parameters: { rollout: '10', stickiness: 'default', groupId: 'gate-doomed' } })
    const propose = async (changes: unknown[]) => (await send('POST', `${P}/environments/production/change-requests`, changes)).id as number
    const request = (id: number) => get(`${P}/change-requests/${id}`)
    const changesOf = (cr: any) => cr.features.flatMap((f: any) => f.changes.map((c: any) => ({ feature: f.name, ...c })))
    const asChange = (c: any) => ({ id: c.id, action: c.action, payload: c.payload })
    const isRequest = (id: number) => (e: ApiEvent) => (e.data ?? e.preData)?.changeRequestId === id
    const inProduction = { project: 'gated', environment: 'production' }

    // A draft: one change edited, another discarded; then a draft discarded whole.
    const draft = await propose([{ feature: 'gate', action: 'patchVariant', payload: { variants: [{ name: 'blue' }] } }, { feature: 'gate', action: 'updateEnabled', payload: { enabled: true } }])
    const [variants, enable] = changesOf(await request(draft))
    await send('PUT', `${P}/change-requests/${draft}/changes/${variants.id}`, { feature: 'gate', action: 'patchVariant', payload: { variants: [{ name: 'green' }] } })
    const edited = changesOf(await request(draft)).find((c: any) => c.id === variants.id)
    expected.push({ kind: 'change-edited', subject: isRequest(draft), featureName: 'gate', ...inProduction, data: { changeRequestId: draft, change: asChange(edited) }, preData: { changeRequestId: draft, change: asChange(variants) } })
    await send('DELETE', `${P}/change-requests/${draft}/changes/${enable.id}`)
    expect(changesOf(await request(draft)).map((c: any) => c.id)).toEqual([variants.id])
    // Unleash's shape: the change's id after, the change before.
    expected.push({ kind: 'change-discarded', subject: isRequest(draft), featureName: 'gate', ...inProduction, data: { changeRequestId: draft, changeId: enable.id }, preData: { changeRequestId: draft, change: asChange(enable) } })
    const whole = await request(draft)
    await send('DELETE', `${P}/change-requests/${draft}`)
    expected.push({ kind: 'change-request-discarded', subject: isRequest(draft), ...inProduction, data: null, preData: { changeRequestId: draft, ...whole } })

    // Three requests, approved (by the admin token: another party) and scheduled an hour ahead.
    const at = new Date(now + 3_600_000).toISOString()
    const schedule = async (changes: unknown[]) => {
      const id = await propose(changes)
      await send('PUT', `${P}/change-requests/${id}/state`, { state: 'In review' })
      await send('POST', `${P}/change-requests/${id}/approve`, undefined, { token: TOKEN })
      await send('PUT', `${P}/change-requests/${id}/state`, { state: 'Scheduled', scheduledAt: at })
      const scheduled = await request(id)
      expect(scheduled).toMatchObject({ state: 'Scheduled', schedule: { scheduledAt: at, status: 'pending' } })
      expected.push({ kind: 'change-request-scheduled', subject: isRequest(id), ...inProduction, data: { changeRequestId: id, state: scheduled.state, scheduledDate: scheduled.schedule.scheduledAt }, preData: { changeRequestId: id, state: 'Approved' } })
      return id
    }
    const applied = await schedule([{ feature: 'gate', action: 'updateEnabled', payload: { enabled: true } }])
    // The dependency it removes is removed directly meanwhile: applying it fails.
    const failing = await schedule([{ feature: 'gate-child', action: 'deleteDependency', payload: { feature: 'gate' } }])
    await send('DELETE', `${F('gated')}/gate-child/dependencies/gate`)
    // The strategy it changes is changed directly meanwhile: a conflict, so the job suspends it.
    const suspended = await schedule([{ feature: 'gate-doomed', action: 'updateStrategy', payload: { id: strategy.id, name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'gate-doomed' } } }])
    await send('PUT', `${F('gated')}/gate-doomed/environments/production/strategies/${strategy.id}`, { name: 'flexibleRollout', parameters: { rollout: '20', stickiness: 'default', groupId: 'gate-doomed' } })

    await restartLater(2 * 3_600_000)
    await expect.poll(async () => (await request(applied)).state, { timeout: 10_000 }).toBe('Applied')
    await expect.poll(async () => (await request(failing)).schedule?.status, { timeout: 10_000 }).toBe('failed')
    await expect.poll(async () => (await request(suspended)).schedule?.status, { timeout: 10_000 }).toBe('suspended')
    expect((await get(`${F('gated')}/gate`)).environments.find((e: any) => e.name === 'production').enabled).toBe(true)
    expected.push({ kind: 'change-request-scheduled-application-success', subject: isRequest(applied), ...inProduction, data: { changeRequestId: applied, state: (await request(applied)).state, scheduledDate: at, changes: 1 }, preData: { changeRequestId: applied, state: 'Scheduled' } })
    const failed = (await request(failing)).schedule
    expected.push({ kind: 'change-request-scheduled-application-failure', subject: isRequest(failing), ...inProduction, data: { changeRequestId: failing, scheduledDate: failed.scheduledAt, failureReason: failed.failureReason, reason: failed.reason } })
    const held = (await request(suspended)).schedule
    expected.push({ kind: 'change-request-schedule-suspended', subject: isRequest(suspended), ...inProduction, data: { changeRequestId: suspended, reason: held.reason, scheduledDate: held.scheduledAt, scheduledBy: held.scheduledBy }, by: { createdBy: 'system', createdByUserId: expect.any(Number) } })
  })

  it("the potentially-stale job, run by the server's start with its clock past a release flag's lifetime", async () => {
    await send('POST', F('shop'), { name: 'banner', type: 'release' })
    const lifetime = (await get('/api/admin/feature-types')).types.find((t: any) => t.id === 'release').lifetimeDays as number
    await restartLater((lifetime + 1) * DAY)
    await expect.poll(async () => (await get(`${F('shop')}/banner`)).potentiallyStale, { timeout: 10_000 }).toBe(true)
    expected.push({ kind: 'feature-potentially-stale-on', subject: (e) => e.featureName === 'banner', featureName: 'banner', project: 'shop', data: { name: 'banner', potentiallyStale: true }, by: { createdBy: 'system', createdByUserId: expect.any(Number) } })
  })
})

describe('each walked kind, read back', () => {
  it('walks kinds of the catalogue (src/events/types.ts), each once', () => {
    expect(WALKED.filter((k) => !(EVENT_TYPES as readonly string[]).includes(k))).toEqual([])
    expect(new Set(WALKED).size).toBe(WALKED.length)
  })

  it('walks every kind of the catalogue an operation writes', () => {
    const covered = new Set<string>([...WALKED, ...UNWRITTEN])
    expect(EVENT_TYPES.filter((k) => !covered.has(k))).toEqual([])
    expect(UNWRITTEN.filter((k) => (WALKED as readonly string[]).includes(k))).toEqual([])
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
