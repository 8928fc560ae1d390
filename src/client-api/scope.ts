import type { Context } from 'hono'
import { clientAddressOf } from '../http/client-address.js'
import { coerceVersion, compareVersions, parseVersion } from '../evaluation/index.js'
import { eq } from 'drizzle-orm'
import { environments } from '../../schema/index.js'
import type { AppEnv } from '../http/context.js'
import { validationError } from '../core/errors.js'
import type { Reporter } from '../metrics/ingest.js'
import type { SdkPrincipal } from './auth.js'
import { readDefaultEnvironment, type ClientScope } from './payload.js'
import { refreshAfterResponse } from './refresh.js'
import type { ClientFeaturesQuery } from './schemas.js'

/** The projects a token sees: `*` for all. */
export function tokenProjects(principal: SdkPrincipal): '*' | string[] {
  if (principal.kind === 'admin-token') return '*'
  return principal.projects.includes('*') ? '*' : [...new Set(principal.projects)].sort()
}

/**
 * The environment an SDK request is about. Client and frontend tokens name theirs (a request cannot
 * ask for another). Admin tokens name none: Unleash's deprecated `environment` parameter picks one,
 * else the first enabled environment in sort order (Unleash falls back to its `default` environment).
 */
export async function environmentOf(c: Context<AppEnv>, principal: SdkPrincipal, requested?: string | null): Promise<string> {
  if (principal.kind !== 'admin-token' && principal.environment !== '*') return principal.environment
  const db = c.get('db')
  if (requested) {
    const [row] = await db.select({ name: environments.name }).from(environments).where(eq(environments.name, requested))
    if (!row) throw validationError(`Unknown environment: ${requested}`, [{ path: 'query.environment', message: `environment ${requested} does not exist` }])
    return requested
  }
  const sdk = c.get('sdk')
  const remembered = sdk.defaultEnvironment
  const known = sdk.revisions.known()
  if (remembered && known && remembered.generation === sdk.revisions.generation) {
    if (known.fresh && remembered.revisionKey === known.revision.key) return named(remembered.name)
    if (sdk.options.staleWhileRevalidateMs > 0) {
      refreshAfterResponse(c, 'default-environment')
      return named(remembered.name)
    }
  }
  const generation = sdk.revisions.generation
  const revision = await sdk.revisions.current(db)
  if (sdk.defaultEnvironment?.revisionKey !== revision.key || sdk.defaultEnvironment.generation !== generation) {
    sdk.defaultEnvironment = { revisionKey: revision.key, generation, name: await readDefaultEnvironment(db) }
  }
  return named(sdk.defaultEnvironment.name)
}

function named(environment: string | undefined): string {
  if (!environment) throw validationError('There is no enabled environment to serve')
  return environment
}

/** Who is reporting, for register and metrics: a client token's environment and projects, or what an admin token's body names. */
export async function reporterOf(c: Context<AppEnv>, principal: SdkPrincipal, environment?: string | null): Promise<Reporter> {
  const projects = tokenProjects(principal)
  return {
    tokenName: principal.name,
    fromFrontend: principal.kind === 'frontend-token',
    projects: projects === '*' ? ['*'] : projects,
    environment: await environmentOf(c, principal, environment),
    clientIp: clientAddressOf(c),
    sdkHeader: c.req.header('unleash-sdk'),
  }
}

const toList = (value: string | string[] | undefined) => (value === undefined ? [] : Array.isArray(value) ? value : [value])

const SEGMENTS_SINCE = parseVersion('4.2.0')!

/** Whether the SDK knows segments (Unleash-Client-Spec 4.2.0 or later); older ones get their constraints inlined. */
export function supportsSegments(spec: string | null | undefined): boolean {
  if (spec == null) return false
  // A fleet sends a handful of spec versions: each is judged once (bounded, so made-up ones cannot grow it).
  const known = segmentsBySpec.get(spec)
  if (known !== undefined) return known
  const version = coerceVersion(spec)
  const supports = version !== null && compareVersions(version, SEGMENTS_SINCE) >= 0
  if (segmentsBySpec.size >= 64) segmentsBySpec.clear()
  segmentsBySpec.set(spec, supports)
  return supports
}

const segmentsBySpec = new Map<string, boolean>()

/** The scope of a client API request: the token's environment and projects, narrowed by Unleash's filters. */
export async function clientScopeOf(c: Context<AppEnv>, principal: SdkPrincipal, query: ClientFeaturesQuery): Promise<ClientScope> {
  const environment = await environmentOf(c, principal, query.environment)
  const allowed = tokenProjects(principal)
  const asked = [...new Set(toList(query.project).flatMap((p) => p.split(',')).map((p) => p.trim()).filter(Boolean))]
  let projects: ClientScope['projects'] = allowed
  if (asked.length > 0 && !asked.includes('*')) projects = (allowed === '*' ? asked : asked.filter((p) => allowed.includes(p))).sort()
  const narrowed = JSON.stringify(projects) !== JSON.stringify(allowed)
  const tags = new Map<string, [string, string]>()
  for (const tag of toList(query.tag)) {
    const at = tag.indexOf(':')
    if (at <= 0 || at === tag.length - 1) throw validationError(`A tag filter must be type:value, got "${tag}"`, [{ path: 'query.tag', message: 'must be type:value' }])
    tags.set(tag, [tag.slice(0, at), tag.slice(at + 1)])
  }
  return {
    environment,
    projects,
    ...(query.namePrefix ? { namePrefix: query.namePrefix } : {}),
    ...(tags.size > 0 ? { tags: [...tags.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, pair]) => pair) } : {}),
    inlineSegmentConstraints: !supportsSegments(c.req.header('unleash-client-spec')),
    ...(narrowed ? { within: allowed } : {}),
  }
}
