import { compareVersions, parseVersion } from '../evaluation/index.js'
import { sql } from 'drizzle-orm'
import { clientInstances, clientMetricsHourly, features } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'

/** The oldest SDK versions Unleash 8.2 does not call outdated, by SDK name (as SDKs register `name:version`). */
const MINIMUM_SDK_VERSIONS: Record<string, string> = {
  'unleash-client-node': '5.3.2',
  'unleash-client-nextjs': '1.6.2',
  'unleash-client-java': '9.2.0',
  'unleash-client-go': '4.1.0',
  'unleash-client-python': '5.11.0',
  'unleash-client-ruby': '5.0.0',
  'unleash-client-dotnet': '4.1.3',
  'unleash-client-php': '2.3.0',
  'unleash-node-sdk': '6.6.0',
  'unleash-nextjs-sdk': '1.6.2',
  'unleash-java-sdk': '11.0.2',
  'unleash-go-sdk': '5.0.3',
  'unleash-python-sdk': '6.3.0',
  'unleash-ruby-sdk': '6.3.1',
  'unleash-dotnet-sdk': '5.3.0',
  'unleash-php-sdk': '2.9.1',
}

/** Whether `name:version` is a known SDK older than its minimum; an unknown SDK or an unreadable version is not. */
export function isOutdatedSdk(sdkVersion: string): boolean {
  const [name, version] = sdkVersion.split(':')
  const minimum = name ? MINIMUM_SDK_VERSIONS[name] : undefined
  const parsed = minimum && version ? parseVersion(version) : null
  return parsed !== null && compareVersions(parsed, parseVersion(minimum!)!) < 0
}

/**
 * The outdated SDK versions running instances report, each with the applications running it; `projectId`: only
 * applications that reported that project's flags.
 */
export async function outdatedSdks(db: Db, projectId?: string) {
  const inProject = projectId === undefined ? sql`` : sql`where i.app_name in (select m.app_name from ${clientMetricsHourly} m join ${features} f on f.name = m.feature_name where f.project = ${projectId})`
  const rows = await queryRows<{ sdkVersion: string; applications: string[] }>(
    db,
    sql`select i.sdk_version as "sdkVersion", array_agg(distinct i.app_name order by i.app_name) as applications
      from ${clientInstances} i ${inProject} ${projectId === undefined ? sql`where` : sql`and`} i.sdk_version is not null group by 1 order by 1`,
  )
  return { sdks: rows.filter((r) => isOutdatedSdk(r.sdkVersion)) }
}
