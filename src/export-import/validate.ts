import { sql, type SQL } from 'drizzle-orm'
import { contextFields, featureDependencies, featureEnvironments, features, featureStrategies, projectEnvironments, projects, segments, strategyDefinitions, tagTypes } from '../../schema/index.js'
import { queryRows, type Db } from '../db.js'
import { notFound } from '../core/errors.js'
import { hasPermission, Permission, type PermissionName } from '../core/permissions.js'
import type { Principal } from '../core/principal.js'
import { importLimitProblems } from './limits.js'
import { compileWholeTextRegex, type RegexMeter } from '../evaluation/index.js'
import type { ImportToggles, ImportValidation, ValidationItem } from './schemas.js'
import { dataProblems, storedProblems, unorderedVariantFlags } from './checks.js'
import { constraintWarnings } from '../strategies/schemas.js'

/** What the target holds of what an import names: one read. */
export interface ImportTarget {
  project: { pattern: string | null; example: string | null; description: string | null; limit: number | null; liveCount: number } | null
  environment: { changeRequestsEnabled: boolean } | null
  flags: { name: string; project: string; archived: boolean; type: string; impressionData: boolean; stale: boolean }[]
  /** The environments of the project that require change requests. */
  protectedEnvironments: string[]
  /** Dependencies touching the flags the import names (as child or parent). */
  links: { child: string; parent: string; enabled: boolean; variants: string[] }[]
  definitions: { name: string; builtIn: boolean; deprecated: boolean; parameters: unknown }[]
  /** The tag types the import names (in `tagTypes` or its tags) that exist. */
  tagTypes: string[]
  /** The context fields the import names (as fields, or in its strategies' constraints), global or of any project. */
  fields: { name: string; legalValues: { value: string }[]; project: string | null }[]
  segments: { id: number; name: string; project: string | null }[]
  hasStrategies: boolean
  /** The project's live flags the import names that are on in the environment (whether the import switches them). */
  enabled: string[]
}

const unique = (list: string[]) => [...new Set(list)]

/** The context fields an import names: those it carries and those its strategies' constraints use. */
function fieldNamesOf(input: ImportToggles): string[] {
  const constrained = input.data.featureStrategies.flatMap((s) => (s.constraints ?? []).map((c) => (c as { contextName?: unknown }).contextName)).filter((n): n is string => typeof n === 'string')
  return unique([...(input.data.contextFields ?? []).map((c) => c.name), ...constrained])
}

/** The fields of another project than the import's that it names: a project's own fields are for its flags alone. */
export const foreignFieldsOf = (input: ImportToggles, target: ImportTarget) =>
  target.fields.filter((f): f is typeof f & { project: string } => f.project !== null && f.project !== input.project)

export async function readImportTarget(db: Db, input: ImportToggles): Promise<ImportTarget> {
  const [read] = await queryRows<ImportTarget>(db, importTargetSql(input))
  return read!
}

