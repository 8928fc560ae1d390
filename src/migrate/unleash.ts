import { sql } from 'drizzle-orm'
import { queryRows, type Db } from '../db.js'
import type { Caller } from '../core/principal.js'
import { conflict, validationError } from '../core/errors.js'
import { importState } from '../state/import.js'
import { guardPassed } from '../events/store.js'
import { givenSecretProblem, hashSecret } from '../api-tokens/secrets.js'
import { newTokenRow, tokenCreatedEvent } from '../api-tokens/store.js'
import { StateImportSchema, type StateImport, type StateImportResult } from '../state/schemas.js'
import { storableTime } from '../core/clock.js'

/** A token name as the token routes take it: 1 to 100 characters. */
const MAX_TOKEN_NAME = 100

/**
 * Moving from a running Unleash 8.2 in one step: its admin API is read (projects, environments, context fields,
 * strategy types, tag types and tags, segments, every flag in full, dependencies and flag tags, API tokens' names),
 * turned into a state document, and written by the state restore (src/state/import.ts): one transaction with its
 * events, every object held to the rules of the routes that make it.
 */

/** GETs one admin API path of the Unleash instance and answers its JSON (throws MigrationRefused when it cannot). */
export type UnleashGet = (path: string) => Promise<unknown>

/** A failure whose message is safe to show (never the token). */
export class MigrationRefused extends Error {}

export type OnConflict = 'fail' | 'skip'

export interface MigrationPlan {
  /** What would be written, by kind. */
  counts: Record<'projects' | 'environments' | 'contextFields' | 'strategies' | 'tagTypes' | 'tags' | 'segments' | 'features' | 'featureStrategies' | 'featureTags' | 'featureDependencies' | 'apiTokens', number>
  /** Flags of Flagpost with the name of one of Unleash's, and what happens to them. */
  conflicts: { names: string[]; onConflict: OnConflict }
  /** What is not carried, and why. */
  notCarried: string[]
}

export interface MigrationResult {
  plan: MigrationPlan
  result?: StateImportResult
}

