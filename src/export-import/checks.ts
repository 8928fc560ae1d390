import type { ZodError } from 'zod'
import { ApiError, validationError } from '../core/errors.js'
import { CreateStrategySchema, type StrategyInput } from '../strategies/schemas.js'
import { normalizeStrategy } from '../strategies/store.js'
import { issuesToDetails } from '../http/openapi.js'
import { toVariants } from '../variants/store.js'
import { flagName, FlagTypeSchema, TagInputSchema } from '../flags/schemas.js'
import { TagTypeInputSchema } from '../tag-types/schemas.js'
import { CreateContextFieldSchema } from '../context-fields/schemas.js'
import type { ImportToggles, ValidationItem } from './schemas.js'
import { misfit } from '../strategy-definitions/fit.js'
import { normalizedLinkUrl } from '../links/store.js'

type ImportedStrategy = ImportToggles['data']['featureStrategies'][number]
type Link = { child: string; parent: string }

const unique = (list: string[]) => [...new Set(list)]
const reasons = (error: ZodError, path?: string) => issuesToDetails(error, path).map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ')

/** Why the strategy routes (POST …/environments/{environment}/strategies) would refuse a strategy of the export, if they would. */
function strategyProblem(s: ImportedStrategy, path: string): string | undefined {
  const parsed = CreateStrategySchema.safeParse({ ...s, featureName: undefined, segments: undefined })
  return parsed.success ? undefined : reasons(parsed.error, path)
}

/**
 * A strategy of the export as the strategy routes judge it (the same schema, so the same rollout, constraint, semver,
 * CIDR and REGEX rules, and the same stored form), else the 400 naming where. Its segments are the export's ids, mapped by name apart.
 */
