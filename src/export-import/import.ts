import { sql, type SQL } from 'drizzle-orm'
import { contextFields, featureDependencies, featureEnvironments, featureLinks, featureLifecycles, features, featureStrategies, featureStrategySegments, featureTags, projectEnvironments, projects, tags, tagTypes } from '../../schema/index.js'
import { batch, queryRows, untilUnchanged, yieldToEventLoop, type Db } from '../db.js'
import { validationError } from '../core/errors.js'
import { recordEvents } from '../events/store.js'
import type { EventTag, NewEvent } from '../events/types.js'
import type { Caller } from '../core/principal.js'
import { segmentIdsOf } from '../strategies/read.js'
import { archivedOf, importTargetSql, segmentsByName, type ImportTarget } from './validate.js'
import type { ImportToggles, ImportValidation } from './schemas.js'
import { toVariants } from '../variants/store.js'
import { checkedStrategy, chainsOf, inImportOrder, linkProblem, linksAfter } from './checks.js'
import { defaultStrategyFor } from '../flags/store.js'
import { flagTagsJson } from '../flags/lock.js'
import { normalizedLinkUrl } from '../links/store.js'

interface StoredStrategy {
  id: string
  name: string
  title: string | null
  disabled: boolean
  featureName: string
  sortOrder: number
  segments: number[]
  constraints: unknown[]
  variants: unknown[]
  parameters: Record<string, string>
}

/** A flag of the project the import names, as the import replaces it. */
interface ProjectFlag {
  name: string
  type: string
  description: string | null
  stale: boolean
  impressionData: boolean
  enabled: boolean
  variants: unknown[]
  strategies: StoredStrategy[]
  tags: EventTag[]
  links: { url: string; title: string | null }[]
}

interface ImportState extends ImportTarget {
  /** The live flags of the project named by the import (as flags or parents), with their state in the environment. */
  own: ProjectFlag[]
  /** The tags named by the import that exist already. */
  knownTags: EventTag[]
}

const unique = (list: string[]) => [...new Set(list)]

/** Events one statement of the import writes: about 0.2 s of PGlite's work (the event search's trigram index). */
const EVENTS_PER_STATEMENT = 2_000
const chunked = <T>(list: T[], size: number): T[][] => Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size))

/** JSON with every object's keys sorted: a stored strategy (jsonb reorders keys) compares equal to the same one of the file. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v))
/** A flag's strategies as SDKs and the routes see them, without their ids. */
const sameStrategies = (a: readonly StoredStrategy[], b: readonly StoredStrategy[]) =>
  a.length === b.length && canonical(a.map(({ id: _, ...s }) => s)) === canonical(b.map(({ id: _, ...s }) => s))

/**
 * Everything the import is decided from, as one row: validate's read and the project's flags it replaces (with their
 * versions, which every write of a flag moves on). The write runs the same SQL again and is made only if it
 * answers the same text.
 */