/** The read of readImportTarget as SQL of one row (an import reads it again in its write, to write only while it holds). */
export function importTargetSql(input: ImportToggles): SQL {
  const { data, project, environment } = input
  const names = unique(data.features.map((f) => f.name))
  const parents = unique((data.dependencies ?? []).flatMap((d) => d.dependencies.map((p) => p.feature)))
  return sql`select
      (select json_build_object('pattern', p.feature_naming_pattern, 'example', p.feature_naming_example, 'description', p.feature_naming_description, 'limit', p.feature_limit,
        'liveCount', (select count(*) from ${features} f where f.project = p.id and f.archived_at is null)) from ${projects} p where p.id = ${project} and p.archived_at is null) as project,
      (select json_build_object('changeRequestsEnabled', pe.change_requests_enabled) from ${projectEnvironments} pe where pe.project_id = ${project} and pe.environment_name = ${environment}) as environment,
      (select coalesce(json_agg(pe.environment_name order by pe.environment_name), '[]') from ${projectEnvironments} pe where pe.project_id = ${project} and pe.change_requests_enabled) as "protectedEnvironments",
      (select coalesce(json_agg(json_build_object('name', f.name, 'project', f.project, 'archived', f.archived_at is not null, 'type', f.type, 'impressionData', f.impression_data, 'stale', f.stale) order by f.name), '[]') from ${features} f
        where f.name = any(${sql.param(unique([...names, ...parents]))}::text[])) as flags,
      (select coalesce(json_agg(json_build_object('child', d.child, 'parent', d.parent, 'enabled', d.enabled, 'variants', d.variants) order by d.child, d.parent), '[]') from ${featureDependencies} d
        where d.child = any(${sql.param(unique([...names, ...parents]))}::text[]) or d.parent = any(${sql.param(unique([...names, ...parents]))}::text[])) as links,
      (select coalesce(json_agg(json_build_object('name', d.name, 'builtIn', d.built_in, 'deprecated', d.deprecated, 'parameters', d.parameters) order by d.name), '[]') from ${strategyDefinitions} d
        where d.name = any(${sql.param(unique(data.featureStrategies.map((s) => s.name)))}::text[])) as definitions,
      (select coalesce(json_agg(json_build_object('name', c.name, 'legalValues', c.legal_values, 'project', c.project) order by c.name), '[]') from ${contextFields} c
        where c.name = any(${sql.param(fieldNamesOf(input))}::text[])) as fields,
      (select coalesce(json_agg(json_build_object('id', s.id, 'name', s.name, 'project', s.project) order by s.id), '[]') from ${segments} s
        where s.name = any(${sql.param(unique((data.segments ?? []).map((s) => s.name)))}::text[])) as segments,
      (select coalesce(json_agg(t.name order by t.name), '[]') from ${tagTypes} t where t.name = any(${sql.param(unique([...data.tagTypes.map((t) => t.name), ...(data.featureTags ?? []).map((t) => t.tagType ?? 'simple')]))}::text[])) as "tagTypes",
      exists (select from ${featureStrategies} fs where fs.feature_name = any(${sql.param(names)}::text[]) and fs.environment = ${environment}) as "hasStrategies",
      (select coalesce(json_agg(fe.feature_name order by fe.feature_name), '[]') from ${featureEnvironments} fe join ${features} f on f.name = fe.feature_name
        where fe.feature_name = any(${sql.param(names)}::text[]) and fe.environment = ${environment} and fe.enabled and f.project = ${project} and f.archived_at is null) as enabled`
}

/** How Unleash names the permissions an import may need, in its `permissions` answer. */
const DISPLAY_NAMES: Partial<Record<PermissionName, string>> = {
  UPDATE_FEATURE: 'Update feature flag',
  CREATE_FEATURE: 'Create feature flag',
  CREATE_TAG_TYPE: 'Create tag type',
  CREATE_CONTEXT_FIELD: 'Create context field',
  UPDATE_PROJECT_CONTEXT: 'Create/edit project context',
  DELETE_FEATURE_STRATEGY: 'Delete activation strategies',
  CREATE_FEATURE_STRATEGY: 'Create activation strategies',
  UPDATE_FEATURE_ENVIRONMENT_VARIANTS: 'Update variants',
  UPDATE_FEATURE_ENVIRONMENT: 'Enable/disable flags',
  SKIP_CHANGE_REQUEST: 'Skip change request process',
  DELETE_FEATURE: 'Archive and delete feature flags',
}

/**
 * The flags of the import left out because they are archived in its project (an archived flag of another project is
 * a flag of another project: an error, which names no project the caller may not read).
 */
export const archivedOf = (input: ImportToggles, target: ImportTarget) => {
  const named = new Set(input.data.features.map((f) => f.name))
  return target.flags.filter((f) => f.archived && f.project === input.project && named.has(f.name)).map((f) => f.name)
}

