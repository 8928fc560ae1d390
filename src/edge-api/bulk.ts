import type { BulkReport } from '../metrics/ingest.js'
import type { ImpactMetric } from '../metrics/schemas.js'
import type { BulkMetrics } from './schemas.js'

const HOUR_MS = 3_600_000

/**
 * What a bulk of reports (from Unleash Edge) comes to: one registration per application, one bucket per
 * application, environment and hour of the flag counts, and the impact metrics by the application their samples
 * name. `environment`: the one environment the token may report for (metrics of others are dropped and
 * registrations count for it, as Unleash does); undefined for a token of every environment, where each report
 * names its own (`fallback` when it names none).
 */
export function bulkReports(body: BulkMetrics, scope: { environment?: string; fallback: string; appName: string }, now: Date): BulkReport[] {
  const reports: BulkReport[] = []
  for (const app of body.applications) {
    reports.push({
      kind: 'register',
      appName: app.appName,
      instanceId: app.instanceId,
      environment: scope.environment ?? app.environment ?? scope.fallback,
      registration: {
        sdkVersion: app.sdkVersion,
        strategies: app.strategies ?? [],
        interval: app.interval ?? 0,
        started: app.started ?? now,
        platformName: app.platformName,
        platformVersion: app.platformVersion,
      },
    })
  }
  const buckets = new Map<string, Extract<BulkReport, { kind: 'metrics' }> & { bucket: NonNullable<Extract<BulkReport, { kind: 'metrics' }>['bucket']> }>()
  for (const metric of body.metrics) {
    if (scope.environment !== undefined && metric.environment !== scope.environment) continue
    const at = metric.timestamp ?? now
    const hour = new Date(at.getTime() - (at.getTime() % HOUR_MS))
    const key = `${metric.appName}\u0000${metric.environment}\u0000${hour.toISOString()}`
    let report = buckets.get(key)
    if (!report) {
      report = { kind: 'metrics', appName: metric.appName, environment: metric.environment, bucket: { start: hour, stop: hour, toggles: {} } }
      buckets.set(key, report)
    }
    if (at > report.bucket.stop) report.bucket.stop = at
    const toggle = (report.bucket.toggles[metric.featureName] ??= { yes: 0, no: 0, variants: {} })
    toggle.yes = Math.min(toggle.yes + metric.yes, Number.MAX_SAFE_INTEGER)
    toggle.no = Math.min(toggle.no + metric.no, Number.MAX_SAFE_INTEGER)
    for (const [variant, n] of Object.entries(metric.variants ?? {})) toggle.variants![variant] = Math.min((toggle.variants![variant] ?? 0) + n, Number.MAX_SAFE_INTEGER)
  }
  reports.push(...buckets.values())
  reports.push(...impactReports(body.impactMetrics ?? [], scope))
  return reports
}

/**
 * Edge forwards impact metrics without saying whose they are; the SDKs label every sample with its `appName` and
 * `environment`. Samples are kept for the application and environment their labels name (the reporting Edge's
 * `Unleash-AppName` where they name none).
 */
function impactReports(metrics: ImpactMetric[], scope: { environment?: string; fallback: string; appName: string }): BulkReport[] {
  const byApp = new Map<string, { appName: string; environment: string; metrics: Map<string, ImpactMetric> }>()
  for (const metric of metrics) {
    for (const sample of metric.samples) {
      const labels = sample.labels ?? {}
      const appName = typeof labels.appName === 'string' && labels.appName.trim() ? labels.appName.trim().slice(0, 255) : scope.appName
      const labelled = typeof labels.environment === 'string' && labels.environment ? labels.environment : undefined
      if (scope.environment !== undefined && labelled !== undefined && labelled !== scope.environment) continue
      const environment = scope.environment ?? labelled ?? scope.fallback
      const key = `${appName}\u0000${environment}`
      let group = byApp.get(key)
      if (!group) byApp.set(key, (group = { appName, environment, metrics: new Map() }))
      let into = group.metrics.get(metric.name)
      if (!into) group.metrics.set(metric.name, (into = { ...metric, samples: [] } as ImpactMetric))
      ;(into.samples as unknown[]).push(sample)
    }
  }
  return [...byApp.values()].map((g) => ({ kind: 'metrics', appName: g.appName, environment: g.environment, impactMetrics: [...g.metrics.values()] }))
}