function stateSql(input: ImportToggles): SQL {
  const { data, project, environment } = input
  const names = unique([...data.features.map((f) => f.name), ...(data.dependencies ?? []).flatMap((d) => d.dependencies.map((p) => p.feature))])
  const tagNames = JSON.stringify((data.featureTags ?? []).map((t) => ({ type: t.tagType ?? 'simple', value: t.tagValue })))
  return sql`select t.*,
    (select coalesce(json_agg(json_build_object('name', f.name, 'version', f.version, 'type', f.type, 'description', f.description, 'stale', f.stale, 'impressionData', f.impression_data,
        'enabled', coalesce(fe.enabled, false), 'variants', coalesce(fe.variants, '[]'::jsonb),
        'strategies', (select coalesce(json_agg(json_build_object('id', fs.id, 'name', fs.strategy_name, 'title', fs.title, 'disabled', fs.disabled, 'featureName', fs.feature_name,
            'sortOrder', fs.sort_order, 'segments', ${segmentIdsOf(sql.raw('fs.id'))}, 'constraints', fs.constraints, 'variants', fs.variants, 'parameters', fs.parameters) order by fs.sort_order, fs.created_at, fs.id), '[]')
          from ${featureStrategies} fs where fs.feature_name = f.name and fs.environment = ${environment}),
        'tags', ${flagTagsJson(sql.raw('f.name'))},
        'links', (select coalesce(json_agg(json_build_object('url', l.url, 'title', l.title) order by l.created_at, l.id), '[]') from ${featureLinks} l where l.feature_name = f.name))
        order by f.name), '[]')
      from ${features} f left join ${featureEnvironments} fe on fe.feature_name = f.name and fe.environment = ${environment}
      where f.name = any(${sql.param(names)}::text[]) and f.project = ${project} and f.archived_at is null) as own,
    (select coalesce(json_agg(json_build_object('type', g.type, 'value', g.value) order by g.type, g.value), '[]') from ${tags} g
      where (g.type, g.value) in (select x.type, x.value from jsonb_to_recordset(${tagNames}::jsonb) as x (type text, value text))) as "knownTags",
    (select json_agg(f.version order by f.name) from ${features} f where f.name = any(${sql.param(names)}::text[])) as versions
    from (${importTargetSql(input)}) t`
}