type Json = Record<string, unknown>
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : [])
const field = (v: unknown, key: string): Json[] => list((v as Json | null)?.[key])
// Unleash 8 dropped the deprecated types from its database, so an instance that still uses them has them as custom
// types; the SDKs evaluate them by name as built-ins, and so does Flagpost.
const FLAGPOST_BUILT_IN = new Set(['default', 'userWithId', 'gradualRolloutUserId', 'gradualRolloutSessionId', 'gradualRolloutRandom', 'flexibleRollout', 'remoteAddress', 'applicationHostname'])
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** Reads the Unleash instance: a state document, and what it could not read or carry. */
export async function readUnleash(get: UnleashGet): Promise<{ doc: StateImport; notCarried: string[]; tokens: UnleashToken[] }> {
  const notCarried: string[] = []
  const [environments, projectsAnswer, context, strategies, tagTypes, tags, segments, tokens] = await Promise.all([
    get('/api/admin/environments'),
    get('/api/admin/projects'),
    get('/api/admin/context'),
    get('/api/admin/strategies'),
    get('/api/admin/tag-types'),
    get('/api/admin/tags'),
    get('/api/admin/segments'),
    get('/api/admin/api-tokens').catch(() => undefined),
  ])
  const projectIds = field(projectsAnswer, 'projects').map((p) => String(p.id))
  const doc: Required<Omit<StateImport, 'version'>> & { version: number } = {
    version: 4,
    environments: field(environments, 'environments').map((e) => ({ name: String(e.name), type: String(e.type), sortOrder: e.sortOrder as number, enabled: e.enabled as boolean })),
    contextFields: list(context).map((c) => ({
      name: String(c.name),
      description: str(c.description) ?? null,
      stickiness: Boolean(c.stickiness),
      sortOrder: typeof c.sortOrder === 'number' ? c.sortOrder : null,
      legalValues: list(c.legalValues).map((v) => ({ value: String(v.value), description: str(v.description) ?? null })),
      ...(typeof c.project === 'string' ? { project: c.project } : {}),
    })),
    strategies: field(strategies, 'strategies')
      .filter((s) => s.editable === true && !FLAGPOST_BUILT_IN.has(String(s.name)))
      .map((s) => ({
        name: String(s.name),
        title: str(s.title) ?? null,
        displayName: str(s.displayName) ?? null,
        description: str(s.description) ?? null,
        parameters: list(s.parameters).map((p) => ({ name: String(p.name), type: String(p.type), description: str(p.description) ?? '', required: Boolean(p.required) })),
        deprecated: Boolean(s.deprecated),
      })) as StateImport['strategies'] & object,
    tagTypes: field(tagTypes, 'tagTypes').map((t) => ({ name: String(t.name), description: str(t.description) ?? null, icon: str(t.icon) ?? null })),
    tags: field(tags, 'tags').map((t) => ({ type: String(t.type), value: String(t.value) })),
    segments: field(segments, 'segments').map((s) => ({
      id: s.id as number,
      name: String(s.name),
      description: str(s.description) ?? null,
      project: str(s.project) ?? null,
      constraints: list(s.constraints) as never,
    })),
    projects: [],
    features: [],
    featureEnvironments: [],
    featureStrategies: [],
    featureStrategySegments: [],
    featureTags: [],
    featureDependencies: [],
    featureLinks: [],
  }
  const remade = field(strategies, 'strategies').filter((s) => s.editable === true && FLAGPOST_BUILT_IN.has(String(s.name)))
  if (remade.length > 0) notCarried.push(`strategy types made again in Unleash under a built-in name (${remade.map((s) => s.name).join(', ')}): Flagpost's built-in type evaluates them, as the SDKs do`)
  const builtIns = field(strategies, 'strategies').filter((s) => s.editable !== true && s.deprecated === true)
  if (builtIns.length > 0) notCarried.push(`built-in strategy types deprecated in Unleash (${builtIns.map((s) => s.name).join(', ')}): their deprecation is Flagpost's own`)

  for (const id of projectIds) {
    const overview = (await get(`/api/admin/projects/${encodeURIComponent(id)}/overview`)) as Json
    const naming = (overview.featureNaming ?? {}) as Json
    const envs = list(overview.environments)
    doc.projects.push({
      id,
      name: str(overview.name) ?? id,
      description: str(overview.description) ?? null,
      mode: (str(overview.mode) ?? 'open') as 'open',
      defaultStickiness: str(overview.defaultStickiness) ?? 'default',
      featureLimit: typeof overview.featureLimit === 'number' ? overview.featureLimit : null,
      featureNamingPattern: str(naming.pattern) || null,
      featureNamingExample: str(naming.example) || null,
      featureNamingDescription: str(naming.description) || null,
      ...(envs.length > 0
        ? { environments: envs.map((e) => ({ name: String(e.environment), ...(e.defaultStrategy ? { defaultStrategy: defaultStrategyOf(e.defaultStrategy as Json) } : {}) })) }
        : {}),
    } as StateImport['projects'] & object extends (infer T)[] ? T : never)
    // Unleash OSS has no change requests; Enterprise answers their settings here.
    const changeRequests = await get(`/api/admin/projects/${encodeURIComponent(id)}/change-requests/config`).catch(() => undefined)
    if (Array.isArray(changeRequests)) {
      const project = doc.projects[doc.projects.length - 1]!
      for (const c of changeRequests as Json[]) {
        const env = project.environments?.find((e) => e.name === c.environment)
        if (env && c.changeRequestEnabled === true) Object.assign(env, { changeRequestsEnabled: true, requiredApprovals: typeof c.requiredApprovals === 'number' ? c.requiredApprovals : 1 })
      }
    } else notCarried.push(`project ${id}: change-request settings are not readable (Unleash OSS has none): set them in Flagpost`)

    for (const summary of field(await get(`/api/admin/projects/${encodeURIComponent(id)}/features`), 'features')) {
      const name = String(summary.name)
      const flagPath = `/api/admin/projects/${encodeURIComponent(id)}/features/${encodeURIComponent(name)}`
      const answer = (await get(flagPath)) as Json
      // Unleash 8 leaves the environments' variants out of the flag: they are read one environment at a time.
      const environments: Json[] = []
      for (const env of list(answer.environments)) {
        environments.push(Array.isArray(env.variants) ? env : { ...env, variants: field(await get(`${flagPath}/environments/${encodeURIComponent(String(env.name))}/variants`), 'variants') })
      }
      const flag = { ...answer, environments }
      addFlag(doc, id, flag)
      for (const t of field(await get(`/api/admin/features/${encodeURIComponent(name)}/tags`), 'tags')) doc.featureTags.push({ featureName: name, tagType: String(t.type), tagValue: String(t.value) })
    }
  }

  // Archived flags: archived, with their metadata and archivedAt (Unleash's search answers no configuration for them).
  for (const f of field(await get('/api/admin/search/features?archived=IS%3Atrue&limit=1000').catch(() => undefined), 'features')) {
    doc.features.push({
      name: String(f.name),
      project: str(f.project) ?? 'default',
      type: (str(f.type) ?? 'release') as 'release',
      description: str(f.description) ?? null,
      stale: Boolean(f.stale),
      impressionData: Boolean(f.impressionData),
      createdAt: str(f.createdAt) ?? null,
      archived: true,
      archivedAt: (() => { const at = str(f.archivedAt); return at !== undefined && storableTime(at) !== undefined ? at : null })(),
    })
  }

  const tokenList = field(tokens, 'tokens')
  if (tokens === undefined) notCarried.push("API tokens: Unleash's GET /api/admin/api-tokens refused this token (it needs an admin token): give client and frontend tokens to Flagpost with their secrets")
  const sdkTokens: UnleashToken[] = []
  for (const t of tokenList) {
    const projects = list(t.projects).map(String)
    const token = { type: String(t.type), tokenName: String(t.tokenName ?? t.username ?? 'unleash'), projects: projects.length > 0 ? projects : [String(t.project ?? '*')], environment: String(t.environment ?? '*') }
    const scope = `${token.type} token ${token.tokenName} (projects ${token.projects.join(',')}, environment ${token.environment})`
    const giveIt = 'give it to Flagpost with INIT_CLIENT_API_TOKENS / INIT_FRONTEND_API_TOKENS or POST /api/admin/api-tokens with its secret, so its SDKs keep working'
    if (token.type !== 'client' && token.type !== 'frontend') notCarried.push(`${scope}: not carried (only client and frontend tokens are): create an admin token in Flagpost`)
    // A token in Unleash's new format (`secure`) is stored hashed there: its secret is never shown again, to anyone.
    else if (t.secure === true) notCarried.push(`${scope}: not carried, Unleash keeps it in its new format (secure) and never shows its secret again; ${giveIt}`)
    else if (typeof t.secret !== 'string' || t.secret === '') notCarried.push(`${scope}: not carried, its secret was not in Unleash's answer; ${giveIt}`)
    else sdkTokens.push({ ...token, type: token.type, secret: t.secret, expiresAt: str(t.expiresAt) ?? null, scope })
  }
  notCarried.push("users, their passwords, groups, roles and project members: not carried (Unleash's API does not give passwords)")
  notCarried.push('integrations, signals, actions, banners, SSO settings, metrics and events history: not carried')
  return { doc, notCarried, tokens: sdkTokens }
}

