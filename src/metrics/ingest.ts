import { clientMetricsInbox } from '../../schema/index.js'
import type { Db } from '../db.js'
import type { ClientApplication, ClientMetrics, ImpactMetric } from './schemas.js'

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
      ...(body.impactMetrics?.length ? { impactMetrics: body.impactMetrics } : {}),
    },
  })
}

/** One report of a bulk: a registration, or metrics (a bucket of flag counts, impact metrics or both) of one application in one environment. */
export type BulkReport =
  | { kind: 'register'; appName: string; instanceId?: string | null; environment: string; registration: Omit<ClientApplication, 'appName' | 'instanceId' | 'environment'> }
  | {
      kind: 'metrics'
      appName: string
      environment: string
      bucket?: { start: Date; stop: Date; toggles: Record<string, { yes: number; no: number; variants?: Record<string, number> | null }> }
      impactMetrics?: ImpactMetric[]
    }

/** The reports of one bulk request (Unleash Edge's `POST /api/client/metrics/bulk`), each to be folded as its own report: one insert for all. */
export async function storeBulk(db: Db, now: Date, reporter: Omit<Reporter, 'environment'>, reports: BulkReport[]): Promise<void> {
  if (reports.length === 0) return
  await db.insert(clientMetricsInbox).values(
    reports.map((report) =>
      report.kind === 'register'
        ? {
            ...inboxRow(now, { ...reporter, environment: report.environment }, report.appName, report.instanceId),
            kind: 'register',
            payload: {
              sdkVersion: report.registration.sdkVersion ?? null,
              strategies: report.registration.strategies,
              interval: report.registration.interval,
              started: report.registration.started.toISOString(),
              platformName: report.registration.platformName ?? null,
              platformVersion: report.registration.platformVersion ?? null,
            },
          }
        : {
            ...inboxRow(now, { ...reporter, environment: report.environment }, report.appName, null),
            kind: 'metrics',
            payload: {
              sdkVersion: null,
              bucket: report.bucket ? { start: report.bucket.start.toISOString(), stop: report.bucket.stop.toISOString(), toggles: report.bucket.toggles } : null,
              ...(report.impactMetrics?.length ? { impactMetrics: report.impactMetrics } : {}),
            },
          },
    ),
  )
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