/** What the import writes and records, decided from the read. */
function plan(caller: Caller, input: ImportToggles, state: ImportState) {
  const { data, project, environment } = input
  const archived = new Set(archivedOf(input, state))
  const imported = data.features.filter((f) => !archived.has(f.name))
  const importedNames = new Set(imported.map((f) => f.name))
  const own = new Map(state.own.map((f) => [f.name, f]))
  const segmentIds = segmentsByName(input, state)
  const segmentNameOf = new Map((data.segments ?? []).map((s) => [s.id, s.name]))
  const events: NewEvent[] = []

  // Tags, per flag, after the import: the export's replace the flag's.
  const tagsAfter = new Map<string, EventTag[]>()
  for (const f of imported) tagsAfter.set(f.name, [])
  for (const t of data.featureTags ?? []) {
    const list = tagsAfter.get(t.featureName)
    const tag = { type: t.tagType ?? 'simple', value: t.tagValue }
    if (list && !list.some((x) => x.type === tag.type && x.value === tag.value)) list.push(tag)
  }
  const about = (name: string) => ({ project, featureName: name, tags: tagsAfter.get(name) ?? own.get(name)?.tags ?? [] })

  const newTagTypes = data.tagTypes.filter((tt, i) => !state.tagTypes.includes(tt.name) && data.tagTypes.findIndex((x) => x.name === tt.name) === i)
  const usedTypes = new Set([...tagsAfter.values()].flat().map((t) => t.type))
  const missingTypes = [...usedTypes].filter((type) => !state.tagTypes.includes(type) && !newTagTypes.some((tt) => tt.name === type))
  if (missingTypes.length > 0) throw validationError(`The import tags flags with tag types it does not define: ${missingTypes.join(', ')}`, missingTypes.map((type) => ({ path: 'body.data.tagTypes', message: `tag type ${type} is neither defined nor in the import` })))
  for (const tt of newTagTypes) events.push({ type: 'tag-type-created', data: { name: tt.name, description: tt.description ?? null, icon: tt.icon ?? null, color: tt.color ?? null } })

  const newFields = (data.contextFields ?? []).filter((c, i, all) => !state.fields.some((f) => f.name === c.name) && all.findIndex((x) => x.name === c.name) === i)
  // As the context fields' routes answer and record a new field; a project's field of the export becomes the target project's own, as Unleash imports it.
  const fieldRows = newFields.map((c) => ({
    name: c.name,
    description: c.description ?? null,
    stickiness: c.stickiness ?? false,
    sortOrder: c.sortOrder ?? 0,
    createdAt: caller.now.toISOString(),
    legalValues: (c.legalValues ?? []).map((v) => (v.description === undefined || v.description === null ? { value: v.value } : { value: v.value, description: v.description })),
    ...(c.project ? { project } : {}),
  }))
  for (const field of fieldRows) events.push({ type: 'context-field-created', project: field.project ?? null, data: field })

  const flagRows = imported.map((f) => {
    const before = own.get(f.name)
    return {
      name: f.name,
      type: f.type ?? before?.type ?? 'release',
      description: f.description === undefined ? (before?.description ?? null) : f.description,
      impressionData: f.impressionData ?? before?.impressionData ?? false,
      stale: f.stale ?? before?.stale ?? false,
      // Only a new flag: validate refuses archiving a live one.
      archived: before === undefined && f.archived === true,
      known: before !== undefined,
    }
  })
  const archivedEvents: NewEvent[] = []
  for (const row of flagRows) {
    const before = own.get(row.name)
    const metadata = { name: row.name, project, description: row.description, type: row.type, stale: row.stale, impressionData: row.impressionData, archived: false }
    if (before) {
      events.push({ ...about(row.name), type: 'feature-metadata-updated', data: metadata, preData: { ...metadata, description: before.description, type: before.type, impressionData: before.impressionData, stale: before.stale } })
      if (row.stale !== before.stale) events.push({ ...about(row.name), type: row.stale ? 'feature-stale-on' : 'feature-stale-off', data: { stale: row.stale }, preData: { stale: before.stale } })
    } else {
      events.push({ ...about(row.name), type: 'feature-created', data: metadata })
      if (row.stale) events.push({ ...about(row.name), type: 'feature-stale-on', data: { stale: true }, preData: { stale: false } })
    }
    // Recorded after the flag's other changes: it is created, set up, then archived.
    if (row.archived) archivedEvents.push({ ...about(row.name), type: 'feature-archived', data: { ...metadata, archived: true }, preData: metadata })
  }

  const givenOf = new Map<string, { s: (typeof data.featureStrategies)[number]; i: number; sortOrder: number | undefined; id: string | null | undefined }[]>()
  for (const [i, s] of data.featureStrategies.entries()) {
    if (!s.featureName || !importedNames.has(s.featureName)) continue
    givenOf.set(s.featureName, [...(givenOf.get(s.featureName) ?? []), { s, i, sortOrder: s.sortOrder, id: s.id }])
  }
  const strategiesOf = new Map<string, StoredStrategy[]>()
  for (const [featureName, given] of givenOf) {
    strategiesOf.set(featureName, inImportOrder(given).map(({ s, i, sortOrder }) => {
    const strategy = checkedStrategy(s, featureName, `body.data.featureStrategies.${i}`)
    return {
      id: crypto.randomUUID(),
      name: strategy.name,
      title: strategy.title,
      disabled: strategy.disabled,
      featureName,
      sortOrder,
      segments: unique((s.segments ?? []).map((id) => String(segmentIds.get(segmentNameOf.get(id) ?? '') ?? ''))).filter((id) => id !== '').map(Number),
      constraints: strategy.constraints,
      variants: strategy.variants,
      parameters: strategy.parameters,
    }
    }))
  }
  const segmentsNotFound = data.featureStrategies.flatMap((s) => s.segments ?? []).filter((id) => !segmentIds.has(segmentNameOf.get(id) ?? ''))
  if (segmentsNotFound.length > 0) throw validationError(`The import's strategies use segments its \`segments\` do not name: ${unique(segmentsNotFound.map(String)).join(', ')}`)

  const switches = new Map((data.featureEnvironments ?? []).map((e) => [e.featureName ?? e.name ?? '', e]))
  const environmentRows: { name: string; enabled: boolean; variants: unknown[] | null }[] = []
  const strategyRows: StoredStrategy[] = []
  const replaced: string[] = []
  for (const { name } of flagRows) {
    const before = own.get(name)
    const env = { ...about(name), environment }
    const strategies = strategiesOf.get(name) ?? []
    const change = switches.get(name)
    const enabled = change?.enabled ?? before?.enabled ?? false
    // An enabled environment never serves an empty strategy list: as Unleash does on enabling, the default strategy.
    if (enabled && !strategies.some((s) => !s.disabled)) {
      const fallback = defaultStrategyFor(null, name)
      strategies.push({ name: fallback.name, parameters: fallback.parameters ?? {}, title: null, disabled: false, constraints: [], variants: [], id: crypto.randomUUID(), featureName: name, sortOrder: Math.max(-1, ...strategies.map((s) => s.sortOrder)) + 1, segments: [] })
    }
    // Strategies the flag already has, in the same order, are kept (their ids too): nothing to replace or record.
    if (!before || !sameStrategies(before.strategies, strategies)) {
      for (const s of before?.strategies ?? []) events.push({ ...env, type: 'feature-strategy-remove', data: null, preData: s })
      for (const s of strategies) events.push({ ...env, type: 'feature-strategy-add', data: s, preData: null })
      strategyRows.push(...strategies)
      replaced.push(name)
    }
    // As Unleash, only variants the export has are set (clearing them would need a permission validate does not ask for).
    // Checked as PUT …/environments/{environment}/variants checks them.
    const variants = change?.variants && change.variants.length > 0 ? toVariants(change.variants, `body.data.featureEnvironments (${name})`) : null
    if (variants) events.push({ ...env, type: 'feature-environment-variants-updated', data: { variants }, preData: { variants: before?.variants ?? [] } })
    if (enabled !== (before?.enabled ?? false)) events.push({ ...env, type: enabled ? 'feature-environment-enabled' : 'feature-environment-disabled', data: { enabled }, preData: { enabled: !enabled } })
    environmentRows.push({ name, enabled, variants })
  }

  const knownTags = new Set(state.knownTags.map((t) => JSON.stringify([t.type, t.value])))
  const newTags = unique([...tagsAfter.values()].flat().map((t) => JSON.stringify([t.type, t.value]))).filter((k) => !knownTags.has(k))
  for (const k of newTags) {
    const [type, value] = JSON.parse(k) as [string, string]
    events.push({ type: 'tag-created', data: { type, value } })
  }
  for (const [name, after] of tagsAfter) {
    const before = own.get(name)?.tags ?? []
    const has = (list: EventTag[], t: EventTag) => list.some((x) => x.type === t.type && x.value === t.value)
    for (const t of before.filter((t) => !has(after, t))) events.push({ project, featureName: name, tags: before, type: 'feature-untagged', data: null, preData: t })
    for (const t of after.filter((t) => !has(before, t))) events.push({ ...about(name), type: 'feature-tagged', data: t, preData: null })
  }

  // Dependencies: as in Unleash's own, one parent per flag and no chains; the import's replace the child's.
  const dependencies = (data.dependencies ?? []).filter((d) => importedNames.has(d.feature))
  const dependencyRows: { child: string; parent: string; enabled: boolean; variants: string[] }[] = []
  for (const d of dependencies) {
    if (d.dependencies.length > 1) throw validationError(`${d.feature} depends on more than one flag: a flag has at most one parent`)
    for (const p of d.dependencies) {
      const enabled = p.enabled ?? true
      const row = { child: d.feature, parent: p.feature, enabled, variants: enabled ? unique(p.variants ?? []) : [] }
      if (row.parent === row.child) throw validationError(`${row.child} cannot depend on itself`)
      dependencyRows.push(row)
    }
  }
  const chained = chainsOf(linksAfter(input, importedNames, state.links).links)
  if (chained.length > 0) throw validationError(`Dependencies cannot be chained: ${chained.join(', ')}`)
  const parentBefore = new Map<string, (typeof state.links)[number]>()
  for (const l of state.links) if (!parentBefore.has(l.child)) parentBefore.set(l.child, l)
  for (const row of dependencyRows) {
    const before = parentBefore.get(row.child) ?? null
    events.push({ ...about(row.child), type: 'feature-dependency-added', data: { feature: row.parent, enabled: row.enabled, variants: row.variants }, preData: before && { feature: before.parent, enabled: before.enabled, variants: before.variants } })
  }

  // Links: as in Unleash, a flag the import lists has exactly the import's links after (checked as the link routes check them).
  const linkRows: { feature: string; slot: number; url: string; title: string | null }[] = []
  const linked = new Set<string>()
  for (const d of (data.links ?? []).filter((d) => importedNames.has(d.feature))) {
    if (linked.has(d.feature)) throw validationError(`The links of ${d.feature} are listed twice`)
    const after = d.links.map((l, slot) => {
      const problem = linkProblem(l.url)
      if (problem !== undefined) throw validationError(problem, [{ path: 'body.data.links', message: `${d.feature}: ${problem}` }])
      return { feature: d.feature, slot, url: normalizedLinkUrl(l.url), title: l.title ?? null }
    })
    linked.add(d.feature)
    const before = own.get(d.feature)?.links ?? []
    linkRows.push(...after)
    if (JSON.stringify(before) === JSON.stringify(after.map(({ url, title }) => ({ url, title })))) continue
    for (const l of before) events.push({ ...about(d.feature), type: 'feature-link-removed', data: null, preData: l })
    for (const { url, title } of after) events.push({ ...about(d.feature), type: 'feature-link-added', data: { url, title }, preData: null })
  }

  events.push(...archivedEvents)
  events.push({ type: 'features-imported', project, environment, data: { features: flagRows.map((f) => f.name) } })
  return {
    events,
    values: {
      flags: flagRows,
      tagTypes: newTagTypes.map((tt) => ({ name: tt.name, description: tt.description ?? null, icon: tt.icon ?? null, color: tt.color ?? null })),
      fields: fieldRows,
      environments: environmentRows,
      strategies: strategyRows,
      replaced,
      tags: [...tagsAfter].flatMap(([name, list]) => list.map((t) => ({ name, type: t.type, value: t.value }))),
      dependencies: dependencyRows,
      links: linkRows,
      linkedFlags: [...new Set(linkRows.map((r) => r.feature)), ...(data.links ?? []).filter((d) => importedNames.has(d.feature) && d.links.length === 0).map((d) => d.feature)],
    },
    now: caller.now,
  }
}

