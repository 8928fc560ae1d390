// npm run bench:search — fills a database with 10,000 flags over 5 projects (environments, strategies, segments,
// tags, lifecycle stages, favorites, SDK sightings, an archive) and prints the latency of the flag search
// (GET /api/admin/search/features) through the app, p50/p95 per case. Figures go to bench/RESULTS.md by hand.
import { performance } from 'node:perf_hooks'
import { createApp } from '../src/app.js'
import { createToken } from '../src/api-tokens/store.js'
import { openPglite } from '../src/db-node.js'
import { SYSTEM_ACTOR } from '../src/core/principal.js'
import { markPotentiallyStale } from '../src/feature-types/potentially-stale.js'

const FLAGS = Number(process.env.BENCH_FLAGS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 40)

const database = await openPglite()
await database.migrate()
const sql = (text: string) => database.client.exec(text)

console.log(`Filling ${FLAGS.toLocaleString()} flags over 5 projects...`)
let started = performance.now()
await sql(`
  insert into projects (id, name) select 'project-' || p, 'Project ' || p from generate_series(0, 4) p;
  insert into tag_types (name) values ('team');
  insert into tags (type, value) select 'team', 'team-' || g from generate_series(0, 36) g;
  insert into segments (name, constraints) select 'segment-' || g, '[]' from generate_series(0, 9) g;
  insert into features (name, project, type, description, stale, created_at, created_by, created_by_user_id, archived_at)
    select 'flag-' || g, 'project-' || (g % 5),
      (array['release','release','release','experiment','operational','kill-switch','permission'])[1 + g % 7],
      'Flag ' || g || ' of team ' || (g % 37), g % 23 = 0,
      timestamptz '2024-11-01' + g * (interval '730 days' / ${FLAGS}), 'user-' || (g % 50), 1 + g % 50,
      case when g % 10 = 0 then timestamptz '2026-11-01' else null end
    from generate_series(1, ${FLAGS}) g;
  insert into feature_environments (feature_name, environment, enabled, last_seen_at)
    select f.name, e.name, (hashtext(f.name || e.name) % 3) = 0,
      case when hashtext(f.name) % 4 = 0 then timestamptz '2026-10-01' + (abs(hashtext(f.name || e.name)) % 40) * interval '1 day' else null end
    from features f cross join (values ('development'), ('production')) e(name);
  insert into feature_strategies (id, feature_name, environment, strategy_name, disabled)
    select gen_random_uuid(), fe.feature_name, fe.environment, 'flexibleRollout', false from feature_environments fe where fe.enabled;
  insert into feature_strategy_segments (strategy_id, segment_id)
    select s.id, (select id from segments order by id limit 1 offset abs(hashtext(s.feature_name)) % 10) from feature_strategies s where hashtext(s.id::text) % 5 = 0;
  insert into feature_tags (feature_name, tag_type, tag_value)
    select f.name, 'team', 'team-' || (substring(f.name from 6)::int % 37) from features f;
  insert into feature_lifecycles (feature_name, stage, entered_stage_at)
    select f.name, (array['initial','pre-live','live','completed'])[1 + abs(hashtext(f.name)) % 4], f.created_at + interval '1 day' from features f;
  insert into favorite_features (principal, feature_name) select 'token:1', name from features where hashtext(name) % 50 = 0;
  analyze;
`)
console.log(`Loaded in ${((performance.now() - started) / 1000).toFixed(1)} s.`)
started = performance.now()
const job = await markPotentiallyStale(database.db, new Date('2026-11-25T00:00:00Z'))
console.log(`Potentially-stale job: marked ${job.marked.toLocaleString()} flags (with their events) in ${(performance.now() - started).toFixed(0)} ms.`)
started = performance.now()
await markPotentiallyStale(database.db, new Date('2026-11-25T00:00:00Z'))
console.log(`Again, nothing to mark: ${(performance.now() - started).toFixed(0)} ms.\n`)
await sql('analyze')

const token = (await createToken(database.db, { actor: SYSTEM_ACTOR, now: new Date() }, { tokenName: 'bench', type: 'admin', projects: ['*'], environment: '*', expiresAt: null })).secret
const app = createApp({ db: () => database.db })

const cases: [string, string][] = [
  ['no filter (createdAt)', ''],
  ['project', '?project=IS:project-3'],
  ['query (name/description/tag)', '?query=flag-42'],
  ['type + state', '?type=IS_ANY_OF:release,experiment&state=IS:potentially-stale'],
  ['tag', '?tag=INCLUDE:team:team-7'],
  ['segment', '?segment=INCLUDE:segment-3'],
  ['lifecycle', '?lifecycle=IS:live'],
  ['archived', '?archived=IS:true'],
  ['createdAt range', '?createdAt=IS_ON_OR_AFTER:2026-01-01'],
  ['sort by name desc', '?sortBy=name&sortOrder=desc'],
  ['sort by lastSeenAt', '?sortBy=lastSeenAt&sortOrder=desc'],
  ['sort by environment', '?sortBy=environment:production&sortOrder=desc'],
  ['favoritesFirst', '?favoritesFirst=true'],
  ['offset 8,000', '?offset=8000'],
  ['console list (project, 25)', '?project=IS:project-1&limit=25&sortBy=createdAt&sortOrder=desc&favoritesFirst=true'],
]

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const rows: string[] = []
for (const [name, query] of cases) {
  const times: number[] = []
  let total = 0
  for (let i = 0; i < RUNS + 3; i++) {
    const t0 = performance.now()
    const res = await app.request(`/api/admin/search/features${query}`, { headers: { authorization: token } })
    const body = (await res.json()) as { total: number }
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`)
    if (i >= 3) times.push(performance.now() - t0)
    total = body.total
  }
  times.sort((a, b) => a - b)
  rows.push(`| ${name} | \`${query || '(none)'}\` | ${total.toLocaleString('en-US')} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} |`)
  console.log(rows.at(-1))
}
console.log(`\n| case | query | matches | p50 ms | p95 ms |\n|---|---|---:|---:|---:|\n${rows.join('\n')}`)
await app.idle()
await database.close()
