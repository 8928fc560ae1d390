import { lazy, Suspense, useEffect, useState } from 'react'
import { Anchor, Button, Card, Center, Group, Loader, SegmentedControl, Stack, Text, Title } from '@mantine/core'
import { useInViewport, useLocalStorage } from '@mantine/hooks'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'wouter'
import { api, ok, type Schemas } from '../api/client'
import { useAllows } from '../api/session'
import { ErrorMessage } from './error-message'
import type { ExposurePoint } from './metrics-chart'

// recharts, most of a flag page's first visit: loaded only when the chart is asked for (see ExposureChart).
const MetricsChart = lazy(() => import('./metrics-chart'))
const CHART_HEIGHT = 220

const HOUR = 3_600_000
const DAY = 24 * HOUR
const PERIODS = {
  '48h': { label: 'Last 48 hours', hoursBack: 48, step: HOUR, count: 48 },
  '30d': { label: 'Last 30 days', hoursBack: 720, step: DAY, count: 30 },
} as const
type Period = keyof typeof PERIODS

/**
 * The flag's exposures (yes/no) in an environment: per hour over 48 hours or per day over 30 days, from the client
 * metrics SDKs reported (`GET /api/admin/client-metrics/features/{name}/raw`), every bucket shown (zero when none).
 */
export function FlagMetrics({ flag }: { flag: Schemas['featureSchema'] }) {
  const [period, setPeriod] = useState<Period>('48h')
  const [environment, setEnvironment] = useState(flag.environments[0]?.name ?? '')
  const { hoursBack, step, count } = PERIODS[period]
  const metrics = useQuery({
    queryKey: ['flag-metrics', flag.name, hoursBack],
    queryFn: () => ok(api.GET('/api/admin/client-metrics/features/{name}/raw', { params: { path: { name: flag.name }, query: { hoursBack: String(hoursBack) } } })),
    refetchInterval: 60_000,
  })
  const now = Date.now()
  const last = now - (now % step)
  const buckets = new Map<number, ExposurePoint>()
  for (let i = count - 1; i >= 0; i--) {
    const at = last - i * step
    const d = new Date(at)
    const label = step === HOUR ? `${d.toLocaleDateString(undefined, { weekday: 'short' })} ${String(d.getHours()).padStart(2, '0')}:00` : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })
    buckets.set(at, { label, yes: 0, no: 0 })
  }
  for (const row of metrics.data?.data ?? []) {
    if (row.environment !== environment) continue
    const at = Date.parse(row.timestamp)
    const bucket = buckets.get(at - (at % step))
    if (bucket) {
      bucket.yes += row.yes
      bucket.no += row.no
    }
  }
  const points = [...buckets.values()]
  const yes = points.reduce((n, p) => n + p.yes, 0)
  const no = points.reduce((n, p) => n + p.no, 0)
  return (
    <Card withBorder component="section" aria-label="Metrics">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Title order={2} size="h4">
          Exposures
        </Title>
        <Group gap="xs">
          <SegmentedControl size="xs" aria-label="Environment of the metrics" value={environment} onChange={setEnvironment} data={flag.environments.map((e) => e.name)} />
          <SegmentedControl size="xs" aria-label="Period" value={period} onChange={(v) => setPeriod(v as Period)} data={Object.entries(PERIODS).map(([value, p]) => ({ value, label: p.label }))} />
        </Group>
      </Group>
      {metrics.isError ? (
        <ErrorMessage error={metrics.error} />
      ) : (
        <>
          <Text size="sm" mt="xs" role="status" aria-label="Exposure totals">
            {metrics.isPending ? 'Loading metrics…' : `${environment}, ${PERIODS[period].label.toLowerCase()}: ${yes + no} exposures, ${yes} yes (${yes + no > 0 ? Math.round((100 * yes) / (yes + no)) : 0}%) and ${no} no`}
          </Text>
          {!metrics.isPending && yes + no === 0 ? (
            <NoExposures environment={environment} period={PERIODS[period].label.toLowerCase()} />
          ) : (
            <ExposureChart points={metrics.isPending ? undefined : points} />
          )}
        </>
      )}
    </Card>
  )
}

/**
 * The chart's place, as tall as the chart: a button until the user asks for the chart once (remembered in this
 * browser), then the chart, mounted as its place scrolls into view. A first visit does not load recharts, and the
 * chart drawn later moves nothing on the page.
 */
function ExposureChart({ points }: { points: ExposurePoint[] | undefined }) {
  const [shown, setShown] = useLocalStorage({ key: 'flagpost-exposures-chart', defaultValue: false, getInitialValueInEffect: false })
  const { ref, inViewport } = useInViewport<HTMLDivElement>()
  const [seen, setSeen] = useState(false)
  useEffect(() => {
    if (shown && inViewport) setSeen(true)
  }, [shown, inViewport])
  return (
    <div ref={ref} style={{ height: CHART_HEIGHT }} data-testid="exposure-chart">
      {!shown ? (
        <Center h="100%" style={{ border: '1px dashed var(--mantine-color-default-border)', borderRadius: 'var(--mantine-radius-sm)' }}>
          <Button variant="default" size="xs" onClick={() => setShown(true)}>
            Show the chart
          </Button>
        </Center>
      ) : (
        <Suspense fallback={<Loader size="sm" />}>{seen && points !== undefined && <MetricsChart points={points} height={CHART_HEIGHT} />}</Suspense>
      )}
    </div>
  )
}

/** Where the chart would be (as tall) when no SDK reported the flag in the period: what to do about it, not a flat chart. */
function NoExposures({ environment, period }: { environment: string; period: string }) {
  const allows = useAllows()
  const mayCreateToken = allows('CREATE_CLIENT_API_TOKEN') || allows('CREATE_FRONTEND_API_TOKEN')
  return (
    <Center h={CHART_HEIGHT} data-testid="exposure-chart" style={{ border: '1px dashed var(--mantine-color-default-border)', borderRadius: 'var(--mantine-radius-sm)' }}>
      <Stack gap={4} align="center" maw={420}>
        <Text size="sm" ta="center">
          No SDK reported this flag in {environment} over the {period}.
        </Text>
        <Text size="sm" c="dimmed" ta="center">
          Exposures appear here once an SDK connected with an API token evaluates the flag and sends its metrics.
        </Text>
        {mayCreateToken && (
          <Anchor component={Link} href="/api-tokens?create=token" size="sm">
            Create an API token for an SDK
          </Anchor>
        )}
      </Stack>
    </Center>
  )
}
