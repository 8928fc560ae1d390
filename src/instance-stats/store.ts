import { sql } from 'drizzle-orm'
import { queryRows, type Db } from '../db.js'
import { passwordSignInRefusedSql } from '../auth-settings/store.js'

/** The settings row that names this instance: made by a migration at first start (`instance`, `{ id }`). */
export const INSTANCE_SETTING = 'instance'

type Ranges = Record<string, number>

/**
 * GET /api/admin/instance-admin/statistics: what the instance holds and how it is used, in Unleash's shape, read in
 * one statement. Enterprise-only parts (SAML, SCIM, release templates and plans, Edge instances) are false or 0.
 */
export async function instanceStats(db: Db, now: Date, version: string) {
  const at = now.toISOString()
  const ago = (days: number) => sql`${at}::timestamptz - ${`${days} days`}::interval`
  const [row] = await queryRows<{
    instanceId: string | null
    users: number
    readOnlyUsers: number
    serviceAccounts: number
    active7: number
    active30: number
    active60: number
    active90: number
    licensedUsers: number
    featureToggles: number
    archivedFeatureToggles: number
    projects: number
    contextFields: number
    roles: number
    customRootRoles: number
    customRootRolesInUse: number
    groups: number
    environments: number
    segments: number
    strategies: number
    oidc: boolean
    passwordDisabled: boolean
    appsAll: number
    apps30: number
    apps7: number
    featureExports: number
    featureImports: number
    adminTokens: number
    clientTokens: number
    frontendTokens: number
    production30: number
    production60: number
    production90: number
    enabledBuckets: number
    variantBuckets: number
    maxEnvironmentStrategies: number
    maxConstraints: number
    maxConstraintValues: number
  }>(
    db,
    sql`with u as (select * from users where deleted_at is null and not is_service)
    select
      (select content->>'id' from settings where name = ${INSTANCE_SETTING}) as "instanceId",
      (select count(*) from u)::int as users,
      (select count(*) from u join roles r on r.id = u.root_role_id where r.name = 'Viewer')::int as "readOnlyUsers",
      (select count(*) from users where deleted_at is null and is_service)::int as "serviceAccounts",
      (select count(*) from u where u.seen_at >= ${ago(7)})::int as active7,
      (select count(*) from u where u.seen_at >= ${ago(30)})::int as active30,
      (select count(*) from u where u.seen_at >= ${ago(60)})::int as active60,
      (select count(*) from u where u.seen_at >= ${ago(90)})::int as active90,
      (select count(*) from users where not is_service and seen_at >= ${ago(30)})::int as "licensedUsers",
      (select count(*) from features where archived_at is null)::int as "featureToggles",
      (select count(*) from features where archived_at is not null)::int as "archivedFeatureToggles",
      (select count(*) from projects where archived_at is null)::int as projects,
      (select count(*) from context_fields)::int as "contextFields",
      (select count(*) from roles)::int as roles,
      (select count(*) from roles where type = 'root-custom')::int as "customRootRoles",
      (select count(distinct r.id) from roles r join users x on x.root_role_id = r.id and x.deleted_at is null where r.type = 'root-custom')::int as "customRootRolesInUse",
      (select count(*) from groups)::int as groups,
      (select count(*) from environments)::int as environments,
      (select count(*) from segments)::int as segments,
      (select count(*) from strategy_definitions)::int as strategies,
      exists (select from settings where name = 'oidc' and content->>'enabled' = 'true') as oidc,
      ${passwordSignInRefusedSql} as "passwordDisabled",
      (select count(*) from client_applications)::int as "appsAll",
      (select count(*) from client_applications a where exists (select from client_instances i where i.app_name = a.app_name and i.last_seen >= ${ago(30)}))::int as apps30,
      (select count(*) from client_applications a where exists (select from client_instances i where i.app_name = a.app_name and i.last_seen >= ${ago(7)}))::int as apps7,
      (select count(*) from events where type = 'features-exported')::int as "featureExports",
      (select count(*) from events where type = 'features-imported')::int as "featureImports",
      (select count(*) from api_tokens where user_id is null and type = 'admin')::int as "adminTokens",
      (select count(*) from api_tokens where user_id is null and type = 'client')::int as "clientTokens",
      (select count(*) from api_tokens where user_id is null and type = 'frontend')::int as "frontendTokens",
      (select count(*) from events e join environments v on v.name = e.environment and v.type = 'production' where e.created_at >= ${ago(30)})::int as production30,
      (select count(*) from events e join environments v on v.name = e.environment and v.type = 'production' where e.created_at >= ${ago(60)})::int as production60,
      (select count(*) from events e join environments v on v.name = e.environment and v.type = 'production' where e.created_at >= ${ago(90)})::int as production90,
      (select count(*) from client_metrics_hourly where timestamp >= date_trunc('day', ${at}::timestamptz) - interval '1 day' and timestamp < date_trunc('day', ${at}::timestamptz))::int as "enabledBuckets",
      (select count(*) from client_metrics_variants_hourly where timestamp >= date_trunc('day', ${at}::timestamptz) - interval '1 day' and timestamp < date_trunc('day', ${at}::timestamptz))::int as "variantBuckets",
      (select coalesce(max(n), 0) from (select count(*) n from feature_strategies group by feature_name, environment) s)::int as "maxEnvironmentStrategies",
      (select coalesce(max(jsonb_array_length(constraints)), 0) from feature_strategies)::int as "maxConstraints",
      (select coalesce(max(jsonb_array_length(coalesce(c->'values', '[]'::jsonb))), 0) from feature_strategies, jsonb_array_elements(constraints) c)::int as "maxConstraintValues"`,
  )
  const r = row!
  const stats = {
    instanceId: r.instanceId ?? '',
    timestamp: at,
    versionOSS: version,
    users: r.users,
    readOnlyUsers: r.readOnlyUsers,
    serviceAccounts: r.serviceAccounts,
    activeUsers: { last7: r.active7, last30: r.active30, last60: r.active60, last90: r.active90 },
    licensedUsers: r.licensedUsers,
    productionChanges: { last30: r.production30, last60: r.production60, last90: r.production90 },
    previousDayMetricsBucketsCount: { enabledCount: r.enabledBuckets, variantCount: r.variantBuckets },
    featureToggles: r.featureToggles,
    archivedFeatureToggles: r.archivedFeatureToggles,
    projects: r.projects,
    contextFields: r.contextFields,
    roles: r.roles,
    customRootRoles: r.customRootRoles,
    customRootRolesInUse: r.customRootRolesInUse,
    groups: r.groups,
    environments: r.environments,
    segments: r.segments,
    strategies: r.strategies,
    SAMLenabled: false,
    OIDCenabled: r.oidc,
    passwordAuthEnabled: !r.passwordDisabled,
    SCIMenabled: false,
    clientApps: [
      { range: 'allTime' as const, count: r.appsAll },
      { range: '30d' as const, count: r.apps30 },
      { range: '7d' as const, count: r.apps7 },
    ],
    featureExports: r.featureExports,
    featureImports: r.featureImports,
    apiTokens: { admin: r.adminTokens, client: r.clientTokens, frontend: r.frontendTokens },
    maxEnvironmentStrategies: r.maxEnvironmentStrategies,
    maxConstraints: r.maxConstraints,
    maxConstraintValues: r.maxConstraintValues,
    releaseTemplates: 0,
    releasePlans: 0,
    edgeInstanceUsage: {} as Ranges,
  }
  return { ...stats, sum: await checksum(stats) }
}

