// npm run bench:events — fills a database with 1,000,000 realistic events and prints the latency of
// event search (GET /api/admin/search/events) through the app, p50/p95 per case. Figures go to bench/RESULTS.md by hand.
import { performance } from 'node:perf_hooks'
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPglite } from '../src/db-node.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { indexEventText } from '../src/events/text-index.js'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 40)
const BATCH = 100_000

const database = await openPglite()
await database.migrate()
const sql = (text: string) => database.client.exec(text)

console.log(`Filling ${EVENTS.toLocaleString()} events (500 projects' worth of flags, 40 types, 300 users, 2 years)...`)
let started = performance.now()
// The text index (src/events/text-index.ts) is filled and built once after the load, as one would for a bulk import.
await sql('drop index if exists event_search_text_trgm_idx')
const types = [
  'feature-created', 'feature-updated', 'feature-metadata-updated', 'feature-environment-enabled', 'feature-environment-disabled',
  'feature-strategy-add', 'feature-strategy-update', 'feature-strategy-remove', 'feature-archived', 'feature-revived',
  'feature-tagged', 'feature-untagged', 'feature-variants-updated', 'feature-environment-variants-updated', 'feature-stale-on',
  'feature-stale-off', 'feature-type-updated', 'strategy-order-changed', 'feature-dependency-added', 'feature-favorited',
  'project-created', 'project-updated', 'segment-created', 'segment-updated', 'api-token-created', 'user-created',
  'environment-created', 'change-request-created', 'change-request-approved', 'change-request-applied',
]
const typeArray = `array[${types.map((t) => `'${t}'`).join(',')}]`
for (let offset = 0; offset < EVENTS; offset += BATCH) {
  const n = Math.min(BATCH, EVENTS - offset)
  // Skewed choices: feature-level types dominate, some flags and users are far busier than others.
  await sql(`
    insert into events (created_at, type, created_by, created_by_user_id, project, environment, feature_name, data, pre_data, tags, label, summary)
    select
      timestamptz '2024-11-01' + (${offset} + g) * (interval '730 days' / ${EVENTS}),
      t.type,
      'user-' || u.id, u.id,
      'project-' || f.id % 50,
      case when g % 3 = 0 then 'production' when g % 3 = 1 then 'development' else null end,
      'flag-' || f.id,
      jsonb_build_object('name', 'flag-' || f.id, 'description', 'Flag ' || f.id || ' for team ' || (f.id % 37), 'enabled', g % 2 = 0, 'rollout', (g % 100)::text),
      case when g % 4 = 0 then null else jsonb_build_object('name', 'flag-' || f.id, 'enabled', g % 2 = 1) end,
      jsonb_build_array(jsonb_build_object('type', 'team', 'value', 'team-' || (f.id % 37))),
      'Label', '**user-' || u.id || '** changed **flag-' || f.id || '**'
    from generate_series(1, ${n}) as g
    cross join lateral (select (floor(power(random() + g * 0, 2) * 5000))::int as id) as f
    cross join lateral (select 1 + (floor(power(random() + g * 0, 3) * 300))::int as id) as u
    cross join lateral (select (${typeArray})[1 + floor(power(random() + g * 0, 2) * ${types.length})::int] as type) as t
  `)
  process.stdout.write(`  ${(offset + n).toLocaleString()}\r`)
}
console.log(`Loaded in ${((performance.now() - started) / 1000).toFixed(1)} s; building the trigram index...`)
started = performance.now()
await sql(`insert into event_search_text (event_id, text) select id, lower(coalesce(data::text, '') || ' ' || coalesce(pre_data::text, '') || ' ' || tags::text) from events`)
await sql('create index event_search_text_trgm_idx on event_search_text using gin (text gin_trgm_ops)')
// Moves indexed_through to the newest event (nothing else writes: quiet).
await indexEventText(database.db)
await sql('analyze events; analyze event_search_text')
console.log(`Indexed in ${((performance.now() - started) / 1000).toFixed(1)} s.\n`)

const token = (await createToken(database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'bench', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
const app = createApp({ db: () => database.db })

const cases: [string, string][] = [
  ['no filter', ''],
  ['feature', '?feature=IS:flag-42'],
  ['project', '?project=IS:project-7'],
  ['type', '?type=IS:feature-strategy-update'],
  ['createdBy', '?createdBy=IS:150'],
  ['feature + type', '?feature=IS:flag-42&type=IS:feature-created'],
  ['date range (1 month)', '?from=IS:2025-06-01&to=IS:2025-06-30'],
  ['query', '?query=flag-4242'],
  ['offset 100,000', '?offset=100000'],
]

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const rows: string[] = []
for (const [name, query] of cases) {
  const times: number[] = []
  let total = 0
  let first = 0
  for (let i = 0; i < RUNS + 3; i++) {
    const t0 = performance.now()
    const res = await app.request(`/api/admin/search/events${query}`, { headers: { authorization: token } })
    const body = (await res.json()) as { total: number }
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`)
    if (i === 0) first = performance.now() - t0
    if (i >= 3) times.push(performance.now() - t0)
    total = body.total
  }
  times.sort((a, b) => a - b)
  rows.push(`| ${name} | ${total.toLocaleString('en-US')} | ${first.toFixed(1)} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} |`)
  console.log(rows.at(-1))
}
// "first" is the first call of a case: its total is not cached yet (see countMatches in src/events/search.ts).
console.log(`\n| case | matches | first ms | p50 ms | p95 ms |\n|---|---|---|---|---|\n${rows.join('\n')}`)
await app.idle()
await database.close()
