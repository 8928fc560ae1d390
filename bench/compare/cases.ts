// The operations both servers serve, as autocannon options per server. Requests vary per call (flag,
// context, filter), and writes really change state on every call (alternating on/off, a new description,
// a new variant payload), so that neither server answers from a no-op path.
import type autocannon from 'autocannon'
import { FLAGS, PROJECTS, seededVariants } from './seed.js'
import type { ServerKind } from './servers.js'

export interface Target {
  kind: ServerKind | 'bare'
  url: string
  adminToken: string
  clientToken: string
  frontendToken: string
  /** The ETag of GET /api/client/features as the seed left it. */
  etag: string | null
}

export interface Case {
  /** The row's name in the table. */
  name: string
  /** What each server is asked, when the paths differ. */
  paths?: Record<ServerKind, string>
  expect: number
  write: boolean
  /** Also measured against the bare Hono route (the SDK polls). */
  againstBare?: boolean
  /** autocannon options (minus url, connections, duration) for one server; called once per server. */
  options(target: Target): autocannon.Options | undefined
}

type Built = { method?: string; path: string; body?: string; headers?: Record<string, string> }

/** One autocannon request whose method, path and body come from `next(n)` for the n-th call. */
function varying(target: Target, headers: Record<string, string>, next: (n: number) => Built): autocannon.Options {
  let n = 0
  return {
    url: target.url,
    headers,
    requests: [
      {
        setupRequest: (request) => {
          const built = next(n++)
          const merged = { ...request, method: (built.method ?? 'GET') as autocannon.Request['method'], path: built.path, headers: { ...request.headers, ...headers, ...built.headers } }
          return built.body === undefined ? merged : { ...merged, body: built.body }
        },
      },
    ],
  }
}

const admin = (t: Target) => ({ authorization: t.adminToken })
const json = { 'content-type': 'application/json' }
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const defaultFlags = FLAGS.filter((f) => f.project === 'default')
const variantFlags = defaultFlags.filter((f) => f.hasVariants)
const featurePath = (f: { project: string; name: string }) => `/api/admin/projects/${f.project}/features/${f.name}`
const countries = ['NO', 'SE', 'US', 'DE', 'FR', 'IN']
/** What a server SDK sends with its polls. */
export const SDK_HEADERS = { 'unleash-appname': 'bench', 'unleash-client-spec': '5.2.0' }