/** The flags the import names `archived: true`: a new one is created archived. */
export const archivedInImportOf = (input: ImportToggles) => new Set(input.data.features.filter((f) => f.archived === true).map((f) => f.name))

/**
 * The live flags of the project the import names `archived: true`: refused (an import archives nothing; archiving
 * takes a flag from every SDK and is the archive route's, which checks what depends on it).
 */
export const archivingOf = (input: ImportToggles, target: ImportTarget) => {
  const archived = archivedInImportOf(input)
  return unique(target.flags.filter((f) => !f.archived && f.project === input.project && archived.has(f.name)).map((f) => f.name))
}

/** The flags the import writes: those it names, less those archived in its project. */
export const importedOf = (input: ImportToggles, target: ImportTarget) => {
  const archived = new Set(archivedOf(input, target))
  return new Set(input.data.features.map((f) => f.name).filter((n) => !archived.has(n)))
}

/**
 * The live flags of the project whose metadata SDKs receive in every environment (type, impression data) the import
 * changes (type, impression data, stale), as `PATCH /api/admin/projects/{projectId}/features/{featureName}` would. A
 * flag it creates is off in every environment but the import's, as a created flag is; its description reaches no SDK.
 */
export function metadataChangedOf(input: ImportToggles, target: ImportTarget): string[] {
  const imported = importedOf(input, target)
  const live = new Map(target.flags.filter((f) => f.project === input.project && !f.archived).map((f) => [f.name, f]))
  return unique(
    input.data.features
      .filter((f) => imported.has(f.name))
      .filter((f) => {
        const before = live.get(f.name)
        return (
          before !== undefined &&
          ((f.type !== undefined && f.type !== before.type) || (f.impressionData != null && f.impressionData !== before.impressionData) || (f.stale != null && f.stale !== before.stale))
        )
      })
      .map((f) => f.name),
  )
}

/**
 * The environments where the import needs SKIP_CHANGE_REQUEST (each that requires change requests): its own; and every
 * one of the project where it changes what reaches all environments: an existing flag's type or impression data (as the
 * flag's PATCH asks) or dependencies (as the dependency routes ask).
 */
export function changeRequestEnvironmentsOf(input: ImportToggles, target: ImportTarget): string[] {
  const everywhere = metadataChangedOf(input, target).length > 0 || (input.data.dependencies ?? []).length > 0
  if (everywhere) return target.protectedEnvironments
  return target.environment?.changeRequestsEnabled ? [input.environment] : []
}

/** The segments of the export, by the target's segment of the same name usable in the project (global or the project's). */
export function segmentsByName(input: ImportToggles, target: ImportTarget): Map<string, number> {
  const found = new Map<string, number>()
  for (const s of target.segments) if ((s.project === null || s.project === input.project) && !found.has(s.name)) found.set(s.name, s.id)
  return found
}

/**
 * The permissions the import needs that the principal lacks, as Unleash decides them: UPDATE_FEATURE always, and
 * CREATE_FEATURE, CREATE_TAG_TYPE, CREATE_CONTEXT_FIELD, DELETE_FEATURE_STRATEGY, CREATE_FEATURE_STRATEGY,
 * UPDATE_FEATURE_ENVIRONMENT_VARIANTS and UPDATE_FEATURE_ENVIRONMENT (a switch it changes) as the import creates or
 * replaces each, checked in the import's environment as the routes it stands for check them; and, where the environment requires
 * change requests, SKIP_CHANGE_REQUEST (Flagpost refuses such an import rather than turning it into a change request).
 */
