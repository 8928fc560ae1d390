import { clientMetricsInbox } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { ClientApplication, ClientMetrics } from './schemas.js'

/** Who reported: the token's name and scope, the environment the report counts for, and where it came from. */
export interface Reporter {
  tokenName: string
  /** A frontend token reports: it is public, so the applications it may create are bounded (aggregate.ts). */
  fromFrontend?: boolean
  /** `['*']` for every project. */
  projects: string[]
  environment: string
  clientIp?: string
  /** The `unleash-sdk` header, used when the body names no sdkVersion. */
  sdkHeader?: string
}

/*
 * The request path of registrations and metrics: one append to the inbox, nothing else. Folding the
 * report into applications, instances, hourly counts and lastSeenAt happens in the background
 * (aggregate.ts), so a report costs one insert however many flags it counts.
 */

export async function storeRegistration(db: Db, now: Date, reporter: Reporter, body: ClientApplication): Promise<void> {
  await db.insert(clientMetricsInbox).values({
    ...inboxRow(now, reporter, body.appName, body.instanceId),
    kind: 'register',
    payload: {
      sdkVersion: body.sdkVersion ?? reporter.sdkHeader ?? null,
      strategies: body.strategies,
      interval: body.interval,
      started: body.started.toISOString(),
      platformName: body.platformName ?? null,
      platformVersion: body.platformVersion ?? null,
    },
  })
}

export async function storeMetrics(db: Db, now: Date, reporter: Reporter, body: ClientMetrics): Promise<void> {
  const bucket = body.bucket
  await db.insert(clientMetricsInbox).values({
    ...inboxRow(now, reporter, body.appName, body.instanceId),
    kind: 'metrics',
    payload: {
      sdkVersion: body.sdkVersion ?? reporter.sdkHeader ?? null,
      bucket: bucket ? { start: bucket.start.toISOString(), stop: bucket.stop.toISOString(), toggles: bucket.toggles } : null,
    },
  })
}

function inboxRow(now: Date, reporter: Reporter, appName: string, instanceId: string | null | undefined) {
  return {
    receivedAt: now,
    appName,
    instanceId: instanceId || null,
    environment: reporter.environment,
    projects: reporter.projects,
    tokenName: reporter.tokenName,
    fromFrontend: reporter.fromFrontend ?? false,
    clientIp: reporter.clientIp ?? null,
  }
}