/** A client or frontend token Unleash answered with its secret. */
export interface UnleashToken {
  type: 'client' | 'frontend'
  tokenName: string
  projects: string[]
  environment: string
  secret: string
  expiresAt: string | null
  /** How the plan names it (never its secret). */
  scope: string
}

/**
 * The tokens carried, as rows stored the way Flagpost stores every token (the SHA-256 of the secret, a masked form),
 * with their `api-token-created` events, and what is not carried: a secret not of the form Flagpost takes
 * (`givenSecretProblem`), a project or environment Flagpost will not have, a secret Flagpost already has.
 */
async function carriedTokens(db: Db, doc: StateImport, tokens: UnleashToken[], now: Date, notCarried: string[]) {
  const hashes = await Promise.all(tokens.map((t) => hashSecret(t.secret)))
  const [known] = await queryRows<{ projects: string[]; environments: string[]; hashes: string[] }>(
    db,
    sql`select array(select id from projects where archived_at is null) as projects, array(select name from environments) as environments,
      array(select secret_hash from api_tokens where secret_hash = any(${sql.param(hashes)}::text[])) as hashes`,
  )
  const projects = new Set([...(known?.projects ?? []), ...(doc.projects ?? []).map((p) => p.id)])
  const environments = new Set([...(known?.environments ?? []), ...(doc.environments ?? []).map((e) => e.name)])
  const taken = new Set(known?.hashes ?? [])
  const rows: Awaited<ReturnType<typeof newTokenRow>>[] = []
  for (const [i, t] of tokens.entries()) {
    const problem =
      givenSecretProblem(t.secret, t.projects, t.environment) ??
      (t.projects.find((p) => p !== '*' && !projects.has(p)) !== undefined ? `project ${t.projects.find((p) => p !== '*' && !projects.has(p))} is not carried` : undefined) ??
      (t.environment === '*' || !environments.has(t.environment) ? `environment ${t.environment} is not one Flagpost will have` : undefined) ??
      (taken.has(hashes[i]!) || rows.some((r) => r.secretHash === hashes[i]) ? 'Flagpost already has a token with its secret' : undefined) ??
      (t.tokenName.length > MAX_TOKEN_NAME || t.tokenName.trim() === '' ? `its name is not 1 to ${MAX_TOKEN_NAME} characters (the token routes' rule)` : undefined)
    if (problem) {
      notCarried.push(`${t.scope}: not carried, ${problem}`)
      continue
    }
    const expiresAt = t.expiresAt && storableTime(t.expiresAt) !== undefined ? new Date(t.expiresAt) : null
    rows.push(await newTokenRow({ tokenName: t.tokenName, type: t.type, projects: t.projects, environment: t.environment, expiresAt }, t.secret, now))
  }
  const json = JSON.stringify(rows.map((r) => ({ ...r, expiresAt: r.expiresAt?.toISOString() ?? null, createdAt: r.createdAt.toISOString() })))
  const writes =
    rows.length === 0
      ? []
      : [
          sql`insert into api_tokens (secret_hash, display_secret, token_name, type, projects, environment, expires_at, created_at)
            select x."secretHash", x."displaySecret", x."tokenName", x.type, array(select jsonb_array_elements_text(x.projects)), x.environment, x."expiresAt", x."createdAt"
            from jsonb_to_recordset(${json}::jsonb) as x ("secretHash" text, "displaySecret" text, "tokenName" text, type text, projects jsonb, environment text, "expiresAt" timestamptz, "createdAt" timestamptz)
            where ${guardPassed}`,
        ]
  return { count: rows.length, alongside: { events: rows.map(tokenCreatedEvent), writes } }
}