export function checkedStrategy(s: ImportedStrategy, featureName: string, path: string) {
  const parsed = CreateStrategySchema.safeParse({ ...s, featureName: undefined, segments: undefined })
  if (!parsed.success) {
    const details = issuesToDetails(parsed.error, path)
    throw validationError(`A strategy of ${featureName} is not valid: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details)
  }
  return normalizeStrategy(parsed.data as StrategyInput, featureName)
}

/** The dependencies after the import: the target's (those touching its flags), less the children's it replaces, plus its own. */
export function linksAfter(input: ImportToggles, imported: ReadonlySet<string>, before: readonly Link[]): { links: Link[]; added: Link[] } {
  const dependencies = (input.data.dependencies ?? []).filter((d) => imported.has(d.feature))
  const replaced = new Set(dependencies.map((d) => d.feature))
  const added = dependencies.flatMap((d) => d.dependencies.map((p) => ({ child: d.feature, parent: p.feature })))
  return { links: [...before.filter((l) => !replaced.has(l.child)), ...added], added }
}

/** The links of `links` that make a chain (a parent that itself has a parent), as `child -> parent`; linear in the links. */
export function chainsOf(links: readonly Link[]): string[] {
  const children = new Set(links.map((l) => l.child))
  return unique(links.filter((l) => children.has(l.parent)).map((l) => `${l.child} -> ${l.parent}`))
}

/**
 * What the routes the import stands for would refuse in its data, as validate's errors (every problem listed, not the
 * first): flag names (URL-friendly, not `.` or `..`) and types (the flag routes' check), tag types and tags (the tag
 * routes' schemas), new context fields (the context field routes' schema: name, description, sort order, legal values
 * neither empty nor given twice) and context fields given twice, strategies (the strategy routes' schema), an
 * environment's variants (`PUT …/environments/{environment}/variants`), strategy segments and tag types the export
 * does not carry, and dependencies the dependency route refuses (more than one parent, on itself, chained).
 * `imported`: the flags the import writes; `knownFields`, `knownTagTypes`: names that exist already (not created).
 */
export function dataProblems(
  input: ImportToggles,
  imported: ReadonlySet<string>,
  target: { links: readonly Link[]; knownFields: readonly string[]; knownTagTypes: readonly string[] },
): ValidationItem[] {
  const { data } = input
  const report = new Map<string, string[]>()
  const add = (message: string, item: string) => {
    const items = report.get(message)
    if (items) items.push(item)
    else report.set(message, [item])
  }
  const name = flagName()

  for (const f of data.features) {
    if (!name.safeParse(f.name).success) add("The following flag names are not valid (URL-friendly: letters, digits and - _ . ! ~ * ' ( ) only; 1 to 100 characters; not . or ..):", f.name)
    if (f.type !== undefined && !FlagTypeSchema.safeParse(f.type).success) add('The following flags have a type that is not a flag type:', `${f.name} (${f.type})`)
  }

  for (const tt of data.tagTypes) {
    if (target.knownTagTypes.includes(tt.name)) continue
    const parsed = TagTypeInputSchema.safeParse({ name: tt.name, description: tt.description ?? undefined, icon: tt.icon, color: tt.color })
    if (!parsed.success) add('The following tag types are not valid:', `${tt.name}: ${reasons(parsed.error)}`)
  }
  const definedTypes = new Set([...target.knownTagTypes, ...data.tagTypes.map((tt) => tt.name)])
  for (const t of data.featureTags ?? []) {
    const parsed = TagInputSchema.safeParse({ value: t.tagValue, type: t.tagType })
    if (!parsed.success) add('The following tags are not valid:', `${t.featureName} ${t.tagType ?? 'simple'}:${t.tagValue}: ${reasons(parsed.error)}`)
    else if (!definedTypes.has(t.tagType ?? 'simple')) add('The following tag types are used by tags but neither exist nor are in the import:', t.tagType ?? 'simple')
  }

  const fieldNames = (data.contextFields ?? []).map((c) => c.name)
  for (const n of unique(fieldNames.filter((n, i) => fieldNames.indexOf(n) !== i))) add('The following context fields are listed more than once:', n)
  for (const c of data.contextFields ?? []) {
    if (target.knownFields.includes(c.name)) continue
    const parsed = CreateContextFieldSchema.safeParse({ name: c.name, description: c.description, stickiness: c.stickiness, sortOrder: c.sortOrder, legalValues: c.legalValues })
    if (!parsed.success) add('The following context fields are not valid:', `${c.name}: ${reasons(parsed.error)}`)
  }

  const segmentIds = new Set((data.segments ?? []).map((s) => s.id))
  for (const [i, s] of data.featureStrategies.entries()) {
    if (!s.featureName || !imported.has(s.featureName)) continue
    const problem = strategyProblem(s, `featureStrategies.${i}`)
    if (problem) add('The following strategies are not valid:', `${s.featureName} (${s.name}): ${problem}`)
    for (const id of s.segments ?? []) if (!segmentIds.has(id)) add("The following segment ids of strategies are not in the import's segments:", String(id))
  }

  for (const e of data.featureEnvironments ?? []) {
    const flag = e.featureName ?? e.name ?? ''
    if (!imported.has(flag) || !e.variants || e.variants.length === 0) continue
    try {
      toVariants(e.variants, `featureEnvironments (${flag})`)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      add('The following flags have variants that are not valid:', `${flag}: ${error.message}`)
    }
  }

  for (const d of (data.dependencies ?? []).filter((d) => imported.has(d.feature))) {
    if (d.dependencies.length > 1) add('The following flags depend on more than one flag (a flag has at most one parent):', d.feature)
    if (d.dependencies.some((p) => p.feature === d.feature)) add('The following flags depend on themselves:', d.feature)
  }
  for (const chain of chainsOf(linksAfter(input, imported, target.links).links)) add('Dependencies cannot be chained (a parent cannot itself depend on a flag):', chain)

  // Flag links, checked as the import writes them (normalizedLinkUrl, the link routes' check).
  const linked = new Set<string>()
  for (const d of (data.links ?? []).filter((d) => imported.has(d.feature))) {
    if (linked.has(d.feature)) add('The links of the following flags are listed twice:', d.feature)
    linked.add(d.feature)
    for (const l of d.links) {
      const problem = linkProblem(l.url)
      if (problem !== undefined) add('The following flag links are not valid:', `${d.feature}: ${problem}`)
    }
  }

  return [...report].map(([message, items]) => ({ message, affectedItems: unique(items) }))
}

/** Why the link routes would refuse `url`, or undefined. */
export function linkProblem(url: string): string | undefined {
  try {
    normalizedLinkUrl(url)
    return undefined
  } catch (error) {
    return error instanceof ApiError ? error.message : 'not a URL'
  }
}

/** A ULID (Unleash 8 makes its strategy ids with `ulid()`): 26 Crockford base-32 characters, the first 10 its creation time. */
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i

/** Whether a flag's strategies take their order from their ids: none has a sortOrder, there are several, each id a ULID. */
function orderedByIds(list: readonly { sortOrder?: number | undefined; id?: string | null | undefined }[]): boolean {
  return list.length > 1 && list.every((s) => s.sortOrder === undefined && typeof s.id === 'string' && ULID.test(s.id))
}

/**
 * The strategies of one flag in the order the import stores them: by `sortOrder` where given; where none is, by the
 * creation time of their ids when each is a ULID (Unleash 8's; the order the strategies were added in), else by their
 * place in the document (older Unleash versions' ids are random UUIDs: they say nothing of the order). Equal keys keep
 * the document's order; the keys are stored as they are when they differ, else renumbered 0…n-1 in that order, so
 * that no two strategies tie (a tie would be broken by the random id).
 */
export function inImportOrder<T extends { sortOrder?: number | undefined; id?: string | null | undefined }>(list: readonly T[]): (T & { sortOrder: number })[] {
  if (orderedByIds(list)) {
    const time = (s: T) => s.id!.slice(0, 10).toUpperCase()
    const ordered = list.map((s, i) => ({ s, i })).sort((a, b) => (time(a.s) < time(b.s) ? -1 : time(a.s) > time(b.s) ? 1 : a.i - b.i))
    return ordered.map(({ s }, i) => ({ ...s, sortOrder: i }))
  }
  const keyed = list.map((s, i) => ({ s, key: s.sortOrder ?? i }))
  keyed.sort((a, b) => a.key - b.key)
  const distinct = new Set(keyed.map((k) => k.key)).size === keyed.length
  return keyed.map(({ s, key }, i) => ({ ...s, sortOrder: distinct ? key : i }))
}

/**
 * The flags whose strategies' order decides which variants a user gets (two strategies or more, one with variants)
 * while the import does not give that order (a `sortOrder` missing or given twice): `byIds` are ordered by their ULIDs'
 * creation time, `byFile` kept in the document's order.
 */
export function unorderedVariantFlags(input: ImportToggles, imported: ReadonlySet<string>): { byIds: string[]; byFile: string[] } {
  const byFlag = new Map<string, ImportedStrategy[]>()
  for (const s of input.data.featureStrategies) if (s.featureName && imported.has(s.featureName)) byFlag.set(s.featureName, [...(byFlag.get(s.featureName) ?? []), s])
  const unordered = [...byFlag]
    .filter(([, list]) => list.length > 1 && list.some((s) => Array.isArray(s.variants) && s.variants.length > 0))
    .filter(([, list]) => list.some((s) => s.sortOrder === undefined) || new Set(list.map((s) => s.sortOrder)).size < list.length)
  return { byIds: unordered.filter(([, list]) => orderedByIds(list)).map(([name]) => name), byFile: unordered.filter(([, list]) => !orderedByIds(list)).map(([name]) => name) }
}

interface StoredTarget {
  definitions: readonly { name: string; builtIn: boolean; deprecated: boolean; parameters: unknown }[]
  /** Context fields the strategies' constraints name, usable in the project (global or its own). */
  fields: readonly { name: string; legalValues: readonly { value: string }[] }[]
}

/**
 * What the strategy routes check against the database, for the strategies the import writes, as validate's errors:
 * a custom type's parameters fit its definition, and constraint values are legal values of their context field (the
 * export's own legal values for a field the import creates). So a strategy the import writes can be saved again as it is.
 */
export function storedProblems(input: ImportToggles, imported: ReadonlySet<string>, target: StoredTarget): ValidationItem[] {
  const report = new Map<string, string[]>()
  const add = (message: string, item: string) => {
    const items = report.get(message)
    if (items) items.push(item)
    else report.set(message, [item])
  }
  const legal = new Map(target.fields.map((f) => [f.name, f.legalValues.map((v) => v.value)]))
  for (const c of input.data.contextFields ?? []) if (!legal.has(c.name)) legal.set(c.name, (c.legalValues ?? []).map((v) => v.value))
  for (const s of input.data.featureStrategies) {
    if (!s.featureName || !imported.has(s.featureName)) continue
    const parsed = CreateStrategySchema.safeParse({ ...s, featureName: undefined, segments: undefined })
    if (!parsed.success) continue
    const strategy = normalizeStrategy(parsed.data as StrategyInput, s.featureName)
    const definition = target.definitions.find((d) => d.name === s.name)
    const problem = definition && misfit(definition, { name: s.name, parameters: strategy.parameters, previousName: s.name })
    if (problem) add("The following strategies have parameters their strategy type refuses:", `${s.featureName} (${s.name}): ${problem.message}`)
    for (const k of strategy.constraints as { contextName: string; values: string[]; value?: string }[]) {
      const allowed = legal.get(k.contextName) ?? []
      if (allowed.length === 0) continue
      for (const v of [...k.values, ...(k.value === undefined ? [] : [k.value])]) if (!allowed.includes(v)) add('The following constraint values are not legal values of their context field:', `${s.featureName}: "${v}" (${k.contextName})`)
    }
  }
  return [...report].map(([message, items]) => ({ message, affectedItems: unique(items) }))
}
