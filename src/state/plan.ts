import { ApiError, validationError, type ErrorDetail } from '../core/errors.js'
import type { Actor } from '../core/principal.js'
import type { EventTag, NewEvent } from '../events/types.js'
import { issuesToDetails } from '../http/openapi.js'
import { checkNamingPattern, defaultStrategyFor } from '../flags/store.js'
import { normalizeStrategy } from '../strategies/store.js'
import { CreateStrategySchema, exceedsLimit, normalizeConstraint, resourceLimits, type Constraint, type StrategyInput } from '../strategies/schemas.js'
import { misfit, type ParameterDefinition } from '../strategy-definitions/fit.js'
import { normalizeVariants } from '../variants/weights.js'
import type { Variant, VariantInput } from '../variants/schemas.js'
import type { StateCounts, StateImport, StateImportQuery, StateImportResult } from './schemas.js'
import { normalizedLinkUrl } from '../links/store.js'
import { MAX_LINKS_PER_FLAG } from '../links/schemas.js'
import type { StoredFlag, StoredProjectEnvironment, StoredState, StoredStrategy } from './read.js'
import { storableTime } from '../core/clock.js'

/*
 * The import decided in JS from the state read (src/state/read.ts): every rule checked, every write as explicit
 * rows, every event. Nothing here touches the database; src/state/import.ts writes what this decides in one
 * statement, made only while the state still reads as it did.
 */

type Kind = keyof StateCounts

const KINDS: Kind[] = ['environments', 'projects', 'strategies', 'contextFields', 'tagTypes', 'tags', 'segments', 'features', 'featureTags']
const zero = (): StateCounts => Object.fromEntries(KINDS.map((k) => [k, 0])) as StateCounts

/** Object keys in one order, so that a stored object and a document's compare equal when they say the same. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  )
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const tagKey = (type: string, value: string) => `${type}\u0000${value}`
const pairKey = (a: string, b: string) => `${a}\u0000${b}`

/** The problems of a document, each with where it is: one 400 naming them all (the first hundred). */
class Problems {
  readonly list: ErrorDetail[] = []
  add(path: string, message: string) {
    this.list.push({ path, message })
  }
  addError(error: unknown, path: (detailPath: string) => string) {
    if (!(error instanceof ApiError)) throw error
    for (const d of error.details ?? [{ path: '', message: error.message }]) this.add(path(d.path), d.message)
  }
  check() {
    if (this.list.length === 0) return
    const shown = this.list.slice(0, 3).map((p) => `${p.path}: ${p.message}`)
    const more = this.list.length > 3 ? ` (and ${this.list.length - 3} more)` : ''
    throw validationError(`The document cannot be imported: ${shown.join('; ')}${more}`, this.list.slice(0, 100))
  }
}

/** Where a part of the document is, as the error's details name it. */
const at = (kind: string, i: number, rest?: string) => `body.${kind}.${i}${rest ? `.${rest}` : ''}`

/**
 * What constraints of `project` (null: a global segment) may not use, as the strategy routes refuse it: a context field
 * of another project, and the values their context field (with legal values) does not list.
 */
function illegalValues(constraints: readonly Constraint[], fields: ReadonlyMap<string, Pick<ContextField, 'legalValues' | 'project'>>, project: string | null): string[] {
  return constraints.flatMap((c) => {
    const field = fields.get(c.contextName)
    if (field?.project !== undefined && field.project !== project) return [`context field ${c.contextName} belongs to another project and cannot be used ${project === null ? 'by global segments' : `in project ${project}`}`]
    const legal = field?.legalValues ?? []
    if (legal.length === 0) return []
    const allowed = new Set(legal.map((l) => l.value))
    return [...c.values, ...(c.value === undefined ? [] : [c.value])].filter((v) => !allowed.has(v)).map((v) => `"${v}" is not a legal value of context field ${c.contextName}`)
  })
}

export interface Environment {
  name: string
  type: string
  sortOrder: number
  enabled: boolean
  protected: boolean
}

export interface Definition {
  name: string
  title: string | null
  displayName: string | null
  description: string | null
  parameters: ParameterDefinition[]
  deprecated: boolean
  sortOrder: number
}

export interface ContextField {
  name: string
  description: string | null
  stickiness: boolean
  sortOrder: number
  legalValues: { value: string; description?: string }[]
  /** A project's own field (absent: global), as its routes answer it. */
  project?: string
}

export interface TagType {
  name: string
  description: string | null
  icon: string | null
  color: string | null
}

export interface ProjectSettings {
  id: string
  name: string
  description: string | null
  mode: string
  defaultStickiness: string
  featureLimit: number | null
  featureNamingPattern: string | null
  featureNamingExample: string | null
  featureNamingDescription: string | null
}

export interface Segment {
  id: number
  name: string
  description: string | null
  project: string | null
  constraints: Constraint[]
}

/** A flag's strategy as the import compares, records and writes it. */
export interface StrategyImage {
  id: string
  name: string
  title: string | null
  disabled: boolean
  sortOrder: number
  parameters: Record<string, string>
  constraints: Constraint[]
  variants: Variant[]
  segments: number[]
}

/** A flag as the import compares and records it (feature-import's data): its metadata and its whole configuration. */
export interface FlagImage {
  name: string
  project: string
  type: string
  description: string | null
  stale: boolean
  impressionData: boolean
  archived: boolean
  environments: { name: string; enabled: boolean; variants: Variant[]; strategies: StrategyImage[] }[]
  dependencies: { parent: string; enabled: boolean; variants: string[] }[]
  links: { url: string; title: string | null }[]
}

/** The rows the import writes, by table: each list explicit, so the statement only applies them. */
export interface Writes {
  environments: Environment[]
  environmentsDropped: string[]
  definitions: Definition[]
  definitionsDropped: string[]
  contextFields: ContextField[]
  contextFieldsDropped: string[]
  tagTypes: TagType[]
  tagTypesDropped: string[]
  tags: EventTag[]
  tagsDropped: EventTag[]
  projects: (ProjectSettings & { createdAt: string })[]
  projectsDropped: string[]
  projectEnvironments: (StoredProjectEnvironment & { project: string })[]
  projectEnvironmentsRemoved: { project: string; name: string }[]
  segments: (Segment & { createdAt: string; createdBy: string })[]
  segmentsDropped: number[]
  flags: { name: string; project: string; type: string; description: string | null; stale: boolean; impressionData: boolean; createdAt: string; known: boolean }[]
  flagsDropped: string[]
  /** Archived flags the import brings back (their archived lifecycle stage goes). */
  flagsRevived: string[]
  /** Archived flags of the document the instance lacks: created archived, with their metadata only. */
  flagsArchived: { name: string; project: string; type: string; description: string | null; stale: boolean; impressionData: boolean; createdAt: string; archivedAt: string }[]
  flagEnvironments: { feature: string; environment: string; enabled: boolean; variants: Variant[] }[]
  /** Rows of flags the import leaves as they are, added (off) where their project gains an environment. */
  flagEnvironmentsAdded: { feature: string; environment: string }[]
  flagEnvironmentsRemoved: { feature: string; environment: string }[]
  strategies: (Omit<StrategyImage, 'segments'> & { feature: string; environment: string; createdAt: string })[]
  strategiesRemoved: string[]
  strategySegments: { strategy: string; segment: number }[]
  dependencies: { child: string; parent: string; enabled: boolean; variants: string[] }[]
  links: { feature: string; slot: number; url: string; title: string | null }[]
  featureTags: { feature: string; type: string; value: string }[]
  featureTagsRemoved: { feature: string; type: string; value: string }[]
  /** Flags whose answer the import changes without writing them (tags, environments, what a drop takes): their versions move on. */
  versions: string[]
}