/** The import's writes, each made only where the state still reads as decided (`exists (select from w0)`). */
function writesSql(input: ImportToggles, values: ReturnType<typeof plan>['values'], createdAt: Date, createdBy: string, createdByUserId: number | null): SQL[] {
  const held = sql.raw('exists (select from w0)')
  const json = (v: unknown) => sql`${JSON.stringify(v)}::jsonb`
  const at = sql`${createdAt.toISOString()}::timestamptz`
  const names = sql`(select x.name from jsonb_to_recordset(${json(values.flags)}) as x (name text))`
  const { project, environment } = input
  return [
    sql`insert into ${tagTypes} (name, description, icon, color, created_at)
      select x.name, x.description, x.icon, x.color, ${at} from jsonb_to_recordset(${json(values.tagTypes)}) as x (name text, description text, icon text, color text) where ${held}`,
    sql`insert into ${contextFields} (name, description, stickiness, sort_order, legal_values, created_at, project)
      select x.name, x.description, x.stickiness, x."sortOrder", x."legalValues", ${at}, x.project
      from jsonb_to_recordset(${json(values.fields)}) as x (name text, description text, stickiness boolean, "sortOrder" integer, "legalValues" jsonb, project text) where ${held}`,
    sql`update ${features} set type = x.type, description = x.description, impression_data = x."impressionData", stale = x.stale, version = ${features.version} + 1
      from jsonb_to_recordset(${json(values.flags)}) as x (name text, type text, description text, "impressionData" boolean, stale boolean, known boolean)
      where ${features.name} = x.name and x.known and ${held}`,
    sql`insert into ${features} (name, project, type, description, impression_data, stale, archived_at, created_at, created_by, created_by_user_id)
      select x.name, ${project}, x.type, x.description, x."impressionData", x.stale, case when x.archived then ${at} end, ${at}, ${createdBy}, ${createdByUserId}::integer
      from jsonb_to_recordset(${json(values.flags)}) as x (name text, type text, description text, "impressionData" boolean, stale boolean, archived boolean, known boolean) where not x.known and ${held}`,
    sql`insert into ${featureLifecycles} (feature_name, stage, entered_stage_at)
      select x.name, s.stage, ${at} from jsonb_to_recordset(${json(values.flags)}) as x (name text, archived boolean, known boolean)
      cross join lateral (values ('initial'), (case when x.archived then 'archived' end)) as s (stage) where not x.known and s.stage is not null and ${held}`,
    // A new flag gets a row (off) in every environment of the project; the import's environment gets its switch and variants (kept where the export has none).
    sql`insert into ${featureEnvironments} (feature_name, environment, enabled, variants)
      select x.name, pe.environment_name, pe.environment_name = ${environment} and x.enabled, case when pe.environment_name = ${environment} then coalesce(x.variants, '[]'::jsonb) else '[]'::jsonb end
      from jsonb_to_recordset(${json(values.environments)}) as x (name text, enabled boolean, variants jsonb) join ${projectEnvironments} pe on pe.project_id = ${project}
      where ${held} and (pe.environment_name = ${environment} or x.name not in (select f.name from ${features} f))
      on conflict do nothing`,
    sql`update ${featureEnvironments} set enabled = x.enabled, variants = coalesce(x.variants, ${featureEnvironments.variants})
      from jsonb_to_recordset(${json(values.environments)}) as x (name text, enabled boolean, variants jsonb)
      where ${featureEnvironments.featureName} = x.name and ${featureEnvironments.environment} = ${environment} and ${held}`,
    sql`delete from ${featureStrategies} where feature_name in (select x from jsonb_array_elements_text(${json(values.replaced)}) x) and environment = ${environment} and ${held}`,
    sql`insert into ${featureStrategies} (id, feature_name, environment, strategy_name, title, disabled, sort_order, parameters, constraints, variants, created_at)
      select x.id, x."featureName", ${environment}, x.name, x.title, x.disabled, x."sortOrder", x.parameters, x.constraints, x.variants, ${at}
      from jsonb_to_recordset(${json(values.strategies)}) as x (id uuid, "featureName" text, name text, title text, disabled boolean, "sortOrder" integer, parameters jsonb, constraints jsonb, variants jsonb) where ${held}`,
    sql`insert into ${featureStrategySegments} (strategy_id, segment_id)
      select x.id, s.value::int from jsonb_to_recordset(${json(values.strategies)}) as x (id uuid, segments jsonb), jsonb_array_elements_text(x.segments) s where ${held}`,
    sql`insert into ${tags} (type, value, created_at) select distinct x.type, x.value, ${at} from jsonb_to_recordset(${json(values.tags)}) as x (type text, value text) where ${held}
      on conflict do nothing`,
    // The statement's parts run in no set order: what is kept is neither deleted nor inserted again.
    sql`delete from ${featureTags} where feature_name in ${names} and ${held}
      and (feature_name, tag_type, tag_value) not in (select x.name, x.type, x.value from jsonb_to_recordset(${json(values.tags)}) as x (name text, type text, value text))`,
    sql`insert into ${featureTags} (feature_name, tag_type, tag_value, created_at)
      select x.name, x.type, x.value, ${at} from jsonb_to_recordset(${json(values.tags)}) as x (name text, type text, value text) where ${held}
      on conflict do nothing`,
    sql`delete from ${featureDependencies} where ${held} and child in (select x.child from jsonb_to_recordset(${json(values.dependencies)}) as x (child text))
      and (child, parent) not in (select x.child, x.parent from jsonb_to_recordset(${json(values.dependencies)}) as x (child text, parent text))`,
    sql`insert into ${featureDependencies} (child, parent, enabled, variants)
      select x.child, x.parent, x.enabled, x.variants from jsonb_to_recordset(${json(values.dependencies)}) as x (child text, parent text, enabled boolean, variants jsonb) where ${held}
      on conflict (child, parent) do update set enabled = excluded.enabled, variants = excluded.variants`,
    // A listed flag's links by slot: the slots kept are overwritten, the others deleted (the parts run in no set order).
    sql`delete from ${featureLinks} where ${held} and feature_name in (select x from jsonb_array_elements_text(${json(values.linkedFlags)}) x)
      and (feature_name, slot) not in (select x.feature, x.slot from jsonb_to_recordset(${json(values.links)}) as x (feature text, slot smallint))`,
    sql`insert into ${featureLinks} (id, feature_name, slot, url, title, created_at)
      select gen_random_uuid()::text, x.feature, x.slot, x.url, x.title, ${at} + x.slot * interval '1 millisecond'
      from jsonb_to_recordset(${json(values.links)}) as x (feature text, slot smallint, url text, title text) where ${held}
      on conflict (feature_name, slot) do update set url = excluded.url, title = excluded.title, created_at = excluded.created_at`,
  ]
}

