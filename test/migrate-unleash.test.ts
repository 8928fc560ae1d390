import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { nodeGet, type Resolve } from '../src/webhook-node.js'
import { createTestApp, type TestApp } from './helpers/app.js'
import { createFlag } from './helpers/factories.js'
import { createUser } from './helpers/factories.js'

// The migration from a running Unleash 8.2 (POST /api/admin/migrate/unleash): a fake Unleash serves its admin API's
// answers over HTTP, and the migration writes them into a fresh Flagpost. admin-api.json is what Unleash 8.2 OSS
// answered (recorded by npm run compat:unleash -- --record); Unleash OSS has one project and two environments, so
// admin-api-hand-written.json (in the shapes of Unleash's OpenAPI document) covers several projects, environments
// and Enterprise-only settings.

const load = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/unleash-8.2/${name}`, import.meta.url), 'utf8')).answers as Record<string, unknown>
const recorded = load('admin-api.json')
const handWritten = load('admin-api-hand-written.json')
let fixtures = handWritten
const TOKEN = '*:*.unleash-admin-secret-4f1e2d'

let server: Server
let base: string
/** Paths whose answer a test replaces: a status and a body. */
let overrides: Record<string, { status: number; body: string; headers?: Record<string, string> }> = {}
let requests: { path: string; authorization: string | undefined }[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push({ path: req.url!, authorization: req.headers.authorization })
    const override = overrides[req.url!]
    if (override) return void res.writeHead(override.status, { 'content-type': 'application/json', ...override.headers }).end(override.body)
    if (req.headers.authorization !== TOKEN) return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `bad token ${req.headers.authorization}` }))
    const answer = fixtures[req.url!]
    if (answer === undefined) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"name":"NotFoundError"}')
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://unleash.test:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise((r) => server.close(r)))
afterEach(() => {
  fixtures = handWritten
  overrides = {}
  requests = []
})

/** "DNS" of the fake Unleash's host name: loopback, reached only where private targets are allowed. */
const resolve: Resolve = async () => [{ address: '127.0.0.1', family: 4 }]
const appWith = (allowPrivateTargets = true) => createTestApp({ delivery: { allowPrivateTargets, get: nodeGet(resolve) } })

const migrate = (t: TestApp, body: Record<string, unknown>, token?: string) => t.call('POST', '/api/admin/migrate/unleash', { body: { url: base, token: TOKEN, ...body }, token })

describe('migrating from Unleash 8.2', () => {
  it('carries a client token with its secret, stored hashed, so that its SDK keeps working, and never repeats a secret', async () => {
    const t = await appWith()
    try {
      const secret = '*:production.0123456789abcdef0123456789abcdef'
      const shortSecret = '*:development.tooshort'
      overrides['/api/admin/api-tokens'] = {
        status: 200,
        body: JSON.stringify({
          tokens: [
            { tokenName: 'listed', type: 'client', projects: ['*'], environment: 'production', secret, createdAt: '2026-01-01T00:00:00.000Z', expiresAt: '2099-01-01T00:00:00.000Z' },
            { tokenName: 'hashed-in-unleash', type: 'client', projects: ['*'], environment: 'production', secret: '*:production.c0ffee', secure: true },
            { tokenName: 'guessable', type: 'frontend', projects: ['*'], environment: 'development', secret: shortSecret },
            { tokenName: 'nowhere', type: 'client', projects: ['no-such-project'], environment: 'production', secret: 'no-such-project:production.0123456789abcdef0123' },
            { tokenName: 'ops', type: 'admin', projects: ['*'], environment: '*', secret: '*:*.5c1e0a7b93d24f6e8a0b7c2d9e4f1a3b6c8d0e2f4a6b8c0d2e4f6a8b0c2d4e6f' },
            // A name the token routes refuse, and an expiry no timestamp column takes (not carried / no expiry; never a 500).
            { tokenName: 'n'.repeat(5000), type: 'client', projects: ['*'], environment: 'production', secret: '*:production.1111111111111111111111111111aaaa' },
          ],
        }),
      }
      const dry = await migrate(t, { dryRun: true })
      expect(dry.status, dry.text).toBe(200)
      expect(dry.body.plan.counts.apiTokens).toBe(1)
      const notCarried = dry.body.plan.notCarried.join('\n')
      expect(notCarried).toContain('client token hashed-in-unleash (projects *, environment production): not carried, Unleash keeps it in its new format (secure) and never shows its secret again')
      expect(notCarried).toContain('frontend token guessable (projects *, environment development): not carried, the random part of secret must be 16 to 200')
      expect(notCarried).toContain('client token nowhere (projects no-such-project, environment production): not carried, project no-such-project is not carried')
      expect(notCarried).toContain('admin token ops (projects *, environment *): not carried (only client and frontend tokens are)')
      expect(notCarried).toContain("not carried, its name is not 1 to 100 characters (the token routes' rule)")
      expect(notCarried).not.toContain('its secret is listed')
      for (const s of [secret, shortSecret, '0123456789abcdef0123', 'c0ffee', '5c1e0a7b']) expect(dry.text).not.toContain(s)
      expect(await t.query(`select token_name from api_tokens where token_name = 'listed'`)).toEqual([])

      const res = await migrate(t, {})
      expect(res.status, res.text).toBe(200)
      for (const s of [secret, '0123456789abcdef0123']) expect(res.text).not.toContain(s)
      const rows = await t.query<Record<string, unknown>>(`select * from api_tokens where token_name = 'listed'`)
      expect(rows).toHaveLength(1)
      expect(JSON.stringify(rows)).not.toContain('0123456789abcdef0123456789abcdef')
      expect(rows[0]).toMatchObject({ type: 'client', projects: ['*'], environment: 'production', expires_at: new Date('2099-01-01T00:00:00.000Z') })
      const [event] = await t.query<{ data: Record<string, unknown> }>(`select data from events where type = 'api-token-created' and data->>'tokenName' = 'listed'`)
      expect(event!.data).toMatchObject({ tokenName: 'listed', type: 'client', environment: 'production' })
      expect(JSON.stringify(event)).not.toContain('0123456789abcdef')
      // The SDK that had the token in Unleash is served by Flagpost with it.
      const polled = await t.call('GET', '/api/client/features', { token: secret })
      expect(polled.status, polled.text).toBe(200)
      expect(polled.body.features.map((f: { name: string }) => f.name)).toContain('new-checkout')
      // Migrated again (skip): a secret Flagpost has is not carried twice.
      const again = await migrate(t, { dryRun: true, onConflict: 'skip' })
      expect(again.body.plan.counts.apiTokens).toBe(0)
      expect(again.body.plan.notCarried.join('\n')).toContain('client token listed (projects *, environment production): not carried, Flagpost already has a token with its secret')
    } finally {
      await t.close()
    }
  })

  it('dry run: answers the plan and what is not carried, writes nothing', async () => {
    const t = await appWith()
    try {
      const res = await migrate(t, { dryRun: true })
      expect(res.status, res.text).toBe(200)
      expect(res.body.plan.counts).toEqual({ projects: 2, environments: 4, contextFields: 4, strategies: 2, tagTypes: 2, tags: 2, segments: 2, features: 4, featureStrategies: 8, featureTags: 4, featureDependencies: 1, apiTokens: 2 })
      expect(res.body.result).toBeUndefined()
      const notCarried = res.body.plan.notCarried.join('\n')
      // Both tokens are carried with their secrets (counted, never shown).
      expect(res.body.plan.counts.apiTokens).toBe(2)
      expect(notCarried).not.toContain('web-backend')
      expect(res.text).not.toContain('3a8b41c0e2f94d7a')
      expect(notCarried).not.toContain('old-experiment')
      expect(notCarried).toContain('change-request settings are not readable')
      expect(notCarried).toContain('passwords')
      expect(await t.query(`select name from features where name in ('new-checkout','checkout-banner','payments.instant')`)).toEqual([])
      expect(requests.every((r) => r.authorization === TOKEN)).toBe(true)
    } finally {
      await t.close()
    }
  })

  it('carries every item with its events, in one transaction', async () => {
    const t = await appWith()
    try {
      const eventsBefore = (await t.query<{ n: number }>('select count(*)::int as n from events'))[0]!.n
      const res = await migrate(t, {})
      expect(res.status, res.text).toBe(200)
      expect(res.body.result.events).toBeGreaterThan(10)
      const flags = await t.query(`select name, project, type, stale, impression_data, description from features where name in ('new-checkout','checkout-banner','payments.instant') order by name`)
      expect(flags).toEqual([
        { name: 'checkout-banner', project: 'default', type: 'experiment', stale: true, impression_data: false, description: null },
        { name: 'new-checkout', project: 'default', type: 'release', stale: false, impression_data: true, description: 'The new checkout' },
        { name: 'payments.instant', project: 'payments', type: 'operational', stale: false, impression_data: false, description: 'Instant payments' },
      ])
      // An archived flag comes archived, at the time Unleash archived it.
      expect(await t.query(`select archived_at from features where name = 'old-experiment'`)).toEqual([{ archived_at: new Date('2025-03-01T00:00:00.000Z') }])
      const project = await t.query(`select mode, default_stickiness, feature_limit, feature_naming_pattern from projects where id = 'payments'`)
      expect(project).toEqual([{ mode: 'protected', default_stickiness: 'userId', feature_limit: 10, feature_naming_pattern: '^payments\\..+$' }])
      expect(await t.query(`select environment_name from project_environments where project_id = 'payments' order by 1`)).toEqual([{ environment_name: 'production' }, { environment_name: 'staging' }])
      expect(await t.query(`select type, sort_order, enabled from environments where name = 'staging'`)).toEqual([{ type: 'test', sort_order: 150, enabled: true }])
      expect(await t.query(`select legal_values, stickiness from context_fields where name = 'region'`)).toEqual([{ legal_values: [{ value: 'eu', description: 'Europe' }, { value: 'us' }], stickiness: true }])
      expect(await t.query(`select name, deprecated from strategy_definitions where name in ('pilot-customers','old-custom') order by name`)).toEqual([{ name: 'old-custom', deprecated: true }, { name: 'pilot-customers', deprecated: false }])
      // Strategies in their order, with their constraints, variants, titles and segments.
      const strategies = await t.query<{ strategy_name: string; title: string | null; disabled: boolean }>(
        `select strategy_name, title, disabled from feature_strategies where feature_name = 'new-checkout' and environment = 'development' order by sort_order`,
      )
      expect(strategies.map((s) => s.strategy_name)).toEqual(['flexibleRollout', 'userWithId', 'default'])
      expect(strategies[1]!.title).toBe('Beta users')
      expect(strategies[2]!.disabled).toBe(true)
      expect(await t.query(`select s.name from feature_strategy_segments fs join segments s on s.id = fs.segment_id join feature_strategies f on f.id = fs.strategy_id where f.feature_name = 'payments.instant' order by 1`)).toEqual([
        { name: 'beta-testers' },
        { name: 'eu-customers' },
      ])
      const [env] = await t.query<{ enabled: boolean; variants: { name: string; overrides?: unknown[]; payload?: { type: string } }[] }>(`select enabled, variants from feature_environments where feature_name = 'new-checkout' and environment = 'development'`)
      expect(env!.enabled).toBe(true)
      expect(env!.variants.map((v) => [v.name, v.payload?.type])).toEqual([['blue', 'json'], ['red', 'string']])
      expect(env!.variants[0]!.overrides).toEqual([{ contextName: 'userId', values: ['42'] }])
      expect(await t.query(`select enabled from feature_environments where feature_name = 'new-checkout' and environment = 'production'`)).toEqual([{ enabled: false }])
      expect(await t.query(`select parent, enabled, variants from feature_dependencies where child = 'checkout-banner'`)).toEqual([{ parent: 'new-checkout', enabled: true, variants: ['blue'] }])
      expect(await t.query(`select tag_type, tag_value from feature_tags where feature_name = 'checkout-banner' order by 1`)).toEqual([
        { tag_type: 'simple', tag_value: 'checkout' },
        { tag_type: 'team', tag_value: 'payments-team' },
      ])
      // Through the API as SDKs see it.
      const flag = await t.call('GET', '/api/admin/projects/default/features/new-checkout')
      expect(flag.status).toBe(200)
      const eventsAfter = (await t.query<{ n: number }>('select count(*)::int as n from events'))[0]!.n
      expect(eventsAfter - eventsBefore).toBe(res.body.result.events)
      expect(await t.query(`select type from events where feature_name = 'new-checkout' and type = 'feature-import'`)).toHaveLength(1)
    } finally {
      await t.close()
    }
  })

  it('a failure midway leaves nothing written', async () => {
    const t = await appWith()
    try {
      overrides['/api/admin/features/payments.instant/tags'] = { status: 500, body: '{}' }
      const failed = await migrate(t, {})
      expect(failed.status).toBe(400)
      expect(failed.body.message).toContain('Unleash answered 500 to GET /api/admin/features/payments.instant/tags')
      // A strategy Flagpost's rules refuse: nothing of the rest is written either.
      overrides = { '/api/admin/projects/payments/features/payments.instant': { status: 200, body: JSON.stringify({ ...(fixtures['/api/admin/projects/payments/features/payments.instant'] as object), environments: [{ name: 'production', enabled: true, variants: [], strategies: [{ id: '00000000-0000-4000-8000-000000000099', name: 'default', sortOrder: 0, constraints: [{ contextName: 'x', operator: 'NO_SUCH_OP', values: ['1'] }] }] }] }) } }
      const refused = await migrate(t, {})
      expect(refused.status, refused.text).toBe(400)
      expect(refused.body.name).toBe('ValidationError')
      expect(await t.query(`select name from features where name in ('new-checkout','checkout-banner','payments.instant')`)).toEqual([])
      expect(await t.query(`select id from projects where id = 'payments'`)).toEqual([])
      expect(await t.query(`select name from segments where name = 'beta-testers'`)).toEqual([])
    } finally {
      await t.close()
    }
  })

  it('refuses flags of the same names unless onConflict is skip, which leaves them as they are', async () => {
    const t = await appWith()
    try {
      await createFlag(t, { name: 'new-checkout', description: 'mine' })
      const refused = await migrate(t, {})
      expect(refused.status).toBe(409)
      expect(refused.body.message).toContain('new-checkout')
      expect(await t.query(`select name from features where name = 'checkout-banner'`)).toEqual([])
      const plan = await migrate(t, { dryRun: true, onConflict: 'skip' })
      expect(plan.body.plan.conflicts).toEqual({ names: ['new-checkout'], onConflict: 'skip' })
      expect(plan.body.plan.counts.features).toBe(3)
      const skipped = await migrate(t, { onConflict: 'skip' })
      expect(skipped.status, skipped.text).toBe(200)
      expect(await t.query(`select description from features where name = 'new-checkout'`)).toEqual([{ description: 'mine' }])
      expect(await t.query(`select name from features where name in ('checkout-banner','payments.instant') order by 1`)).toHaveLength(2)
    } finally {
      await t.close()
    }
  })
})

describe('migrating what Unleash 8.2 answered (recorded)', () => {
  it('carries environment variants (read per environment), strategy variant overrides and the deprecated strategies', async () => {
    fixtures = recorded
    const t = await appWith()
    try {
      const res = await migrate(t, {})
      expect(res.status, res.text).toBe(200)
      expect(res.body.plan.counts).toMatchObject({ projects: 1, environments: 2, features: 59, featureStrategies: 124, featureDependencies: 3, apiTokens: 5 })
      // The archived flags come archived, at the time Unleash archived them.
      const archivedInUnleash = (recorded['/api/admin/search/features?archived=IS%3Atrue&limit=1000'] as { features: { name: string; archivedAt: string }[] }).features
      expect(archivedInUnleash.map((f) => f.name).sort()).toEqual(['archived-one', 'archived-two'])
      expect(await t.query(`select name, archived_at from features where name like 'archived-%' order by name`)).toEqual(
        archivedInUnleash.map((f) => ({ name: f.name, archived_at: new Date(f.archivedAt) })).sort((a, b) => a.name.localeCompare(b.name)),
      )
      expect(res.body.plan.notCarried.join('\n')).toContain("strategy types made again in Unleash under a built-in name (gradualRolloutRandom, gradualRolloutSessionId, gradualRolloutUserId, userWithId)")
      // Unleash 8 answers a flag without its environments' variants: they come from .../environments/{env}/variants.
      expect(requests.map((r) => r.path)).toContain('/api/admin/projects/default/features/variants-flag-0/environments/production/variants')
      const [env] = await t.query<{ variants: { name: string; weight: number; payload?: unknown }[] }>(`select variants from feature_environments where feature_name = 'variants-flag-0' and environment = 'production'`)
      expect(env!.variants.map((v) => [v.name, v.weight])).toEqual([['blue', 500], ['red', 500]])
      // An override on a strategy variant is kept (Unleash keeps it, the SDKs honour it): user9 gets rest2.
      const strategyVariants = await t.query<{ variants: { name: string; overrides?: unknown }[] }>(`select variants from feature_strategies where feature_name = 'variants-strategy-0' and environment = 'production'`)
      const overridden = strategyVariants.flatMap((s) => s.variants).find((v) => v.name === 'rest2')!
      expect(overridden.overrides).toEqual([{ contextName: 'userId', values: ['user3', 'user9'] }])
      expect(await t.query(`select strategy_name from feature_strategies where feature_name in ('strategy-userWithId-1', 'strategy-gradualRolloutUserId-7') and environment = 'production' order by 1`)).toEqual([
        { strategy_name: 'gradualRolloutUserId' },
        { strategy_name: 'userWithId' },
      ])
      expect(await t.query(`select parent, enabled, variants from feature_dependencies where child = 'child-variant'`)).toEqual([{ parent: 'parent', enabled: true, variants: ['red'] }])
    } finally {
      await t.close()
    }
  })

  it('carries what a team set up in Unleash 8.2: environment order, default strategy, custom and deprecated strategy types, tag types, long titles, flag types, SDK tokens', async () => {
    fixtures = recorded
    const t = await appWith()
    try {
      const res = await migrate(t, {})
      expect(res.status, res.text).toBe(200)
      // Environments in Unleash's order (production was moved first).
      expect(await t.query(`select name, sort_order from environments where name in ('development', 'production') order by sort_order`)).toEqual([
        { name: 'production', sort_order: 1 },
        { name: 'development', sort_order: 2 },
      ])
      const [production] = await t.query<{ default_strategy: { name: string; parameters: Record<string, string> } }>(
        `select default_strategy from project_environments where project_id = 'default' and environment_name = 'production'`,
      )
      expect(production!.default_strategy).toMatchObject({ name: 'flexibleRollout', parameters: { rollout: '25' } })
      expect(await t.query(`select name, deprecated from strategy_definitions where name in ('pilot-customers', 'old-custom') order by name`)).toEqual([
        { name: 'old-custom', deprecated: true },
        { name: 'pilot-customers', deprecated: false },
      ])
      expect(await t.query(`select name from tag_types where name = 'team'`)).toEqual([{ name: 'team' }])
      expect(await t.query(`select tag_type, tag_value from feature_tags where feature_name = 'custom-pilot'`)).toEqual([{ tag_type: 'team', tag_value: 'payments' }])
      // A title over 100 characters, as Unleash took it; a kill-switch flag keeps its type.
      const [titled] = await t.query<{ title: string }>(`select title from feature_strategies where feature_name = 'kill-switch-titled' and environment = 'production'`)
      expect(titled!.title.length).toBeGreaterThan(100)
      expect(await t.query(`select type from features where name = 'kill-switch-titled'`)).toEqual([{ type: 'kill-switch' }])
      // The flag with a custom strategy keeps both strategies, in Unleash's order.
      expect(await t.query(`select strategy_name from feature_strategies where feature_name = 'custom-pilot' and environment = 'development' order by sort_order`)).toEqual([
        { strategy_name: 'pilot-customers' },
        { strategy_name: 'flexibleRollout' },
      ])
      // Tokens Unleash made (a backend token is listed as client) keep working with their secrets.
      const tokens = (recorded['/api/admin/api-tokens'] as { tokens: { tokenName: string; type: string; secret: string }[] }).tokens
      for (const name of ['made-backend', 'made-client', 'made-frontend']) {
        const token = tokens.find((x) => x.tokenName === name)!
        const polled = token.type === 'frontend' ? await t.call('GET', '/api/frontend', { token: token.secret }) : await t.call('GET', '/api/client/features', { token: token.secret })
        expect(polled.status, `${name}: ${polled.text}`).toBe(200)
      }
    } finally {
      await t.close()
    }
  })
})

/** A strategy as both servers answer it, without what each makes for itself (ids, segment ids, defaults left out). */
function strategyShape(s: Record<string, any>, segmentName: (id: unknown) => string) {
  const constraint = (c: Record<string, any>) => ({
    contextName: c.contextName,
    operator: c.operator,
    values: c.values ?? [],
    value: c.value ?? null,
    inverted: c.inverted ?? false,
    caseInsensitive: c.caseInsensitive ?? false,
  })
  return {
    name: s.name,
    title: s.title ?? null,
    disabled: s.disabled ?? false,
    parameters: s.parameters ?? {},
    constraints: (s.constraints ?? []).map(constraint),
    variants: (s.variants ?? []).map(variantShape),
    segments: (s.segments ?? []).map(segmentName).sort(),
  }
}
const variantShape = (v: Record<string, any>) => ({
  name: v.name,
  weight: v.weight,
  weightType: v.weightType,
  stickiness: v.stickiness ?? 'default',
  payload: v.payload ?? null,
  overrides: v.overrides ?? [],
})

describe('every flag Unleash 8.2 answered is answered the same by Flagpost after the migration', () => {
  it('metadata and creation time, switches, strategies in order (parameters, constraints, titles, variants, segments), environment variants, tags, dependencies, segments, context fields', { timeout: 120_000 }, async () => {
    fixtures = recorded
    const t = await appWith()
    try {
      expect((await migrate(t, {})).status).toBe(200)
      const unleashSegments = new Map((recorded['/api/admin/segments'] as { segments: { id: number; name: string }[] }).segments.map((s) => [s.id, s.name]))
      const flagpostSegments = new Map(((await t.call('GET', '/api/admin/segments')).body.segments as { id: number; name: string }[]).map((s) => [s.id, s.name]))
      // Segments and context fields as Unleash answered them.
      const constraintOf = (c: Record<string, any>) => ({ contextName: c.contextName, operator: c.operator, values: c.values ?? [], value: c.value ?? null, inverted: c.inverted ?? false, caseInsensitive: c.caseInsensitive ?? false })
      const segmentsOf = (list: Record<string, any>[]) => Object.fromEntries(list.map((x) => [x.name, { description: x.description ?? null, constraints: x.constraints.map(constraintOf) }]))
      expect(segmentsOf((await t.call('GET', '/api/admin/segments')).body.segments)).toEqual(segmentsOf((recorded['/api/admin/segments'] as { segments: Record<string, any>[] }).segments))
      const flagpostFields = new Map(((await t.call('GET', '/api/admin/context')).body as Record<string, any>[]).map((f) => [f.name, f]))
      for (const field of recorded['/api/admin/context'] as Record<string, any>[]) {
        const ours = flagpostFields.get(field.name)
        expect(ours, field.name).toBeDefined()
        expect({ stickiness: ours!.stickiness, legalValues: ours!.legalValues ?? [] }, field.name).toEqual({ stickiness: field.stickiness, legalValues: field.legalValues ?? [] })
        // Flagpost keeps its own descriptions of the built-in fields; a field a team made keeps Unleash's.
        if (!['appName', 'environment', 'userId', 'sessionId', 'remoteAddress', 'currentTime'].includes(field.name)) expect(ours!.description ?? null, field.name).toEqual(field.description ?? null)
      }
      const names = (recorded['/api/admin/projects/default/features'] as { features: { name: string }[] }).features.map((f) => f.name)
      expect(names.length).toBeGreaterThan(50)
      for (const name of names) {
        const unleash = recorded[`/api/admin/projects/default/features/${name}`] as Record<string, any>
        const res = await t.call('GET', `/api/admin/projects/default/features/${name}`)
        expect(res.status, `${name}: ${res.text}`).toBe(200)
        const flagpost = res.body
        for (const key of ['name', 'type', 'description', 'stale', 'impressionData', 'project', 'archived', 'createdAt']) expect(flagpost[key] ?? null, `${name}.${key}`).toEqual(unleash[key] ?? null)
        expect((flagpost.dependencies ?? []).map((d: any) => [d.feature, d.enabled, d.variants ?? []]), `${name} dependencies`).toEqual(
          (unleash.dependencies ?? []).map((d: any) => [d.feature, d.enabled, d.variants ?? []]),
        )
        const environments = (f: Record<string, any>, segmentName: (id: unknown) => string) =>
          Object.fromEntries(
            (f.environments as Record<string, any>[]).map((e) => [
              e.name,
              { enabled: e.enabled, strategies: [...e.strategies].sort((a, b) => a.sortOrder - b.sortOrder).map((s) => strategyShape(s, segmentName)) },
            ]),
          )
        const unleashEnvironments = environments(unleash, (id) => unleashSegments.get(id as number)!)
        expect(environments(flagpost, (id) => flagpostSegments.get(id as number)!), name).toEqual(unleashEnvironments)
        for (const env of Object.keys(unleashEnvironments)) {
          const unleashVariants = (recorded[`/api/admin/projects/default/features/${name}/environments/${env}/variants`] as { variants: Record<string, any>[] }).variants
          const flagpostVariants = (await t.call('GET', `/api/admin/projects/default/features/${name}/environments/${env}/variants`)).body.variants as Record<string, any>[]
          const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name)
          expect(flagpostVariants.map(variantShape).sort(byName), `${name} ${env} variants`).toEqual(unleashVariants.map(variantShape).sort(byName))
        }
        const tags = (list: { type: string; value: string }[]) => list.map((x) => `${x.type}:${x.value}`).sort()
        expect(tags((await t.call('GET', `/api/admin/features/${name}/tags`)).body.tags), `${name} tags`).toEqual(tags((recorded[`/api/admin/features/${name}/tags`] as { tags: { type: string; value: string }[] }).tags))
      }
    } finally {
      await t.close()
    }
  })
})

describe('the migration route: threats', () => {
  it('is for admins only (an Editor gets 403, no token 401) and reads nothing for them', async () => {
    const t = await appWith()
    try {
      const editor = await createUser(t, 'Editor')
      const res = await editor.call('POST', '/api/admin/migrate/unleash', { body: { url: base, token: TOKEN, dryRun: true } })
      expect(res.status).toBe(403)
      expect((await migrate(t, { dryRun: true }, null as unknown as string)).status).toBe(401)
      expect(requests).toEqual([])
    } finally {
      await t.close()
    }
  })

  it('refuses private, loopback and non-http targets as webhooks do (SSRF), and never follows a redirect', async () => {
    const t = await appWith(false)
    try {
      for (const url of ['http://127.0.0.1:4242', 'http://localhost:4242', 'http://[::1]/', 'http://169.254.169.254/', 'file:///etc/passwd', 'http://user:pw@unleash.example/']) {
        const res = await migrate(t, { url, dryRun: true })
        expect(res.status, url).toBe(400)
        expect(res.body).toMatchObject({ name: 'ValidationError' })
        expect(typeof res.body.id).toBe('string')
      }
      // A host name resolving to a private address (the fake Unleash's) is refused before any connection.
      const named = await migrate(t, { dryRun: true })
      expect(named.status).toBe(400)
      expect(named.body.message).toContain('private address')
      expect(requests).toEqual([])
    } finally {
      await t.close()
    }
    const allowed = await appWith()
    try {
      overrides['/api/admin/environments'] = { status: 302, body: '', headers: { location: 'http://169.254.169.254/latest/meta-data' } }
      const redirected = await migrate(allowed, { dryRun: true })
      expect(redirected.status).toBe(400)
      expect(redirected.body.message).toContain('Unleash answered 302')
      expect(requests.map((r) => r.path)).not.toContain('/latest/meta-data')
    } finally {
      await allowed.close()
    }
  })

  it('bounds what it reads: an answer over 20 MiB is refused', async () => {
    const t = await appWith()
    try {
      overrides['/api/admin/context'] = { status: 200, body: `[${'"x",'.repeat(5_300_000)}"x"]` }
      const res = await migrate(t, { dryRun: true })
      expect(res.status).toBe(400)
      expect(res.body.message).toContain('larger than 20 MiB')
    } finally {
      await t.close()
    }
  })

  it('never echoes, logs or stores the token', async () => {
    const t = await appWith()
    const logged: string[] = []
    const spies = (['log', 'error', 'warn', 'info'] as const).map((m) => vi.spyOn(console, m).mockImplementation((...args) => void logged.push(args.map(String).join(' '))))
    try {
      // Unleash echoing the token in an error, on a path the message names.
      overrides['/api/admin/tags'] = { status: 401, body: JSON.stringify({ message: `bad token ${TOKEN}` }) }
      const refused = await migrate(t, {})
      expect(refused.status).toBe(400)
      expect(refused.text).not.toContain(TOKEN)
      overrides = {}
      const done = await migrate(t, {})
      expect(done.status).toBe(200)
      expect(done.text).not.toContain(TOKEN)
      expect(done.text).not.toContain('unleash-admin-secret')
      expect(await t.query(`select id from events where data::text like '%unleash-admin-secret%' or pre_data::text like '%unleash-admin-secret%'`)).toEqual([])
      expect(logged.join('\n')).not.toContain('unleash-admin-secret')
    } finally {
      for (const s of spies) s.mockRestore()
      await t.close()
    }
  })
})