export interface Plan {
  events: NewEvent[]
  writes: Writes
  /** The flags the write locks (in name order), the tags and segment names it creates. */
  locks: { flags: string[]; tags: EventTag[]; segmentNames: string[] }
  /** The environments requiring change requests whose flags the import changes. */
  protectedIn: { project: string; environment: string }[]
  result: Omit<StateImportResult, 'events'>
}

const definitionOf = (d: StoredState['definitions'][number]): Definition => ({
  name: d.name,
  title: d.title,
  displayName: d.displayName,
  description: d.description,
  parameters: d.parameters.map((p) => ({ name: p.name, type: p.type, description: p.description ?? '', required: p.required ?? false })),
  deprecated: d.deprecated,
  sortOrder: d.sortOrder,
})
const legalValueOf = (v: { value: string; description?: string | null | undefined }) => (v.description === undefined || v.description === null ? { value: v.value } : { value: v.value, description: v.description })
const fieldOf = (f: StoredState['contextFields'][number]): ContextField => ({
  name: f.name,
  description: f.description,
  stickiness: f.stickiness,
  sortOrder: f.sortOrder,
  legalValues: f.legalValues.map(legalValueOf),
  ...(f.project ? { project: f.project } : {}),
})
const settingsOf = (p: ProjectSettings): ProjectSettings => ({
  id: p.id,
  name: p.name,
  description: p.description,
  mode: p.mode,
  defaultStickiness: p.defaultStickiness,
  featureLimit: p.featureLimit,
  featureNamingPattern: p.featureNamingPattern,
  featureNamingExample: p.featureNamingExample,
  featureNamingDescription: p.featureNamingDescription,
})
const segmentOf = (s: StoredState['segments'][number]): Segment => ({ id: s.id, name: s.name, description: s.description, project: s.project, constraints: s.constraints })

function strategyImageOf(s: StoredStrategy): StrategyImage {
  return { id: s.id, name: s.name, title: s.title, disabled: s.disabled, sortOrder: s.sortOrder, parameters: s.parameters, constraints: s.constraints, variants: s.variants, segments: [...s.segments].sort((a, b) => a - b) }
}

const byOrder = (a: StrategyImage, b: StrategyImage) => a.sortOrder - b.sortOrder || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

function flagImageOf(f: StoredFlag): FlagImage {
  return {
    name: f.name,
    project: f.project,
    type: f.type,
    description: f.description,
    stale: f.stale,
    impressionData: f.impressionData,
    archived: f.archived,
    environments: f.environments.map((e) => ({
      name: e.name,
      enabled: e.enabled,
      variants: e.variants,
      strategies: f.strategies.filter((s) => s.environment === e.name).map(strategyImageOf).sort(byOrder),
    })),
    dependencies: f.dependencies,
    links: f.links,
  }
}

/** When a flag the import creates was created: the document's instant, with microseconds of its own (see the comment where it is used). */
function creationInstant(documentCreatedAt: string | null | undefined, now: Date): string {
  const base = documentCreatedAt ? new Date(documentCreatedAt) : now
  const micros = String(1 + Math.floor(Math.random() * 999)).padStart(3, '0')
  return `${base.toISOString().slice(0, 23)}${micros}Z`
}

/**
 * Decides the import of `doc` into the state read. `allocatedSegmentIds`: ids taken for the segments it may create.
 * Throws one 400 naming every problem of the document.
 */
