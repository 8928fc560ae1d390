// Where PostgreSQL's CPU per description PATCH goes, part by part (round nine): the flag patch's statement
// (patchMetadataStatement in src/flags/store.ts, copied from auto_explain's log with its version guard dropped so
// that every run writes) replayed as a named prepared statement on one connection over 100 flags, with one CTE part
// or more left out; CPU of that backend from /proc per execution, the variants alternated in blocks. Usage, after
// bench/scratch/write-ab.ts has left a cluster running (KEEP=1) or against any seeded Flagpost database:
//   PARTS_URL=postgres://... npx tsx bench/scratch/write-parts.ts
import { readFileSync } from 'node:fs'
import pg from 'pg'

const update = `w0 as (update "features" set description = $1, type = $2, stale = $3, impression_data = $4, version = version + 1
  where name = $5 and project = $6 and archived_at is null returning name)`
const insertEvents = (guard: boolean) => `e as (
  insert into "events" (created_at, created_by, created_by_user_id, type, project, environment, feature_name, data, pre_data, tags, label, summary)
  select $7::timestamptz, $8::text, $9::integer, v.*
  from jsonb_to_recordset($10::jsonb) as v (type text, project text, environment text, feature_name text, data jsonb, pre_data jsonb, tags jsonb, label text, summary text)
  ${guard ? 'where exists (select from w0)' : ''}
  returning id, type, project, environment, feature_name)`
const collaborators = `c as (
  insert into "feature_collaborators" (feature_name, created_by, created_by_user_id, latest_event_id)
  select e.feature_name, $8::text, $9::integer, max(e.id) from e where e.feature_name is not null
  group by e.feature_name order by e.feature_name
  on conflict (feature_name, created_by, (coalesce(created_by_user_id, -1)))
  do update set latest_event_id = greatest("feature_collaborators".latest_event_id, excluded.latest_event_id))`
const outbox = `o as (
  insert into "integration_outbox" (integration_id, event_id, created_at)
  select a.id, e.id, $7::timestamptz from e
  join "addons" a on a.enabled and e.type = any(a.events)
    and (cardinality(a.projects) = 0 or '*' = any(a.projects) or e.project = any(a.projects))
    and (cardinality(a.environments) = 0 or '*' = any(a.environments) or e.environment = any(a.environments))
  returning 1)`
const returned = `(select json_build_object(
  'favorite', exists (select 1 from favorite_features ff where ff.principal = $11 and ff.feature_name = $5::text),
  'lastSeen', coalesce((select json_object_agg(fe.environment, (extract(epoch from fe.last_seen_at) * 1000)::float8) from feature_environments fe where fe.feature_name = $5::text), '{}'),
  'collaborators', coalesce((select json_agg(json_build_object('id', c.created_by_user_id, 'name', c.created_by) order by c.latest_event_id desc) from feature_collaborators c where c.feature_name = $5::text), '[]'),
  'children', coalesce((select json_agg(d.child order by d.child) from feature_dependencies d where d.parent = $5::text), '[]'),
  'dependencies', coalesce((select json_agg(json_build_object('feature', d.parent, 'enabled', d.enabled, 'variants', d.variants) order by d.parent) from feature_dependencies d where d.child = $5::text), '[]')))`

type Parts = { events: boolean; collaborators: boolean; outbox: boolean; returned: boolean; floor?: string; unordered?: boolean }
function text(p: Parts): string {
  if (p.floor) return p.floor
  if (p.unordered) return text({ ...p, unordered: false }).replace(/ order by (c\.latest_event_id desc|d\.child|d\.parent)\)/g, ')')
  const ctes = [update, ...(p.events ? [insertEvents(true)] : []), ...(p.events && p.collaborators ? [collaborators] : []), ...(p.events && p.outbox ? [outbox] : [])]
  const select = p.events
    ? `select count(*)::int as written${p.outbox ? ', (select count(*) from o)::int as queued' : ''}${p.returned ? `, ${returned} as returned` : ''} from e`
    : `select count(*)::int as written${p.returned ? `, ${returned} as returned` : ''} from w0`
  // Parameters a variant does not use are still sent (typed by a no-op reference) so every variant binds the same values.
  return `with ${ctes.join(',\n')} ${select}${p.events ? '' : ' where $7::timestamptz is not null and $8::text is not null and $9::integer is not null and $10::jsonb is not null'}${p.returned ? '' : ' and $11::text is not null'}`.replace(/ from (e|w0) and /, ' from $1 where ')
}

const variants: [string, Parts][] = [
  ['whole statement', { events: true, collaborators: true, outbox: true, returned: true }],
  ['without the answer\'s parts', { events: true, collaborators: true, outbox: true, returned: false }],
  ['the answer\'s aggregates unordered', { events: true, collaborators: true, outbox: true, returned: true, unordered: true }],
  ['without the outbox', { events: true, collaborators: true, outbox: false, returned: true }],
  ['without the collaborator', { events: true, collaborators: false, outbox: true, returned: true }],
  ['the flag update alone', { events: false, collaborators: false, outbox: false, returned: false }],
  // The floor of any write: a HOT update of one unindexed column (one commit, its flush) and a read (no commit).
  ['a HOT update of the version', { events: false, collaborators: false, outbox: false, returned: false, floor: 'update features set version = version + 1 where name = $5 and $1::text is not null and $2::text is not null and $3::boolean is not null and $4::boolean is not null and $6::text is not null and $7::timestamptz is not null and $8::text is not null and $9::integer is not null and $10::jsonb is not null and $11::text is not null' }],
  ['a read of the flag (no commit)', { events: false, collaborators: false, outbox: false, returned: false, floor: 'select version from features where name = $5 and $1::text is not null and $2::text is not null and $3::boolean is not null and $4::boolean is not null and $6::text is not null and $7::timestamptz is not null and $8::text is not null and $9::integer is not null and $10::jsonb is not null and $11::text is not null' }],
]

const cpu = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) * 10_000
}

async function main() {
  const client = new pg.Client({ connectionString: process.env.PARTS_URL })
  await client.connect()
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
  const flags = (await client.query<{ name: string; project: string; type: string }>(`select name, project, type from features where project = 'default' order by name limit 100`)).rows
  const totals = new Map(variants.map(([name]) => [name, { micros: 0, runs: 0 }]))
  let n = 0
  const BLOCK = 400
  for (let round = 0; round < Number(process.env.ROUNDS ?? 6); round++) {
    for (const [name, parts] of round % 2 ? [...variants].reverse() : variants) {
      const statement = `parts_${variants.findIndex(([v]) => v === name)}`
      const before = cpu(pid)
      for (let i = 0; i < BLOCK; i++, n++) {
        const f = flags[n % flags.length]!
        const data = { name: f.name, type: f.type, stale: false, project: f.project, archived: false, description: `Parts description ${n}`, impressionData: false }
        const events = JSON.stringify([{ type: 'feature-metadata-updated', project: f.project, feature_name: f.name, data, pre_data: { ...data, description: `Parts description ${n - 1}` }, tags: [], label: 'Flag updated', summary: `**bench** updated the metadata of **${f.name}**` }])
        await client.query({ name: statement, text: text(parts), values: [`Parts description ${n}`, f.type, false, false, f.name, f.project, new Date().toISOString(), 'bench', -42, events, 'token:1'] })
      }
      const t = totals.get(name)!
      if (round > 0) {
        t.micros += cpu(pid) - before
        t.runs += BLOCK
      }
    }
  }
  for (const [name, t] of totals) console.log(`${name}: ${Math.round(t.micros / t.runs)} µs of backend CPU per execution (${t.runs} runs)`)
  await client.end()
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