function defaultStrategyOf(s: Json) {
  return { name: String(s.name), ...(s.title ? { title: s.title } : {}), parameters: s.parameters ?? {}, constraints: s.constraints ?? [], variants: s.variants ?? [], segments: s.segments ?? [], disabled: s.disabled ?? false }
}

function addFlag(doc: Required<StateImport>, project: string, flag: Json) {
  const name = String(flag.name)
  doc.features.push({
    name,
    project,
    type: (str(flag.type) ?? 'release') as 'release',
    description: str(flag.description) ?? null,
    stale: Boolean(flag.stale),
    impressionData: Boolean(flag.impressionData),
    createdAt: str(flag.createdAt) ?? null,
  })
  for (const env of list(flag.environments)) {
    const environment = String(env.name)
    doc.featureEnvironments.push({ featureName: name, environment, enabled: Boolean(env.enabled), variants: list(env.variants) as never })
    for (const s of list(env.strategies)) {
      const id = String(s.id)
      doc.featureStrategies.push({
        id,
        featureName: name,
        environment,
        strategyName: String(s.name),
        title: str(s.title) ?? null,
        disabled: Boolean(s.disabled),
        sortOrder: typeof s.sortOrder === 'number' ? s.sortOrder : 0,
        parameters: (s.parameters ?? {}) as Record<string, string>,
        constraints: list(s.constraints) as never,
        variants: list(s.variants) as never,
      })
      for (const segmentId of Array.isArray(s.segments) ? (s.segments as number[]) : []) doc.featureStrategySegments.push({ featureStrategyId: id, segmentId })
    }
  }
  for (const d of list(flag.dependencies)) {
    doc.featureDependencies.push({ child: name, parent: String(d.feature), enabled: d.enabled !== false, variants: Array.isArray(d.variants) ? (d.variants as string[]) : [] })
  }
  // Unleash keeps data: and javascript:// links, which Flagpost refuses: only http(s) ones come along.
  for (const l of list(flag.links)) {
    const url = str(l.url)
    if (url && /^https?:\/\//i.test(url)) doc.featureLinks.push({ featureName: name, url, title: str(l.title) ?? null })
  }
}

/** The document without the flags named in `skip` (and everything of theirs). */
function withoutFlags(doc: StateImport, skip: Set<string>): StateImport {
  if (skip.size === 0) return doc
  const kept = (doc.featureStrategies ?? []).filter((s) => !skip.has(s.featureName))
  const keptIds = new Set(kept.map((s) => s.id))
  return {
    ...doc,
    features: doc.features?.filter((f) => !skip.has(f.name)),
    featureEnvironments: doc.featureEnvironments?.filter((e) => !skip.has(e.featureName)),
    featureStrategies: kept,
    featureStrategySegments: doc.featureStrategySegments?.filter((s) => keptIds.has(s.featureStrategyId)),
    featureTags: doc.featureTags?.filter((t) => !skip.has(t.featureName)),
    featureDependencies: doc.featureDependencies?.filter((d) => !skip.has(d.child)),
    featureLinks: doc.featureLinks?.filter((l) => !skip.has(l.featureName)),
  }
}

/**
 * Reads the Unleash instance and, unless `dryRun`, writes it into Flagpost (one transaction with its events).
 * Flags of Flagpost named as one of Unleash's: `fail` (default) refuses the whole migration with 409 naming them;
 * `skip` leaves them as they are and carries the others (a carried flag depending on a skipped one keeps the dependency).
 */
export async function migrateFromUnleash(
  db: Db,
  caller: Caller,
  get: UnleashGet,
  options: { dryRun: boolean; onConflict: OnConflict },
  check: (protectedIn: { project: string; environment: string }[]) => void,
): Promise<MigrationResult> {
  const { doc: raw, notCarried, tokens } = await readUnleash(get)
  const parsed = StateImportSchema.safeParse(raw)
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 20).map((i) => `${i.path.join('.')}: ${i.message}`)
    throw validationError(`Unleash's data does not pass Flagpost's rules: ${problems.join('; ')}`)
  }
  const names = (parsed.data.features ?? []).map((f) => f.name)
  const existing = (await queryRows<{ name: string }>(db, sql`select name from features where name = any(${sql.param(names)}::text[]) order by name`)).map((r) => r.name)
  const doc = options.onConflict === 'skip' ? withoutFlags(parsed.data, new Set(existing)) : parsed.data
  const plan: MigrationPlan = {
    counts: {
      projects: doc.projects?.length ?? 0,
      environments: doc.environments?.length ?? 0,
      contextFields: doc.contextFields?.length ?? 0,
      strategies: doc.strategies?.length ?? 0,
      tagTypes: doc.tagTypes?.length ?? 0,
      tags: doc.tags?.length ?? 0,
      segments: doc.segments?.length ?? 0,
      features: doc.features?.length ?? 0,
      featureStrategies: doc.featureStrategies?.length ?? 0,
      featureTags: doc.featureTags?.length ?? 0,
      featureDependencies: doc.featureDependencies?.length ?? 0,
      apiTokens: 0,
    },
    conflicts: { names: existing, onConflict: options.onConflict },
    notCarried,
  }
  const carried = await carriedTokens(db, doc, tokens, caller.now, notCarried)
  plan.counts.apiTokens = carried.count
  if (options.dryRun) return { plan }
  if (existing.length > 0 && options.onConflict === 'fail') {
    throw conflict(`Flagpost already has flags named as Unleash's: ${existing.join(', ')}. Choose onConflict=skip to leave them as they are`)
  }
  const result = await importState(db, caller, doc, { drop: false, keep: false }, check, carried.alongside)
  return { plan, result }
}