/** Unleash's `sum`: a SHA-256 of the statistics, so a report sent on can be checked to be unchanged. */
async function checksum(stats: object): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(stats)))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

const CSV_COLUMNS = [
  'OIDCenabled', 'SAMLenabled', 'passwordAuthEnabled', 'SCIMenabled', 'clientApps', 'contextFields', 'environments', 'featureExports', 'featureImports',
  'featureToggles', 'archivedFeatureToggles', 'groups', 'instanceId', 'projects', 'roles', 'customRootRoles', 'customRootRolesInUse', 'segments',
  'strategies', 'sum', 'timestamp', 'users', 'licensedUsers', 'serviceAccounts', 'apiTokens', 'versionEnterprise', 'versionOSS', 'activeUsers',
  'productionChanges', 'previousDayMetricsBucketsCount', 'maxEnvironmentStrategies', 'maxConstraints', 'maxConstraintValues', 'releaseTemplates',
  'releasePlans', 'edgeInstanceUsage', 'readOnlyUsers',
] as const

/** The statistics as Unleash's CSV: a header of its columns, one row; objects as JSON, text quoted (`"` doubled). */
export function statsCsv(stats: Record<string, unknown>): string {
  const cell = (v: unknown) => {
    if (v === undefined || v === null) return ''
    if (typeof v === 'number' || typeof v === 'boolean') return String(v)
    const text = typeof v === 'string' ? v : JSON.stringify(v)
    // A leading = + - @ would be a formula to a spreadsheet: quoted and prefixed, as OWASP advises.
    const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
    return `"${safe.replace(/"/g, '""')}"`
  }
  return `${CSV_COLUMNS.map((c) => `"${c}"`).join(',')}\n${CSV_COLUMNS.map((c) => cell(stats[c])).join(',')}\n`
}