export function missingPermissions(principal: Principal, input: ImportToggles, target: ImportTarget): PermissionName[] {
  const { data, project, environment } = input
  const existing = new Set(target.flags.filter((f) => f.project === project).map((f) => f.name))
  const needed: PermissionName[] = [Permission.UPDATE_FEATURE]
  if (data.tagTypes.some((t) => !target.tagTypes.includes(t.name))) needed.push(Permission.CREATE_TAG_TYPE)
  // A new field is created global, or the project's own where the export's was a project's (as Unleash imports them).
  // A field of a project other than the import's counts as new (the import is refused for it): the answer is the same
  // whether a private project holds a field of that name or no one does.
  const newFields = (data.contextFields ?? []).filter((c) => !target.fields.some((f) => f.name === c.name && (f.project === null || f.project === project)))
  if (newFields.some((c) => !c.project)) needed.push(Permission.CREATE_CONTEXT_FIELD)
  if (newFields.some((c) => c.project)) needed.push(Permission.UPDATE_PROJECT_CONTEXT)
  const archived = new Set(archivedOf(input, target))
  const imported = unique(data.features.map((f) => f.name)).filter((n) => !archived.has(n))
  const switches = new Map((data.featureEnvironments ?? []).map((e) => [e.featureName ?? e.name ?? '', e.enabled]))
  const wasOn = new Set(target.enabled)
  const isOn = (name: string) => switches.get(name) ?? wasOn.has(name)
  if (target.hasStrategies) needed.push(Permission.DELETE_FEATURE_STRATEGY)
  // A flag left on gets the default strategy where the export gives it none: that is a strategy created too.
  if (data.featureStrategies.length > 0 || imported.some(isOn)) needed.push(Permission.CREATE_FEATURE_STRATEGY)
  // Switching a flag on or off in the environment, as POST …/environments/{environment}/on and /off need.
  if (imported.some((n) => isOn(n) !== wasOn.has(n))) needed.push(Permission.UPDATE_FEATURE_ENVIRONMENT)
  if ((data.featureEnvironments ?? []).some((e) => (e.variants ?? []).length > 0)) needed.push(Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS)
  if (data.features.some((f) => !existing.has(f.name))) needed.push(Permission.CREATE_FEATURE)
  // A new flag created archived: archiving needs what the archive route needs.
  if (data.features.some((f) => f.archived === true && !existing.has(f.name))) needed.push(Permission.DELETE_FEATURE)
  const missing = needed.filter((p) => !hasPermission(principal, p, { project, environment }))
  if (changeRequestEnvironmentsOf(input, target).some((env) => !hasPermission(principal, Permission.SKIP_CHANGE_REQUEST, { project, environment: env }))) missing.push(Permission.SKIP_CHANGE_REQUEST)
  return missing
}

function namingProblems(input: ImportToggles, target: ImportTarget, meter: RegexMeter | undefined): ValidationItem | undefined {
  const rules = target.project!
  if (!rules.pattern) return undefined
  let matches: (name: string) => boolean
  try {
    const regex = compileWholeTextRegex(rules.pattern)
    // Every name against the project's pattern draws on the request's one budget: a thousand long names against a
    // pattern at the program limit stop there with a 400 rather than hold the thread.
    matches = (name) => (meter === undefined ? regex.test(name) : meter.test(regex, name))
  } catch {
    // A pattern RE2 refuses is not enforced on flag creation either.
    return undefined
  }
  const invalid = unique(input.data.features.map((f) => f.name).filter((n) => !matches(n))).sort()
  if (invalid.length === 0) return undefined
  const example = rules.example ? ` For example: "${rules.example}".` : ''
  const description = rules.description ? ` The pattern is described as follows: "${rules.description}"` : ''
  return { message: `Features imported into this project must match the project's feature naming pattern: "${rules.pattern}".${example}${description} The following features do not match the pattern:`, affectedItems: invalid }
}

