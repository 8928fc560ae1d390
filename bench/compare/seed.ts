// The data both servers get, through their admin APIs and in the same order: 3 projects, 5 segments,
// 200 flags with strategies, constraints, segments and variants, and description changes until the
// audit log holds 10,000 events.
import { inParallel, type Api } from './api.js'

export const PROJECTS = [
  { id: 'default', name: 'Default', flags: 100 },
  { id: 'checkout', name: 'Checkout', flags: 50 },
  { id: 'search', name: 'Search', flags: 50 },
] as const
export const FLAG_COUNT = PROJECTS.reduce((n, p) => n + p.flags, 0)
export const EVENT_TARGET = Number(process.env.BENCH_EVENTS ?? 10_000)

export interface Flag {
  name: string
  project: string
  /** Enabled in development after the seed. */
  enabled: boolean
  hasVariants: boolean
}

export const FLAGS: Flag[] = Array.from({ length: FLAG_COUNT }, (_, i) => {
  let project: string = PROJECTS[0].id
  for (let first = 0, p = 0; p < PROJECTS.length; first += PROJECTS[p]!.flags, p++) if (i >= first) project = PROJECTS[p]!.id
  return { name: `flag-${String(i).padStart(3, '0')}`, project, enabled: i % 10 !== 9, hasVariants: i % 2 === 0 }
})

/** The variants the seed gives flag `i` in both environments, the first one's payload `first`. */
export const seededVariants = (i: number, first: string) => [
  { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: first } },
  { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: `{"flag":${i}}` } },
]

const SEGMENTS = [
  { name: 'beta-testers', constraints: [{ contextName: 'plan', operator: 'IN', values: ['pro', 'enterprise'] }] },
  { name: 'nordics', constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE', 'DK', 'FI', 'IS'] }] },
  { name: 'internal', constraints: [{ contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'], caseInsensitive: true }] },
  { name: 'new-app', constraints: [{ contextName: 'appVersion', operator: 'SEMVER_GT', value: '2.0.0' }] },
  { name: 'big-accounts', constraints: [{ contextName: 'seats', operator: 'NUM_GTE', value: '100' }, { contextName: 'plan', operator: 'NOT_IN', values: ['free'] }] },
]

export interface SeedResult {
  segments: number
  flags: number
  events: number
  descriptionChanges: number
  clientToken: string
  frontendToken: string
}

async function totalEvents(api: Api): Promise<number> {
  return (await api<{ total: number }>('GET', '/api/admin/search/events?limit=1')).total
}

/** Loads the data; `createProjects` makes the projects other than `default` (Unleash OSS has no API for it). */
export async function seed(api: Api, createProjects: (projects: { id: string; name: string }[]) => Promise<void>, log: (line: string) => void): Promise<SeedResult> {
  await createProjects(PROJECTS.filter((p) => p.id !== 'default'))
  const segmentIds: number[] = []
  for (const s of SEGMENTS) segmentIds.push((await api<{ id: number }>('POST', '/api/admin/segments', { ...s, description: `Benchmark segment ${s.name}` })).id)

  const createFlag = async (i: number) => {
    const flag = FLAGS[i]!
    const base = `/api/admin/projects/${flag.project}/features`
    const dev = `${base}/${flag.name}/environments/development`
    const prod = `${base}/${flag.name}/environments/production`
    await api('POST', base, { name: flag.name, description: `Flag ${i} of the side-by-side benchmark`, type: i % 7 === 0 ? 'experiment' : 'release', impressionData: i % 6 === 0 })
    await api('POST', `${dev}/strategies`, {
      name: 'flexibleRollout',
      parameters: { rollout: String((i * 7) % 101), stickiness: 'default', groupId: flag.name },
      constraints: [
        { contextName: 'country', operator: 'IN', values: ['NO', 'SE', 'DK', 'FI', 'DE', 'FR', 'NL'] },
        { contextName: 'appVersion', operator: 'SEMVER_GT', value: '1.2.0' },
        ...(i % 3 === 0 ? [{ contextName: 'plan', operator: 'NOT_IN', values: ['trial'], inverted: false }] : []),
      ],
      segments: i % 4 === 0 ? [segmentIds[i % segmentIds.length]!] : [],
      ...(i % 5 === 0 ? { variants: [{ name: 'strategy-variant', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: `sv-${i}` } }] } : {}),
    })
    // Unleash 8 has no userWithId strategy any more: a user list is a constraint.
    if (i % 3 === 0) {
      await api('POST', `${dev}/strategies`, {
        name: 'flexibleRollout',
        parameters: { rollout: '100', stickiness: 'default', groupId: flag.name },
        constraints: [{ contextName: 'userId', operator: 'IN', values: Array.from({ length: 20 }, (_, k) => `user-${k * 13 + i}`) }],
      })
    }
    if (i % 2 === 0) {
      await api('POST', `${prod}/strategies`, { name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'default', groupId: flag.name }, constraints: [{ contextName: 'country', operator: 'IN', values: ['NO'] }] })
      // The same variants in both environments (the flag's variants PATCH sets them everywhere).
      const variants = seededVariants(i, `A-${i}`)
      await api('PUT', `${dev}/variants`, variants)
      await api('PUT', `${prod}/variants`, variants)
    }
    if (flag.enabled) await api('POST', `${dev}/on`)
    if (i % 4 === 0) await api('POST', `${prod}/on`)
  }
  await inParallel(FLAG_COUNT, 4, createFlag)

  const clientToken = (await api<{ secret: string }>('POST', '/api/admin/api-tokens', { tokenName: 'bench-backend', type: 'backend', environment: 'development', projects: ['*'] })).secret
  const frontendToken = (await api<{ secret: string }>('POST', '/api/admin/api-tokens', { tokenName: 'bench-frontend', type: 'frontend', environment: 'development', projects: ['*'] })).secret

  // Real changes, spread over every flag, until the audit log holds EVENT_TARGET events.
  let changes = 0
  for (let total = await totalEvents(api); total < EVENT_TARGET; total = await totalEvents(api)) {
    const missing = EVENT_TARGET - total
    log(`  ${total.toLocaleString('en')} events; ${missing.toLocaleString('en')} description changes to go`)
    await inParallel(missing, 8, async () => {
      const n = changes++
      const flag = FLAGS[n % FLAGS.length]!
      await api('PATCH', `/api/admin/projects/${flag.project}/features/${flag.name}`, [{ op: 'replace', path: '/description', value: `Description change ${n} of ${flag.name}` }])
    })
  }
  return { segments: segmentIds.length, flags: FLAG_COUNT, events: await totalEvents(api), descriptionChanges: changes, clientToken, frontendToken }
}