/**
 * POST /api/admin/features-batch/import: validate's read (with the project's flags the import replaces), refused with
 * its errors or with the permissions it finds lacking; then one batch: the project and the flags named locked, and
 * one statement making every change and its events, only if the state still reads as it was decided from (read
 * again otherwise).
 */
export async function importFeatures(
  db: Db,
  caller: Caller,
  input: ImportToggles,
  decide: (state: ImportState) => ImportValidation,
): Promise<void> {
  const { actor, now } = caller
  await untilUnchanged(`Project ${input.project}`, async () => {
    const [read] = await queryRows<{ state: ImportState; snapshot: string }>(db, sql`select row_to_json(s) as state, row_to_json(s)::text as snapshot from (${stateSql(input)}) s`)
    const state = read!.state
    // Each step of a large import is bounded; between them the process answers others (SDK polls, /health).
    await yieldToEventLoop()
    const validation = decide(state)
    if (validation.errors.length > 0) {
      throw validationError(
        `The import cannot be made: ${validation.errors.map((e) => `${e.message} ${e.affectedItems.join(', ')}`.trim()).join(' ')}`,
        validation.errors.map((e) => ({ path: 'body.data', message: `${e.message} ${e.affectedItems.join(', ')}`.trim() })),
      )
    }
    const { events, values } = plan(caller, input, state)
    await yieldToEventLoop()
    // The events past the first chunk, each chunk a statement of its own, written only where the first statement wrote
    // (its first flag's row is then this transaction's: created or updated by it).
    const [firstChunk, ...chunks] = chunked(events, EVENTS_PER_STATEMENT)
    const first = values.flags[0]?.name ?? ''
    const wroteFirst = sql`select 1 from ${features} where ${features.name} = ${first} and ${features}.xmin = pg_current_xact_id()::xid`
    const names = unique([...input.data.features.map((f) => f.name), ...(input.data.dependencies ?? []).flatMap((d) => d.dependencies.map((p) => p.feature))])
    const gate = sql`select 1 from (${stateSql(input)}) s where row_to_json(s)::text = ${read!.snapshot}`
    const [, , written] = await batch(db, [
      (q) => q.select({ id: projects.id }).from(projects).where(sql`${projects.id} = ${input.project}`).for('update'),
      (q) => q.select({ name: features.name }).from(features).where(sql`${features.name} = any(${sql.param(names)}::text[])`).orderBy(features.name).for('update'),
      (q) => recordEvents(q, actor, now, firstChunk ?? [], { alongside: [gate], guarded: true, unguarded: writesSql(input, values, now, actor.createdBy, actor.createdByUserId) }),
      ...chunks.map((chunk) => (q: Db) => recordEvents(q, actor, now, chunk, { alongside: [wroteFirst], guarded: true })),
    ], { yieldBetween: true })
    return written > 0 || undefined
  })
}