export function planImport(doc: StateImport, options: StateImportQuery, state: StoredState, actor: Actor, now: Date, allocatedSegmentIds: number[]): Plan {
  const problems = new Problems()
  const present = (kind: keyof Omit<StateImport, 'version'>) => doc[kind] !== undefined
  const dropping = (kind: Kind) => options.drop && present(kind)
  // With drop, what the document lists is written as if everything of its kind had been deleted first (as Unleash).
  const replacing = (kind: Kind) => dropping(kind) || !options.keep
  const imported = zero()
  const unchanged = zero()
  const dropped = zero()
  const events: NewEvent[] = []
  const nowIso = now.toISOString()
  const writes: Writes = {
    environments: [],
    environmentsDropped: [],
    definitions: [],
    definitionsDropped: [],
    contextFields: [],
    contextFieldsDropped: [],
    tagTypes: [],
    tagTypesDropped: [],
    tags: [],
    tagsDropped: [],
    projects: [],
    projectsDropped: [],
    projectEnvironments: [],
    projectEnvironmentsRemoved: [],
    segments: [],
    segmentsDropped: [],
    flags: [],
    flagsDropped: [],
    flagsRevived: [],
    flagsArchived: [],
    flagEnvironments: [],
    flagEnvironmentsAdded: [],
    flagEnvironmentsRemoved: [],
    strategies: [],
    strategiesRemoved: [],
    strategySegments: [],
    dependencies: [],
    links: [],
    featureTags: [],
    featureTagsRemoved: [],
    versions: [],
  }

  /** Names listed twice in a part of the document. */
  function once<T>(kind: string, list: readonly T[] | undefined, key: (item: T) => string): { item: T; i: number }[] {
    const seen = new Set<string>()
    const out: { item: T; i: number }[] = []
    for (const [i, item] of (list ?? []).entries()) {
      const k = key(item)
      if (seen.has(k)) problems.add(at(kind, i), `${k.replace('\u0000', ':')} is listed twice`)
      else out.push({ item, i })
      seen.add(k)
    }
    return out
  }

  // Environments.
  const environments = new Map<string, Environment>(state.environments.map((e) => [e.name, { name: e.name, type: e.type, sortOrder: e.sortOrder, enabled: e.enabled, protected: e.protected }]))
  const docEnvironments = once('environments', doc.environments, (e) => e.name)
  for (const { item: d } of docEnvironments) {
    const before = environments.get(d.name)
    // As through the environment routes, an import protects no environment (nor unprotects one).
    const after: Environment = { name: d.name, type: d.type, sortOrder: d.sortOrder ?? before?.sortOrder ?? 0, enabled: d.enabled ?? before?.enabled ?? true, protected: before?.protected ?? false }
    if (before && (!replacing('environments') || canonical(before) === canonical(after))) {
      unchanged.environments++
      continue
    }
    writes.environments.push(after)
    events.push({ type: 'environment-import', environment: d.name, data: after, preData: before ?? null })
    environments.set(d.name, after)
    imported.environments++
  }
  if (dropping('environments')) {
    const listed = new Set(docEnvironments.map((e) => e.item.name))
    // Never dropped: a protected environment, and one API tokens are for (they would stop serving).
    for (const e of state.environments.filter((e) => !listed.has(e.name) && !e.protected && !e.tokens)) {
      writes.environmentsDropped.push(e.name)
      environments.delete(e.name)
    }
  }

  // Strategy types: the custom ones (built-in ones are every instance's and are left as they are).
  const storedDefinitions = new Map(state.definitions.map((d) => [d.name, d]))
  const definitions = new Map<string, Definition & { builtIn: boolean }>(state.definitions.map((d) => [d.name, { ...definitionOf(d), builtIn: d.builtIn }]))
  const docDefinitions = once('strategies', doc.strategies, (d) => d.name)
  const listedDefinitions = new Set(docDefinitions.map((d) => d.item.name))
  for (const { item: d } of docDefinitions) {
    const stored = storedDefinitions.get(d.name)
    if (stored?.builtIn) {
      unchanged.strategies++
      continue
    }
    const before = stored && definitionOf(stored)
    const after: Definition = {
      name: d.name,
      title: d.title ?? null,
      displayName: d.displayName ?? null,
      description: d.description ?? null,
      parameters: (d.parameters ?? []).map((p) => ({ name: p.name, type: p.type, description: p.description ?? '', required: p.required ?? false })),
      deprecated: d.deprecated ?? false,
      sortOrder: d.sortOrder ?? before?.sortOrder ?? 9999,
    }
    if (before && (!replacing('strategies') || canonical(before) === canonical(after))) {
      unchanged.strategies++
      continue
    }
    writes.definitions.push(after)
    events.push({ type: 'strategy-import', data: { ...after, editable: true }, preData: before ? { ...before, editable: true } : null })
    definitions.set(d.name, { ...after, builtIn: false })
    imported.strategies++
  }

  // Context fields: no import kind of their own in the event catalogue, so they record what their routes record.
  const storedFields = new Map(state.contextFields.map((f) => [f.name, f]))
  const fields = new Map<string, ContextField>(state.contextFields.map((f) => [f.name, fieldOf(f)]))
  const docFields = once('contextFields', doc.contextFields, (f) => f.name)
  for (const { item: d } of docFields) {
    const stored = storedFields.get(d.name)
    const before = stored && fieldOf(stored)
    const after: ContextField = {
      name: d.name,
      description: d.description ?? null,
      stickiness: d.stickiness ?? false,
      sortOrder: d.sortOrder ?? before?.sortOrder ?? 0,
      legalValues: (d.legalValues ?? []).map(legalValueOf),
      ...(d.project ? { project: d.project } : {}),
    }
    if (before && (!replacing('contextFields') || canonical(before) === canonical(after))) {
      unchanged.contextFields++
      continue
    }
    writes.contextFields.push(after)
    events.push(before ? { type: 'context-field-updated', project: after.project ?? null, data: after, preData: before } : { type: 'context-field-created', project: after.project ?? null, data: after })
    fields.set(d.name, after)
    imported.contextFields++
  }

  // Tag types, then tags (each of a type).
  const tagTypes = new Map<string, TagType>(state.tagTypes.map((t) => [t.name, t]))
  const docTagTypes = once('tagTypes', doc.tagTypes, (t) => t.name)
  for (const { item: d } of docTagTypes) {
    const before = tagTypes.get(d.name)
    const after: TagType = { name: d.name, description: d.description ?? null, icon: d.icon ?? null, color: d.color ?? null }
    if (before && (!replacing('tagTypes') || canonical(before) === canonical(after))) {
      unchanged.tagTypes++
      continue
    }
    writes.tagTypes.push(after)
    events.push({ type: 'tag-type-import', data: after, preData: before ?? null })
    tagTypes.set(d.name, after)
    imported.tagTypes++
  }
  if (dropping('tagTypes')) {
    const listed = new Set(docTagTypes.map((t) => t.item.name))
    // `simple` is the type of every tag given without one.
    for (const t of state.tagTypes.filter((t) => !listed.has(t.name) && t.name !== 'simple')) {
      writes.tagTypesDropped.push(t.name)
      tagTypes.delete(t.name)
    }
  }
  // Deleting a tag type deletes its tags and flag tags (foreign keys), recorded by drop-tag-types.
  const tags = new Set(state.tags.filter((t) => tagTypes.has(t.type)).map((t) => tagKey(t.type, t.value)))
  const docTags = once('tags', doc.tags, (t) => tagKey(t.type, t.value))
  const createTag = (type: string, value: string) => {
    tags.add(tagKey(type, value))
    writes.tags.push({ type, value })
    events.push({ type: 'tag-import', data: { type, value } })
    imported.tags++
  }
  for (const { item: d, i } of docTags) {
    if (!tagTypes.has(d.type)) problems.add(at('tags', i, 'type'), `tag type ${d.type} is neither in the document nor defined`)
    else if (tags.has(tagKey(d.type, d.value))) unchanged.tags++
    else createTag(d.type, d.value)
  }

  // Projects: their settings now, their environments once segments (default strategies name them) are known.
  const storedProjects = new Map(state.projects.map((p) => [p.id, p]))
  const docProjects = once('projects', doc.projects, (p) => p.id)
  const docProjectIds = new Set(docProjects.map((p) => p.item.id))
  /** Projects after the import, but for those it drops (decided once the flags are). */
  const projects = new Map<string, { settings: ProjectSettings; archived: boolean }>(state.projects.map((p) => [p.id, { settings: settingsOf(p), archived: p.archived }]))
  const projectWritten = new Map<string, { settings: ProjectSettings; createdAt: string; before: (typeof state.projects)[number] | undefined }>()
  const projectDecision = new Map<string, 'write' | 'leave'>()
  for (const { item: d } of docProjects) {
    const before = storedProjects.get(d.id)
    const settings: ProjectSettings = {
      id: d.id,
      name: d.name,
      description: d.description ?? null,
      mode: d.mode ?? 'open',
      defaultStickiness: d.defaultStickiness ?? 'default',
      featureLimit: d.featureLimit ?? null,
      featureNamingPattern: d.featureNamingPattern ?? null,
      featureNamingExample: d.featureNamingExample ?? null,
      featureNamingDescription: d.featureNamingDescription ?? null,
    }
    if (before && !replacing('projects')) {
      projectDecision.set(d.id, 'leave')
      continue
    }
    projectDecision.set(d.id, 'write')
    projectWritten.set(d.id, { settings, createdAt: d.createdAt ? new Date(d.createdAt).toISOString() : nowIso, before })
    projects.set(d.id, { settings, archived: false })
  }
  const liveProject = (id: string) => {
    const p = projects.get(id)
    return p !== undefined && !p.archived
  }

  // Segments, one per name (as their routes keep them): an existing one of the document's name is that segment.
  const storedSegments = new Map(state.segments.map((s) => [s.name, s]))
  const segments = new Map<number, Segment>(state.segments.map((s) => [s.id, segmentOf(s)]))
  /** The document's segment ids, to the segments they are after the import. */
  const segmentIdOf = new Map<number, number>()
  const docSegments = once('segments', doc.segments, (s) => s.name)
  const docSegmentIds = new Set<number>()
  let allocated = 0
  for (const { item: d, i } of docSegments) {
    if (docSegmentIds.has(d.id)) problems.add(at('segments', i, 'id'), `segment id ${d.id} is listed twice`)
    docSegmentIds.add(d.id)
    const stored = storedSegments.get(d.name)
    const before = stored && segmentOf(stored)
    const project = d.project ?? null
    if (project !== null && !liveProject(project)) problems.add(at('segments', i, 'project'), `project ${project} is neither in the document nor a live project`)
    const constraints = (d.constraints ?? []).map(normalizeConstraint)
    for (const message of illegalValues(constraints, fields, project)) problems.add(at('segments', i, 'constraints'), message)
    if (before && (!replacing('segments') || canonical({ ...before, id: 0 }) === canonical({ id: 0, name: d.name, description: d.description ?? null, project, constraints }))) {
      segmentIdOf.set(d.id, before.id)
      unchanged.segments++
      continue
    }
    const id = before?.id ?? allocatedSegmentIds[allocated++]!
    const after: Segment = { id, name: d.name, description: d.description ?? null, project, constraints }
    const createdAt = stored?.createdAt ?? (d.createdAt ? new Date(d.createdAt).toISOString() : nowIso)
    const createdBy = stored?.createdBy ?? actor.createdBy
    writes.segments.push({ ...after, createdAt, createdBy })
    events.push({ type: 'segment-import', project, data: { ...after, createdAt, createdBy }, preData: stored ? { ...before, createdAt: stored.createdAt, createdBy: stored.createdBy } : null })
    segments.set(id, after)
    segmentIdOf.set(d.id, id)
    imported.segments++
  }
  /** A segment of the document (by its id there) as it is after the import; problems where it is unknown or of another project. */
  const segmentFor = (docId: number, project: string, path: string): number | undefined => {
    const id = segmentIdOf.get(docId)
    if (id === undefined) {
      problems.add(path, `segment ${docId} is not among the document's segments`)
      return undefined
    }
    const segment = segments.get(id)!
    if (segment.project !== null && segment.project !== project) {
      problems.add(path, `segment ${segment.name} belongs to project ${segment.project} and cannot be used in project ${project}`)
      return undefined
    }
    return id
  }

  /** The problems of a strategy as its routes judge it (a flag's, or without one a default strategy), and its stored form. */
  function checkedStrategy(input: StrategyInput, path: string, project: string, featureName: string | undefined, previousName: string | undefined) {
    const parsed = CreateStrategySchema.safeParse(input)
    if (!parsed.success) {
      for (const d of issuesToDetails(parsed.error)) problems.add(`${path}.${d.path}`, d.message)
      return undefined
    }
    let strategy: ReturnType<typeof normalizeStrategy>
    try {
      strategy = normalizeStrategy(parsed.data, featureName)
    } catch (error) {
      problems.addError(error, (p) => `${path}.${p.replace(/^body\./, '')}`)
      return undefined
    }
    const definition = definitions.get(strategy.name)
    // A document that lists the type is the backup of an instance where strategies of it already were.
    const had = previousName ?? (listedDefinitions.has(strategy.name) ? strategy.name : null)
    const problem = misfit(definition && { ...definition, parameters: definition.parameters as unknown }, { name: strategy.name, parameters: strategy.parameters, previousName: had }, path)
    if (problem) problems.addError(problem, (p) => p)
    for (const message of illegalValues(strategy.constraints, fields, project)) problems.add(`${path}.constraints`, message)
    return strategy
  }

  // The flags of the document (archived ones are left out, with all that names them, as Unleash's export has none).
  const storedFlags = new Map(state.flags.map((f) => [f.name, f]))
  const named = new Map(state.named.map((f) => [f.name, f]))
  const archivedInDocument = new Set((doc.features ?? []).filter((f) => f.archived || f.archivedAt).map((f) => f.name))
  const docFlags = once('features', doc.features, (f) => f.name).filter((f) => !archivedInDocument.has(f.item.name))
  const docFlagNames = new Set(docFlags.map((f) => f.item.name))
  const skipped = (name: string) => archivedInDocument.has(name) && !docFlagNames.has(name)
  const flagsDropped = new Set<string>()
  if (dropping('features')) {
    // Never dropped: a flag an open change request changes (it could then be neither applied nor rejected sensibly).
    for (const f of state.flags) if (!docFlagNames.has(f.name) && !f.openChangeRequests && !(f.archived && archivedInDocument.has(f.name))) flagsDropped.add(f.name)
  }
  /** What names a flag that is neither in the document nor (but with `existing`) one of the instance's. */
  const knownFlag = (name: string, path: string, existing: boolean) => {
    if (docFlagNames.has(name) || (existing && storedFlags.has(name) && !flagsDropped.has(name))) return true
    problems.add(path, `flag ${name} is not among the document's features${existing ? ' nor one of the instance that stays' : ''}`)
    return false
  }
  const flagProject = new Map(docFlags.map((f) => [f.item.name, f.item.project ?? 'default']))

  // Project environments: the document's list, else (Unleash's documents) those its flags use, besides the
  // document's environments (else every enabled one) for a new project or those it has for an existing one.
  const usedEnvironments = new Map<string, Set<string>>()
  for (const part of ['featureEnvironments', 'featureStrategies'] as const) {
    for (const item of doc[part] ?? []) {
      const project = flagProject.get(item.featureName)
      if (project === undefined) continue
      const set = usedEnvironments.get(project) ?? new Set()
      set.add(item.environment)
      usedEnvironments.set(project, set)
    }
  }
  /** Every project's environments after the import, with their settings. */
  const projectEnvironments = new Map<string, StoredProjectEnvironment[]>(
    state.projects.map((p) => [p.id, p.environments.filter((e) => environments.has(e.name)).map((e) => ({ ...e }))]),
  )
  const enabledEnvironments = [...environments.values()].filter((e) => e.enabled).map((e) => e.name)
  for (const { item: d, i } of docProjects) {
    if (projectDecision.get(d.id) !== 'write') continue
    const before = storedProjects.get(d.id)
    const stored = new Map((before?.environments ?? []).map((e) => [e.name, e]))
    let list: StoredProjectEnvironment[]
    if (d.environments) {
      list = []
      for (const [j, e] of d.environments.entries()) {
        const path = at('projects', i, `environments.${j}`)
        if (!environments.has(e.name)) {
          problems.add(`${path}.name`, `environment ${e.name} is neither in the document nor an environment of the instance`)
          continue
        }
        if (list.some((x) => x.name === e.name)) {
          problems.add(`${path}.name`, `environment ${e.name} is listed twice`)
          continue
        }
        let defaultStrategy: Record<string, unknown> | null = e.defaultStrategy === undefined ? (stored.get(e.name)?.defaultStrategy ?? null) : null
        if (e.defaultStrategy) {
          const strategyPath = `${path}.defaultStrategy`
          const previous = stored.get(e.name)?.defaultStrategy?.name
          const strategy = checkedStrategy({ ...e.defaultStrategy, segments: [] }, strategyPath, d.id, undefined, typeof previous === 'string' ? previous : undefined)
          const ids = (e.defaultStrategy.segments ?? []).map((s, k) => segmentFor(s, d.id, `${strategyPath}.segments.${k}`)).filter((s): s is number => s !== undefined)
          if (strategy) defaultStrategy = { ...strategy, segments: [...new Set(ids)], sortOrder: e.defaultStrategy.sortOrder ?? 0 }
        }
        list.push({ name: e.name, changeRequestsEnabled: e.changeRequestsEnabled ?? stored.get(e.name)?.changeRequestsEnabled ?? false, requiredApprovals: e.requiredApprovals ?? stored.get(e.name)?.requiredApprovals ?? 1, defaultStrategy })
      }
    } else {
      const names = new Set(before ? [...stored.keys()].filter((n) => environments.has(n)) : present('environments') ? docEnvironments.map((e) => e.item.name) : enabledEnvironments)
      for (const n of usedEnvironments.get(d.id) ?? []) if (environments.has(n)) names.add(n)
      list = [...names].sort().map((n) => stored.get(n) ?? { name: n, changeRequestsEnabled: false, requiredApprovals: 1, defaultStrategy: null })
    }
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    if (list.length === 0 && !d.environments) problems.add(at('projects', i), `project ${d.id} would have no environment: list its environments`)
    projectEnvironments.set(d.id, list)
  }
  for (const { item: d } of docProjects) {
    if (projectDecision.get(d.id) !== 'write') {
      unchanged.projects++
      continue
    }
    const written = projectWritten.get(d.id)!
    const before = written.before
    const after = { ...written.settings, environments: projectEnvironments.get(d.id)! }
    const beforeView = before && { ...settingsOf(before), environments: before.environments }
    if (beforeView && !before.archived && canonical(beforeView) === canonical(after)) {
      unchanged.projects++
      projectDecision.set(d.id, 'leave')
      continue
    }
    writes.projects.push({ ...written.settings, createdAt: written.createdAt })
    const keptNames = new Set(after.environments.map((e) => e.name))
    for (const e of after.environments) writes.projectEnvironments.push({ ...e, project: d.id })
    for (const e of before?.environments ?? []) if (!keptNames.has(e.name)) writes.projectEnvironmentsRemoved.push({ project: d.id, name: e.name })
    events.push({ type: 'project-import', project: d.id, data: after, preData: beforeView ?? null })
    imported.projects++
  }
  const environmentsOf = (project: string) => new Set((projectEnvironments.get(project) ?? []).map((e) => e.name))

  // Flags: each with its whole configuration, compared with the flag of the same name.
  const remains = (name: string) => storedFlags.has(name) && !flagsDropped.has(name)

  /** The environments the document configures each flag in, with where it first does. */
  const configuredIn = new Map<string, Map<string, string>>()
  const referenced = (flag: string, environment: string, path: string) => {
    const map = configuredIn.get(flag) ?? new Map<string, string>()
    if (!map.has(environment)) map.set(environment, path)
    configuredIn.set(flag, map)
  }
  const strategiesOf = new Map<string, { item: NonNullable<StateImport['featureStrategies']>[number]; i: number }[]>()
  const docStrategyIds = new Set<string>()
  for (const [i, s] of (doc.featureStrategies ?? []).entries()) {
    if (skipped(s.featureName)) continue
    if (s.id !== undefined) {
      if (docStrategyIds.has(s.id)) problems.add(at('featureStrategies', i, 'id'), `strategy id ${s.id} is listed twice`)
      docStrategyIds.add(s.id)
    }
    if (!knownFlag(s.featureName, at('featureStrategies', i, 'featureName'), false)) continue
    const key = pairKey(s.featureName, s.environment)
    const list = strategiesOf.get(key) ?? []
    list.push({ item: s, i })
    strategiesOf.set(key, list)
    // As the strategy route: at most the strategies limit in one flag environment (said once, at the first past it).
    if (list.length === resourceLimits().featureEnvironmentStrategies + 1) problems.add(at('featureStrategies', i), exceedsLimit('strategy', resourceLimits().featureEnvironmentStrategies))
    referenced(s.featureName, s.environment, at('featureStrategies', i, 'environment'))
  }
  const segmentsOfStrategy = new Map<string, { segmentId: number; i: number }[]>()
  const docStrategies = new Set((doc.featureStrategies ?? []).map((s) => s.id))
  for (const [i, link] of (doc.featureStrategySegments ?? []).entries()) {
    if (!docStrategies.has(link.featureStrategyId)) {
      problems.add(at('featureStrategySegments', i, 'featureStrategyId'), `strategy ${link.featureStrategyId} is not among the document's featureStrategies`)
      continue
    }
    const list = segmentsOfStrategy.get(link.featureStrategyId) ?? []
    list.push({ segmentId: link.segmentId, i })
    segmentsOfStrategy.set(link.featureStrategyId, list)
  }
  const switchOf = new Map<string, { item: NonNullable<StateImport['featureEnvironments']>[number]; i: number }>()
  for (const { item, i } of once('featureEnvironments', doc.featureEnvironments, (e) => pairKey(e.featureName, e.environment))) {
    if (skipped(item.featureName) || !knownFlag(item.featureName, at('featureEnvironments', i, 'featureName'), false)) continue
    switchOf.set(pairKey(item.featureName, item.environment), { item, i })
    referenced(item.featureName, item.environment, at('featureEnvironments', i, 'environment'))
  }
  const strategyHomes = new Map(state.strategyIds.map((s) => [s.id, s]))
  const legacyVariants = doc.version < 4

  const images = new Map<string, FlagImage>()
  /** When each strategy written was created: the document's instant, kept (it orders strategies of one sort order). */
  const strategyCreatedAt = new Map<string, string>()
  const flagDecision = new Map<string, 'create' | 'overwrite' | 'leave'>()
  const createdAtOf = new Map<string, string>()
  for (const { item: d, i } of docFlags) {
    const project = d.project ?? 'default'
    const before = named.get(d.name)
    if (before && !replacing('features')) {
      flagDecision.set(d.name, 'leave')
      continue
    }
    if (!liveProject(project)) {
      problems.add(at('features', i, 'project'), projects.has(project) ? `project ${project} is archived` : `project ${project} is neither in the document nor a project of the instance`)
      continue
    }
    if (!before) {
      const settings = projects.get(project)!.settings
      try {
        checkNamingPattern(d.name, settings)
      } catch (error) {
        problems.addError(error, () => at('features', i, 'name'))
      }
    }
    const own = environmentsOf(project)
    for (const [environment, where] of configuredIn.get(d.name) ?? []) {
      if (!own.has(environment)) problems.add(where, `environment ${environment} is not an environment of project ${project} (add it to the project, or import the project with keep=false)`)
    }
    const stored = new Map((before?.strategies ?? []).map((s) => [s.id, s]))
    const environmentsAfter: FlagImage['environments'] = []
    for (const environment of [...own].sort()) {
      const key = pairKey(d.name, environment)
      const change = switchOf.get(key)
      // What the document has no part for, it leaves as it is: a flag overwritten keeps its switches and variants
      // when the document has no featureEnvironments, its strategies when it has no featureStrategies.
      const storedEnvironment = before?.environments.find((e) => e.name === environment)
      const enabled = change ? (change.item.enabled ?? false) : present('featureEnvironments') ? false : (storedEnvironment?.enabled ?? false)
      let variants: Variant[] = present('featureEnvironments') ? [] : (storedEnvironment?.variants ?? [])
      // Before version 4 a flag's variants were the flag's: Unleash gave them to each of its environments the document lists.
      const variantInput = change ? (change.item.variants ?? (legacyVariants ? d.variants : undefined) ?? []) : undefined
      try {
        if (variantInput) variants = normalizeVariants(variantInput as VariantInput[], { sortByName: true, path: at('featureEnvironments', change!.i, 'variants') })
      } catch (error) {
        problems.addError(error, (p) => p)
      }
      const strategies: StrategyImage[] = present('featureStrategies') ? [] : (before?.strategies ?? []).filter((s) => s.environment === environment).map(strategyImageOf)
      for (const [k, { item: s, i: si }] of (strategiesOf.get(key) ?? []).entries()) {
        const path = at('featureStrategies', si)
        // A strategy keeps its id, unless another flag or environment has a strategy of that id.
        const home = s.id && UUID.test(s.id) ? strategyHomes.get(s.id.toLowerCase()) : undefined
        const id = s.id && UUID.test(s.id) && (!home || (home.featureName === d.name && home.environment === environment)) ? s.id.toLowerCase() : crypto.randomUUID()
        const input = {
          name: s.strategyName ?? s.name!,
          title: s.title ?? null,
          disabled: s.disabled ?? null,
          sortOrder: s.sortOrder ?? k,
          constraints: s.constraints ?? [],
          variants: s.variants ?? [],
          parameters: s.parameters ?? {},
        }
        const strategy = checkedStrategy(input, path, project, d.name, stored.get(id)?.name)
        // A document without strategies' segments (exported without segments) leaves a strategy the ones it has.
        const segmentIds = !present('featureStrategySegments')
          ? (stored.get(id)?.segments ?? [])
          : (s.id ? (segmentsOfStrategy.get(s.id) ?? []) : []).map((link) => segmentFor(link.segmentId, project, at('featureStrategySegments', link.i, 'segmentId'))).filter((x): x is number => x !== undefined)
        if (!strategy) continue
        strategyCreatedAt.set(id, s.createdAt ? new Date(s.createdAt).toISOString() : nowIso)
        strategies.push({ id, name: strategy.name, title: strategy.title, disabled: strategy.disabled, sortOrder: input.sortOrder, parameters: strategy.parameters, constraints: strategy.constraints, variants: strategy.variants, segments: [...new Set(segmentIds)].sort((a, b) => a - b) })
      }
      // An enabled environment never serves an empty strategy list: as on enabling, the default strategy (one that names no segments).
      if (enabled && !strategies.some((s) => !s.disabled)) {
        const configured = (projectEnvironments.get(project) ?? []).find((e) => e.name === environment)?.defaultStrategy as (StrategyInput & { segments?: number[] }) | null | undefined
        const input = defaultStrategyFor(configured && (configured.segments ?? []).length === 0 ? configured : null, d.name)
        const strategy = normalizeStrategy(input, d.name)
        const sortOrder = strategies.length === 0 ? 0 : Math.max(...strategies.map((s) => s.sortOrder)) + 1
        const same = (before?.strategies ?? []).find((s) => s.environment === environment && s.name === strategy.name && canonical(s.parameters) === canonical(strategy.parameters) && s.constraints.length === 0)
        strategies.push({ id: same?.id ?? crypto.randomUUID(), name: strategy.name, title: strategy.title, disabled: false, sortOrder, parameters: strategy.parameters, constraints: strategy.constraints, variants: strategy.variants, segments: [] })
      }
      environmentsAfter.push({ name: environment, enabled, variants, strategies: strategies.sort(byOrder) })
    }
    images.set(d.name, {
      name: d.name,
      project,
      type: d.type ?? 'release',
      description: d.description ?? null,
      stale: d.stale ?? false,
      impressionData: d.impressionData ?? false,
      archived: false,
      environments: environmentsAfter,
      // Without featureDependencies in the document, those it has (on flags that stay).
      dependencies: present('featureDependencies') ? [] : (before?.dependencies ?? []).filter((p) => (remains(p.parent) && !storedFlags.get(p.parent)!.archived) || docFlagNames.has(p.parent)),
      // Without featureLinks in the document, those it has.
      links: present('featureLinks') ? [] : (before?.links ?? []),
    })
    flagDecision.set(d.name, before ? 'overwrite' : 'create')
    createdAtOf.set(d.name, d.createdAt ?? '')
  }
  const written = (name: string) => images.has(name)

  // Dependencies of the flags written: as their route, one parent, of the same project, live, with no chains.
  const parentsOf = new Map<string, { parent: string; enabled: boolean; variants: string[]; i: number }[]>()
  for (const [i, d] of (doc.featureDependencies ?? []).entries()) {
    if (skipped(d.child) || !knownFlag(d.child, at('featureDependencies', i, 'child'), false)) continue
    if (!written(d.child)) continue
    const enabled = d.enabled ?? true
    const parents = parentsOf.get(d.child) ?? parentsOf.set(d.child, []).get(d.child)!
    parents.push({ parent: d.parent, enabled, variants: enabled ? [...new Set(d.variants ?? [])] : [], i })
  }
  if (present('featureDependencies')) {
    for (const image of images.values()) image.dependencies = (parentsOf.get(image.name) ?? []).slice(0, 1).map(({ parent, enabled, variants }) => ({ parent, enabled, variants }))
  }
  const finalParentOf = (name: string): string | undefined => {
    if (written(name)) return images.get(name)!.dependencies[0]?.parent
    const flag = named.get(name)
    return flag && remains(name) ? flag.dependencies.find((p) => remains(p.parent) || written(p.parent))?.parent : undefined
  }
  const writtenChildren = new Map<string, string[]>()
  for (const f of images.values()) for (const d of f.dependencies) (writtenChildren.get(d.parent) ?? writtenChildren.set(d.parent, []).get(d.parent)!).push(f.name)
  const finalChildrenOf = (name: string): string[] => [...(named.get(name)?.children ?? []).filter((c) => remains(c) && !written(c)), ...(writtenChildren.get(name) ?? [])]
  const projectAfter = (name: string) => images.get(name)?.project ?? storedFlags.get(name)?.project
  const liveAfter = (name: string) => written(name) || (remains(name) && !storedFlags.get(name)!.archived)
  for (const [child, list] of parentsOf) {
    const image = images.get(child)!
    const path = at('featureDependencies', list[0]!.i)
    if (list.length > 1) problems.add(at('featureDependencies', list[1]!.i), `${child} depends on more than one flag: a flag has at most one parent`)
    const { parent } = list[0]!
    if (parent === child) problems.add(`${path}.parent`, `${child} cannot depend on itself`)
    else if (!liveAfter(parent)) problems.add(`${path}.parent`, `the parent flag ${parent} is neither in the document nor a live flag of the instance`)
    else if (projectAfter(parent) !== image.project) problems.add(`${path}.parent`, `the parent flag ${parent} is in project ${projectAfter(parent)}: a flag can only depend on a flag of its own project (${image.project})`)
    else if (finalParentOf(parent) !== undefined) problems.add(`${path}.parent`, `${parent} depends on ${finalParentOf(parent)} itself: dependencies cannot be chained`)
    else if (finalChildrenOf(child).length > 0) problems.add(`${path}.child`, `${child} is the parent of ${finalChildrenOf(child).join(', ')}: dependencies cannot be chained`)
  }
  for (const image of images.values()) {
    // A flag written into another project takes no dependency across projects along.
    const across = finalChildrenOf(image.name).filter((c) => !written(c) && projectAfter(c) !== image.project)
    if (across.length > 0) problems.add(`body.features`, `${image.name} would be in project ${image.project}, away from the flags that depend on it (${across.join(', ')})`)
  }

  // Links of the flags written: checked as their routes check them, at most 10 a flag.
  for (const [i, l] of (doc.featureLinks ?? []).entries()) {
    if (skipped(l.featureName) || !knownFlag(l.featureName, at('featureLinks', i, 'featureName'), false) || !written(l.featureName)) continue
    const image = images.get(l.featureName)!
    try {
      image.links.push({ url: normalizedLinkUrl(l.url), title: l.title ?? null })
    } catch (error) {
      problems.addError(error, () => at('featureLinks', i, 'url'))
      continue
    }
    if (image.links.length === MAX_LINKS_PER_FLAG + 1) problems.add(at('featureLinks', i), `${l.featureName} has more than ${MAX_LINKS_PER_FLAG} links`)
  }

  // Decide each flag against what it is now; record and write those that change.
  const writtenFlags: string[] = []
  for (const { item: d } of docFlags) {
    const decision = flagDecision.get(d.name)
    const image = images.get(d.name)
    if (decision === 'leave' || !image) {
      if (decision === 'leave') unchanged.features++
      continue
    }
    const before = named.get(d.name)
    const beforeImage = before && flagImageOf(before)
    if (beforeImage && canonical(beforeImage) === canonical(image)) {
      images.delete(d.name)
      unchanged.features++
      continue
    }
    writtenFlags.push(d.name)
    imported.features++
  }
  const writing = new Set(writtenFlags)
  for (const name of [...images.keys()]) if (!writing.has(name)) images.delete(name)

  // Flag tags: added where missing (removed, with drop, where the document does not list them).
  const tagsAfter = new Map<string, EventTag[]>(state.named.map((f) => [f.name, f.tags.filter((t) => tags.has(tagKey(t.type, t.value)))]))
  const linked = new Set(state.named.flatMap((f) => f.tags.map((t) => `${f.name}\u0000${tagKey(t.type, t.value)}`)))
  const docFeatureTags = once('featureTags', doc.featureTags, (t) => `${t.featureName}\u0000${tagKey(t.tagType, t.tagValue)}`)
  const listedLinks = new Set<string>()
  const tagged = new Set<string>()
  const tagEvents: NewEvent[] = []
  for (const { item: t, i } of docFeatureTags) {
    if (skipped(t.featureName)) continue
    if (!knownFlag(t.featureName, at('featureTags', i, 'featureName'), true)) continue
    if (flagsDropped.has(t.featureName)) continue
    if (!tagTypes.has(t.tagType)) {
      problems.add(at('featureTags', i, 'tagType'), `tag type ${t.tagType} is neither in the document nor defined`)
      continue
    }
    const link = `${t.featureName}\u0000${tagKey(t.tagType, t.tagValue)}`
    listedLinks.add(link)
    if (linked.has(link) && tags.has(tagKey(t.tagType, t.tagValue))) {
      unchanged.featureTags++
      continue
    }
    if (!tags.has(tagKey(t.tagType, t.tagValue))) createTag(t.tagType, t.tagValue)
    writes.featureTags.push({ feature: t.featureName, type: t.tagType, value: t.tagValue })
    tagsAfter.set(t.featureName, [...(tagsAfter.get(t.featureName) ?? []), { type: t.tagType, value: t.tagValue }])
    tagged.add(t.featureName)
    tagEvents.push({ type: 'feature-tag-import', project: projectAfter(t.featureName) ?? null, featureName: t.featureName, data: { featureName: t.featureName, tagType: t.tagType, tagValue: t.tagValue } })
    imported.featureTags++
  }
  if (dropping('featureTags')) {
    for (const t of state.featureTags) {
      if (!remains(t.featureName) || !tags.has(tagKey(t.type, t.value)) || listedLinks.has(`${t.featureName}\u0000${tagKey(t.type, t.value)}`)) continue
      writes.featureTagsRemoved.push({ feature: t.featureName, type: t.type, value: t.value })
      tagsAfter.set(t.featureName, (tagsAfter.get(t.featureName) ?? []).filter((x) => x.type !== t.type || x.value !== t.value))
      tagged.add(t.featureName)
    }
  }
  if (dropping('tags')) {
    const listed = new Set([...docTags.map((t) => tagKey(t.item.type, t.item.value)), ...docFeatureTags.map((t) => tagKey(t.item.tagType, t.item.tagValue))])
    for (const t of state.tags) {
      if (!tagTypes.has(t.type) || listed.has(tagKey(t.type, t.value))) continue
      writes.tagsDropped.push(t)
      tags.delete(tagKey(t.type, t.value))
    }
  }
  const sortTags = (list: EventTag[]) => [...list].sort((a, b) => (a.type === b.type ? (a.value < b.value ? -1 : 1) : a.type < b.type ? -1 : 1))
  const finalTags = (name: string) => sortTags((tagsAfter.get(name) ?? []).filter((t) => tags.has(tagKey(t.type, t.value))))

  // What still uses strategy types, segments and context fields after the import: drop never takes those.
  const stillThere = (users: string[]) => users.some((f) => remains(f) && !written(f))
  const newStrategies = [...images.values()].flatMap((f) => f.environments.flatMap((e) => e.strategies))
  const defaults = [...projectEnvironments.values()].flat().map((e) => e.defaultStrategy as { name?: string; segments?: number[]; constraints?: Constraint[] } | null).filter((s) => s !== null)
  if (dropping('segments')) {
    const listed = new Set(docSegments.map((s) => s.item.name))
    const used = new Set([...newStrategies.flatMap((s) => s.segments), ...defaults.flatMap((s) => s.segments ?? [])])
    for (const s of state.segments) {
      if (listed.has(s.name) || used.has(s.id) || stillThere(s.usedBy)) continue
      writes.segmentsDropped.push(s.id)
      segments.delete(s.id)
      events.push({ type: 'segment-deleted', project: s.project, preData: { ...segmentOf(s), createdAt: s.createdAt, createdBy: s.createdBy } })
      dropped.segments++
    }
  }
  if (dropping('strategies')) {
    const listed = new Set(docDefinitions.map((d) => d.item.name))
    const used = new Set([...newStrategies.map((s) => s.name), ...defaults.map((s) => s.name)])
    for (const d of state.definitions) {
      // Never dropped: a built-in type, and one a strategy or a default strategy still has.
      if (d.builtIn || listed.has(d.name) || used.has(d.name) || stillThere(d.usedBy)) continue
      writes.definitionsDropped.push(d.name)
      definitions.delete(d.name)
    }
  }
  if (dropping('contextFields')) {
    const listed = new Set(docFields.map((f) => f.item.name))
    const constraints = [...newStrategies.flatMap((s) => s.constraints), ...defaults.flatMap((s) => s.constraints ?? []), ...[...segments.values()].flatMap((s) => s.constraints)]
    const used = new Set(constraints.map((c) => c.contextName))
    for (const f of state.contextFields) {
      if (listed.has(f.name) || used.has(f.name) || stillThere(f.usedBy)) continue
      writes.contextFieldsDropped.push(f.name)
      fields.delete(f.name)
      events.push({ type: 'context-field-deleted', project: f.project, preData: fieldOf(f) })
      dropped.contextFields++
    }
  }

  // Projects dropped: never `default`, one API tokens are scoped to, one action sets act in, one with open change
  // requests, or one that still has flags or segments of the document after the import.
  if (dropping('projects')) {
    const holding = new Set([
      ...state.flags.filter((f) => remains(f.name) && !written(f.name)).map((f) => f.project),
      ...[...images.values()].map((f) => f.project),
      ...docSegments.map((s) => s.item.project).filter((p): p is string => !!p),
    ])
    for (const p of state.projects) {
      if (docProjectIds.has(p.id) || p.id === 'default' || p.tokens || p.actionSets || p.openChangeRequests || holding.has(p.id)) continue
      writes.projectsDropped.push(p.id)
      projects.delete(p.id)
      projectEnvironments.delete(p.id)
      // Its own context fields go with it (foreign keys), each with its event, as when the project's route deletes it.
      for (const f of state.contextFields.filter((f) => f.project === p.id && !writes.contextFieldsDropped.includes(f.name))) {
        fields.delete(f.name)
        events.push({ type: 'context-field-deleted', project: p.id, preData: fieldOf(f) })
        dropped.contextFields++
      }
    }
  }
  // A project's own field of the document is of a project live after the import.
  for (const { item: d, i } of docFields) {
    if (d.project && !liveProject(d.project)) problems.add(at('contextFields', i, 'project'), `project ${d.project} is neither in the document nor a live project`)
  }
  for (const [project, list] of projectEnvironments) {
    if (writes.environmentsDropped.length > 0 && list.length === 0 && (storedProjects.get(project)?.environments.length ?? 0) > 0) {
      problems.add('body.environments', `dropping environments would leave project ${project} with none: list one of its environments in the document`)
    }
  }

  // A segment the import gives a project is used only there (as its route keeps it): by flags left as they are,
  // flags written and projects' default strategies.
  for (const w of writes.segments.filter((w) => w.project !== null)) {
    const users = [
      ...(state.segments.find((x) => x.id === w.id)?.usedBy ?? []).filter((f) => remains(f) && !written(f)).map((f) => ({ by: `flag ${f}`, project: storedFlags.get(f)!.project })),
      ...[...images.values()].filter((f) => f.environments.some((e) => e.strategies.some((x) => x.segments.includes(w.id)))).map((f) => ({ by: `flag ${f.name}`, project: f.project })),
      ...[...projectEnvironments].filter(([, list]) => list.some((e) => ((e.defaultStrategy?.segments as number[] | undefined) ?? []).includes(w.id))).map(([p]) => ({ by: `the default strategy of project ${p}`, project: p })),
    ].filter((u) => u.project !== w.project)
    if (users.length > 0) problems.add('body.segments', `segment ${w.name} would belong to project ${w.project}, but ${users.map((u) => u.by).join(', ')} of other projects use it`)
  }

  // The flag limit of every project the import adds live flags to.
  for (const [project, { settings }] of projects) {
    if (settings.featureLimit === null) continue
    const arriving = [...images.values()].filter((f) => f.project === project && !(storedFlags.get(f.name)?.project === project && !storedFlags.get(f.name)!.archived))
    if (arriving.length === 0) continue
    const live = state.flags.filter((f) => f.project === project && !f.archived && remains(f.name) && !written(f.name)).length + [...images.values()].filter((f) => f.project === project).length
    if (live > settings.featureLimit) problems.add('body.features', `project ${project} would have ${live} flags, more than its limit of ${settings.featureLimit}: archive some or raise the limit`)
  }
  // Archived flags of the document the instance lacks: made archived, with their metadata and archivedAt (their
  // configuration is no part of the document); one whose project the instance will not have is left out.
  const archivedFlags: Writes['flagsArchived'] = []
  for (const [i, d] of (doc.features ?? []).entries()) {
    if (!skipped(d.name) || storedFlags.has(d.name) || archivedFlags.some((f) => f.name === d.name)) continue
    const project = d.project ?? 'default'
    if (!projects.has(project) || writes.projectsDropped.includes(project)) continue
    const archivedAt = d.archivedAt ? storableTime(d.archivedAt) : now.getTime()
    if (archivedAt === undefined) {
      problems.add(at('features', i, 'archivedAt'), `archivedAt ${d.archivedAt} is not a date (years 1 to 9999)`)
      continue
    }
    archivedFlags.push({
      name: d.name,
      project,
      type: d.type ?? 'release',
      description: d.description ?? null,
      stale: d.stale ?? false,
      impressionData: d.impressionData ?? false,
      createdAt: creationInstant(d.createdAt ?? null, now),
      archivedAt: new Date(archivedAt).toISOString(),
    })
  }
  problems.check()
  for (const f of archivedFlags) {
    writes.flagsArchived.push(f)
    events.push({ type: 'feature-import', project: f.project, featureName: f.name, data: { ...f, archived: true }, preData: null })
    imported.features++
  }

  // Drops recorded as Unleash records them: one event per kind, naming (in preData) what went.
  const dropEvent = (type: NewEvent['type'], name: string, key: string, list: unknown[]) => {
    if (list.length > 0) events.push({ type, data: { name }, preData: { [key]: list } })
  }
  dropped.environments = writes.environmentsDropped.length
  dropEvent('drop-environments', 'all-environments', 'environments', writes.environmentsDropped)
  dropped.strategies = writes.definitionsDropped.length
  dropEvent('drop-strategies', 'all-strategies', 'strategies', writes.definitionsDropped)
  dropped.tagTypes = writes.tagTypesDropped.length
  dropEvent('drop-tag-types', 'all-tag-types', 'tagTypes', writes.tagTypesDropped)
  dropped.tags = writes.tagsDropped.length
  dropEvent('drop-tags', 'all-tags', 'tags', writes.tagsDropped)
  dropped.projects = writes.projectsDropped.length
  dropEvent('drop-projects', 'all-projects', 'projects', writes.projectsDropped)
  writes.flagsDropped = [...flagsDropped]
  dropped.features = writes.flagsDropped.length
  dropEvent('drop-features', 'all-features', 'features', writes.flagsDropped)
  dropped.featureTags = writes.featureTagsRemoved.length
  dropEvent(
    'drop-feature-tags',
    'all-feature-tags',
    'featureTags',
    writes.featureTagsRemoved.map((t) => ({ featureName: t.feature, tagType: t.type, tagValue: t.value })),
  )

  // The flags written: rows, configuration and events.
  for (const name of writtenFlags) {
    const image = images.get(name)!
    const before = named.get(name)
    const beforeImage = before && flagImageOf(before)
    if (before?.archived) writes.flagsRevived.push(name)
    // (name, creation instant) is what tells one flag from another to the flag states apps keep (src/flags/states.ts):
    // a flag created again from a document must not take the very instant of one deleted before it, so its
    // microseconds are its own. The instant shown (milliseconds) is the document's.
    const createdAt = before ? nowIso : creationInstant(createdAtOf.get(name) || null, now)
    writes.flags.push({ name, project: image.project, type: image.type, description: image.description, stale: image.stale, impressionData: image.impressionData, createdAt, known: before !== undefined })
    const keep = new Set(image.environments.map((e) => e.name))
    for (const e of before?.environments ?? []) if (!keep.has(e.name)) writes.flagEnvironmentsRemoved.push({ feature: name, environment: e.name })
    const targetIds = new Set<string>()
    for (const e of image.environments) {
      writes.flagEnvironments.push({ feature: name, environment: e.name, enabled: e.enabled, variants: e.variants })
      for (const s of e.strategies) {
        targetIds.add(s.id)
        const { segments: ids, ...strategy } = s
        writes.strategies.push({ ...strategy, feature: name, environment: e.name, createdAt: strategyCreatedAt.get(s.id) ?? nowIso })
        for (const segment of ids) writes.strategySegments.push({ strategy: s.id, segment })
      }
    }
    for (const s of before?.strategies ?? []) if (!targetIds.has(s.id)) writes.strategiesRemoved.push(s.id)
    for (const dep of image.dependencies) writes.dependencies.push({ child: name, ...dep })
    for (const [slot, link] of image.links.entries()) writes.links.push({ feature: name, slot, ...link })
    events.push({ type: 'feature-import', project: image.project, featureName: name, tags: finalTags(name), data: image, preData: beforeImage ?? null })
  }
  for (const e of tagEvents) events.push({ ...e, tags: finalTags(e.featureName!) })

  // Flags left as they are in a project whose environments change: rows added (off) or taken away with their strategies.
  for (const project of writes.projects.map((p) => p.id)) {
    const before = new Set((storedProjects.get(project)?.environments ?? []).map((e) => e.name))
    const after = environmentsOf(project)
    for (const f of state.flags.filter((f) => f.project === project && remains(f.name) && !written(f.name))) {
      for (const e of after) if (!before.has(e)) writes.flagEnvironmentsAdded.push({ feature: f.name, environment: e })
      for (const e of before) if (!after.has(e)) writes.flagEnvironmentsRemoved.push({ feature: f.name, environment: e })
    }
  }

  // Versions: every flag left in place whose answer may change moves on (with a drop, every one: what a drop takes
  // reaches flags through tags, environments, segments and dependencies).
  const dropsAny = Object.values(dropped).some((n) => n > 0)
  const touched = dropsAny
    ? state.flags.map((f) => f.name)
    : [...tagged, ...writes.flagEnvironmentsAdded.map((r) => r.feature), ...writes.flagEnvironmentsRemoved.map((r) => r.feature)]
  writes.versions = [...new Set(touched)].filter((f) => remains(f) && !written(f)).sort()

  const parents = [...images.values()].flatMap((f) => f.dependencies.map((d) => d.parent))
  const lockedFlags = dropsAny ? state.flags.map((f) => f.name) : [...new Set([...writtenFlags, ...writes.versions, ...parents])].filter((f) => storedFlags.has(f))

  // Change requests: every environment requiring them where the import changes a flag or the project's settings.
  const changedProjects = new Set<string>([
    ...writes.projects.map((p) => p.id),
    ...writes.projectsDropped,
    ...writtenFlags.flatMap((f) => [images.get(f)!.project, storedFlags.get(f)?.project].filter((p): p is string => !!p)),
    ...[...flagsDropped, ...writes.versions].map((f) => storedFlags.get(f)!.project),
  ])
  const protectedIn = state.projects
    .filter((p) => changedProjects.has(p.id))
    .flatMap((p) => p.environments.filter((e) => e.changeRequestsEnabled).map((e) => ({ project: p.id, environment: e.name })))

  return {
    events,
    writes,
    locks: { flags: lockedFlags.sort(), tags: writes.tags, segmentNames: writes.segments.filter((s) => !state.segments.some((x) => x.id === s.id)).map((s) => s.name) },
    protectedIn,
    result: { imported, unchanged, dropped },
  }
}