export const CASES: Case[] = [
  {
    name: 'project overview',
    paths: { flagpost: 'GET /api/admin/projects/:id (the project with its flags)', unleash: 'GET /api/admin/projects/:id/overview' },
    expect: 200,
    write: false,
    options: (t) => varying(t, admin(t), (n) => ({ path: `/api/admin/projects/${PROJECTS[n % PROJECTS.length]!.id}${t.kind === 'unleash' ? '/overview' : ''}` })),
  },
  {
    name: 'flag read',
    paths: { flagpost: 'GET /api/admin/projects/:id/features/:name', unleash: 'same' },
    expect: 200,
    write: false,
    options: (t) => varying(t, admin(t), (n) => ({ path: featurePath(FLAGS[n % FLAGS.length]!) })),
  },
  {
    name: 'switch off (on in between)',
    paths: { flagpost: 'POST …/environments/development/off, then …/on', unleash: 'same' },
    expect: 200,
    write: true,
    options: (t) => {
      // Each flag alternates from its seeded state, so every call switches it (off, on, off, ...).
      const on = new Map(defaultFlags.map((f) => [f.name, f.enabled]))
      return varying(t, admin(t), (n) => {
        const flag = defaultFlags[n % defaultFlags.length]!
        const action = on.get(flag.name) ? 'off' : 'on'
        on.set(flag.name, action === 'on')
        return { method: 'POST', path: `${featurePath(flag)}/environments/development/${action}` }
      })
    },
  },
  {
    name: 'PATCH description',
    paths: { flagpost: 'PATCH /api/admin/projects/:id/features/:name', unleash: 'same' },
    expect: 200,
    write: true,
    options: (t) =>
      varying(t, { ...admin(t), ...json }, (n) => ({
        method: 'PATCH',
        path: featurePath(defaultFlags[n % defaultFlags.length]!),
        body: JSON.stringify([{ op: 'replace', path: '/description', value: `Benchmark description ${n}` }]),
      })),
  },
  {
    // Both servers change the variants of both environments. Unleash 8.2 has no PATCH of a flag's variants (it answered
    // this row with its per-environment PATCH, one environment, until 2026-11-29): its route for several environments is
    // PUT …/variants-batch, with the whole list.
    name: 'variants of both environments',
    paths: { flagpost: 'PATCH …/features/:name/variants (both environments)', unleash: 'PUT …/variants-batch (development and production)' },
    expect: 200,
    write: true,
    options: (t) =>
      varying(t, { ...admin(t), ...json }, (n) => {
        const flag = variantFlags[n % variantFlags.length]!
        if (t.kind === 'unleash') {
          const i = FLAGS.indexOf(flag)
          return { method: 'PUT', path: `${featurePath(flag)}/variants-batch`, body: JSON.stringify({ variants: seededVariants(i, `A-${n}`), environments: ['development', 'production'] }) }
        }
        return { method: 'PATCH', path: `${featurePath(flag)}/variants`, body: JSON.stringify([{ op: 'replace', path: '/0/payload/value', value: `A-${n}` }]) }
      }),
  },
  {
    name: 'per-environment variants PATCH',
    paths: { flagpost: 'PATCH …/environments/development/variants', unleash: 'same' },
    expect: 200,
    write: true,
    options: (t) =>
      varying(t, { ...admin(t), ...json }, (n) => ({
        method: 'PATCH',
        path: `${featurePath(variantFlags[n % variantFlags.length]!)}/environments/development/variants`,
        body: JSON.stringify([{ op: 'replace', path: '/1/payload/value', value: `{"n":${n}}` }]),
      })),
  },
  {
    name: 'events of a flag',
    paths: { flagpost: 'GET /api/admin/events/:name', unleash: 'same' },
    expect: 200,
    write: false,
    options: (t) => varying(t, admin(t), (n) => ({ path: `/api/admin/events/${FLAGS[n % FLAGS.length]!.name}` })),
  },
  {
    name: 'search events, no filter',
    paths: { flagpost: 'GET /api/admin/search/events', unleash: 'same' },
    expect: 200,
    write: false,
    options: (t) => ({ url: `${t.url}/api/admin/search/events`, headers: admin(t) }),
  },
  {
    name: 'search events, filtered',
    paths: { flagpost: 'GET /api/admin/search/events?project=IS:…&feature=IS:…&type=IS:…&from=IS:…&to=IS:…', unleash: 'same' },
    expect: 200,
    write: false,
    options: (t) =>
      varying(t, admin(t), (n) => {
        const flag = FLAGS[n % FLAGS.length]!
        // Three kinds of filter in turn: one flag; a project and an event type; a date range.
        const query = [
          `feature=IS:${flag.name}`,
          `project=IS:${flag.project}&type=IS:feature-metadata-updated`,
          `from=IS:${day(-1)}&to=IS:${day(1)}&type=IS:feature-strategy-add`,
        ][n % 3]
        return { path: `/api/admin/search/events?${query}` }
      }),
  },
  {
    name: 'playground, advanced (200 flags × 4 contexts)',
    paths: { flagpost: 'POST /api/admin/playground/advanced', unleash: 'same' },
    expect: 200,
    write: false,
    options: (t) =>
      varying(t, { ...admin(t), ...json }, (n) => ({
        method: 'POST',
        path: '/api/admin/playground/advanced',
        body: JSON.stringify({
          environments: ['development'],
          projects: '*',
          context: { appName: 'bench', userId: `user-${n % 300},user-${(n + 7) % 300}`, properties: { country: `${countries[n % countries.length]},NO`, appVersion: '1.4.0', plan: 'pro' } },
        }),
      })),
  },
  {
    name: 'GET /api/client/features (200)',
    expect: 200,
    write: false,
    againstBare: true,
    options: (t) => ({ url: `${t.url}/api/client/features`, headers: { authorization: t.clientToken, ...SDK_HEADERS } }),
  },
  {
    name: 'GET /api/client/features, unchanged (304)',
    expect: 304,
    write: false,
    againstBare: true,
    options: (t) =>
      t.etag === null ? undefined : { url: `${t.url}/api/client/features`, headers: { authorization: t.clientToken, ...SDK_HEADERS, 'if-none-match': t.etag } },
  },
  {
    name: 'GET /api/frontend (varied contexts)',
    expect: 200,
    write: false,
    options: (t) =>
      varying(t, { authorization: t.frontendToken }, (n) => ({
        path:
          `/api/frontend?appName=bench&userId=user-${n % 1000}&sessionId=s${n}` +
          `&properties[country]=${countries[n % countries.length]}&properties[appVersion]=1.${n % 5}.0&properties[plan]=${n % 3 ? 'free' : 'pro'}`,
      })),
  },
]