/**
 * POST /api/admin/features-batch/validate: what importing would meet, in Unleash's words and order. Errors (the import
 * is refused while there is one): strategy types not defined, context fields of other projects named (in the export
 * or its constraints), context fields whose legal values lack some of the export's, flags living in other projects, names given twice, names against the project's pattern, the flag limit,
 * segments with no namesake usable in the project, dependencies on flags neither imported nor live in the project,
 * what the routes would refuse (checks.ts), and live flags of the project the file says archived.
 * Warnings: custom strategy types used, archived flags (left out of the import), flags that exist and are overwritten,
 * dependencies of flags not imported (left out), and strategies with variants in no given order.
 * 404 for a project the caller may not see or that lacks the environment. A flag living in a project the caller may not
 * read (`hiddenProjects`) is said to be in another project, unnamed; no message names anything of such a project.
 */
export function validateImport(principal: Principal, input: ImportToggles, target: ImportTarget, hiddenProjects: readonly string[], meter?: RegexMeter): ImportValidation {
  const { data, project, environment } = input
  if (!target.project) throw notFound(`Could not find project ${project}`)
  if (!target.environment) throw notFound(`Could not find environment ${environment} in project ${project}`)
  const names = data.features.map((f) => f.name)
  const errors: ValidationItem[] = []
  const warnings: ValidationItem[] = []

  const defined = new Map(target.definitions.map((d) => [d.name, d]))
  const undefinedTypes = unique(data.featureStrategies.map((s) => s.name).filter((n) => !defined.has(n)))
  if (undefinedTypes.length > 0) errors.push({ message: 'We detected the following custom strategy in the import file that needs to be created first:', affectedItems: undefinedTypes })
  // The limits the strategy routes hold, before anything costlier is checked.
  errors.push(...importLimitProblems(input))

  // A field of a private project the caller may not read is answered as an unknown name is (the import refuses it
  // once the caller holds the permission to create a field, whose route says the name is taken).
  const foreign = foreignFieldsOf(input, target).filter((f) => !hiddenProjects.includes(f.project))
  if (foreign.length > 0) errors.push({ message: `We detected the following context fields that belong to other projects, which the flags of project ${project} cannot use:`, affectedItems: foreign.map((f) => f.name) })

  const fieldsByName = new Map(target.fields.filter((f) => f.project === null || f.project === project).map((f) => [f.name, f]))
  const illegal = (data.contextFields ?? []).filter((c) => {
    const existing = fieldsByName.get(c.name)
    return existing !== undefined && (c.legalValues ?? []).some((v) => !existing.legalValues.some((l) => l.value === v.value))
  })
  if (illegal.length > 0) errors.push({ message: 'We detected the following context fields that do not have matching legal values with the imported ones:', affectedItems: illegal.map((c) => c.name) })

  // Archived or not: a flag's name is taken in every project and the archive.
  const elsewhere = target.flags.filter((f) => f.project !== project && names.includes(f.name))
  if (elsewhere.length > 0)
    errors.push({ message: `You cannot import a features that already exist in other projects. You already have the following features defined outside of project ${project}:`, affectedItems: elsewhere.map((f) => (hiddenProjects.includes(f.project) ? `${f.name} (in another project)` : `${f.name} (in project ${f.project})`)) })

  const duplicates = unique(names.filter((n, i) => names.indexOf(n) !== i))
  if (duplicates.length > 0) errors.push({ message: 'We detected the following features are duplicate in your import data:', affectedItems: duplicates })

  // Permissions before matching: a caller who may not import (a Viewer) is told so, and the project's pattern is not
  // run against their names; for one who may, the matching draws on the request's meter.
  const missing = missingPermissions(principal, input, target)
  const naming = missing.length === 0 ? namingProblems(input, target, meter) : undefined
  if (naming) errors.push(naming)

  const inProject = new Set(target.flags.filter((f) => f.project === project && !f.archived).map((f) => f.name))
  const archivedInImport = archivedInImportOf(input)
  const newCount = unique(names).filter((n) => !archivedInImport.has(n) && !target.flags.some((f) => f.name === n && f.project === project)).length
  const { limit, liveCount } = target.project
  if (limit !== null && liveCount + newCount > limit)
    errors.push({ message: `We detected you want to create ${newCount} new features to a project that already has ${liveCount} existing features, exceeding the maximum limit of ${limit}.`, affectedItems: [] })

  const usable = segmentsByName(input, target)
  const missingSegments = unique((data.segments ?? []).map((s) => s.name).filter((n) => !usable.has(n)))
  if (missingSegments.length > 0) errors.push({ message: 'We detected the following segments in the import file that need to be created first:', affectedItems: missingSegments })

  // As the dependency route: a parent is a live flag of the project (one the import writes, or one it holds already).
  const imported = importedOf(input, target)
  const missingParents = unique((data.dependencies ?? []).flatMap((d) => d.dependencies.map((p) => p.feature)).filter((p) => archivedInImport.has(p) || (!imported.has(p) && !inProject.has(p))))
  if (missingParents.length > 0) errors.push({ message: 'We detected the following dependencies that need to be created first:', affectedItems: missingParents })

  const known = (name: string) => target.fields.some((f) => f.name === name && (f.project === null || f.project === project))
  errors.push(...dataProblems(input, imported, { links: target.links, knownFields: (data.contextFields ?? []).map((c) => c.name).filter(known), knownTagTypes: target.tagTypes }))
  errors.push(...storedProblems(input, imported, { definitions: target.definitions, fields: target.fields.filter((f) => f.project === null || f.project === project) }))
  const archiving = archivingOf(input, target)
  if (archiving.length > 0) errors.push({ message: 'The following features are live in this project but archived in the import file. An import does not archive flags: archive them first, or import them as live:', affectedItems: archiving })

  const custom = unique(data.featureStrategies.map((s) => s.name).filter((n) => defined.get(n)?.builtIn === false))
  if (custom.length > 0) warnings.push({ message: 'The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:', affectedItems: custom })
  const archived = archivedOf(input, target)
  if (archived.length > 0) warnings.push({ message: 'The following features will not be imported as they are currently archived. To import them, please unarchive them first:', affectedItems: archived })
  const overwritten = unique(names.filter((n) => inProject.has(n)))
  if (overwritten.length > 0) warnings.push({ message: 'The following features already exist in this project and will be overwritten:', affectedItems: overwritten })
  // As Unleash's import: a dependency is written only for a flag the import writes.
  const orphans = unique((data.dependencies ?? []).map((d) => d.feature).filter((n) => !imported.has(n)))
  if (orphans.length > 0) warnings.push({ message: 'The following flags have dependencies in the import file that will not be imported, as the flags themselves are not imported:', affectedItems: orphans })
  const unordered = unorderedVariantFlags(input, imported)
  if (unordered.byFile.length > 0)
    warnings.push({ message: "The following features have strategies with variants whose order the import file does not give (no sortOrder, or the same one twice). They are kept in the file's order, which decides the variant a user gets:", affectedItems: unordered.byFile })
  if (unordered.byIds.length > 0)
    warnings.push({ message: "The following features have strategies with variants and no sortOrder. They are ordered by the creation time of their ids (ULIDs, as Unleash 8 makes them), which decides the variant a user gets:", affectedItems: unordered.byIds })

  // Accepted as Unleash 8.2 accepts them, but not what the SDKs read as written.
  const unread = unique(data.featureStrategies.flatMap((s) => (s.constraints ?? []).flatMap((c) => constraintWarnings(c).map((w) => `${s.featureName ?? '?'}: ${w}`))))
  if (unread.length > 0) warnings.push({ message: 'The following constraints will be imported, but SDKs do not read them as written (a REGEX pattern that is not RE2 syntax never matches; an IN_CIDR entry that is no address or range is skipped):', affectedItems: unread })

  const permissions = missing.length > 0 ? [{ message: 'We detected you are missing the following permissions:', affectedItems: missing.map((p) => DISPLAY_NAMES[p] ?? p) }] : []
  return { errors, warnings, permissions }
}