const MAX_BYTES = 20 * 1024 * 1024

/**
 * A GET of the Unleash instance through `send` (fetch on Workers, the address-pinning transport on Node): the
 * token only in the Authorization header, redirects not followed, each answer bounded in time and size.
 */
export function unleashGet(baseUrl: string, token: string, send: (url: string, init: RequestInit) => Promise<Response>, timeoutMs = 10_000): UnleashGet {
  const base = baseUrl.replace(/\/+$/, '')
  return async (path) => {
    let response: Response
    try {
      response = await send(base + path, { method: 'GET', headers: { authorization: token, accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
    } catch (error) {
      if (error instanceof MigrationRefused) throw error
      throw new MigrationRefused(`Unleash could not be reached (${path}): ${(error as Error).name === 'TimeoutError' ? 'timed out' : 'connection failed'}`)
    }
    if (!response.ok) {
      await response.body?.cancel()
      throw new MigrationRefused(`Unleash answered ${response.status} to GET ${path}${response.status === 401 || response.status === 403 ? ': the token is not an admin token of this instance' : ''}`)
    }
    const text = await readBounded(response, MAX_BYTES)
    try {
      return JSON.parse(text) as unknown
    } catch {
      throw new MigrationRefused(`Unleash's answer to GET ${path} is not JSON`)
    }
  }
}

async function readBounded(response: Response, max: number): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel()
      throw new MigrationRefused(`an answer of Unleash is larger than ${max / 1024 / 1024} MiB`)
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    all.set(c, at)
    at += c.byteLength
  }
  return new TextDecoder().decode(all)
}
