import * as z from '../http/zod.js'
import { LinkSchema } from '../links/schemas.js'
import { compileWholeTextRegex, regexProblem } from '../evaluation/index.js'
import { dateTime, pathSegmentName } from '../http/common-schemas.js'
import { FlagTypeSchema } from '../flags/schemas.js'
import { PROJECT_MODES, MAX_APPROVALS, MIN_APPROVALS, projectId } from '../projects/schemas.js'
import { ConstraintSchema, CreateStrategySchema, SegmentConstraintsSchema, StrategyConstraintsSchema } from '../strategies/schemas.js'
import { StrategyParametersInputSchema, strategyDefinitionName } from '../strategy-definitions/schemas.js'
import { contextFieldName, LegalValuesSchema } from '../context-fields/schemas.js'
import { TagTypeInputSchema } from '../tag-types/schemas.js'
import { environmentName } from '../environments/schemas.js'
import { StrategyVariantInputSchema, VariantInputSchema, VariantSchema } from '../variants/schemas.js'

/*
 * The instance state document of GET /api/admin/state/export and POST /api/admin/state/import, in Unleash's field
 * names (its state export, version 4), so that an Unleash 4 or 5 export imports. Flagpost adds what Unleash's lacks:
 * the context fields, the flags' dependencies and each project's environments (with their change-request settings
 * and default strategies).
 */

/** The version Flagpost writes: Unleash's last state version (variants per flag environment). */
export const STATE_VERSION = 4

/** The largest import body: several thousand flags; a larger instance is restored kind by kind (the export's switches). */
export const STATE_IMPORT_MAX_BYTES = 4 * 1024 * 1024

/** Unleash's booleans in a query: `true`/`false` or `1`/`0`; absent: `fallback`. */
const queryBoolean = (fallback: boolean, description: string) =>
  z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1'))
    .openapi({ description: `${description} (\`true\`/\`false\` or \`1\`/\`0\`; default \`${fallback}\`)` })

export const StateExportQuerySchema = z.object({
  format: z.enum(['json']).optional().openapi({ description: 'Only `json` (Unleash also wrote YAML)' }),
  download: queryBoolean(false, 'Answer as a file to download (`Content-Disposition: attachment`)'),
  featureToggles: queryBoolean(true, 'Include the flags with their environments, strategies, tags and dependencies'),
  strategies: queryBoolean(true, 'Include the custom strategy types'),
  projects: queryBoolean(true, 'Include the projects with their environments'),
  tags: queryBoolean(true, 'Include tag types, tags and (with the flags) flag tags'),
  environments: queryBoolean(true, 'Include the environments'),
  segments: queryBoolean(true, "Include the segments and (with the flags) the strategies' segments"),
  contextFields: queryBoolean(true, 'Include the context fields'),
})
export type StateExportQuery = z.infer<typeof StateExportQuerySchema>

export const StateImportQuerySchema = z.object({
  drop: queryBoolean(false, 'Delete the existing objects of every kind the document has that it does not list, first (see the description for what is never dropped)'),
  keep: queryBoolean(true, 'Leave existing objects as they are instead of overwriting them with the document’s'),
})
export type StateImportQuery = z.infer<typeof StateImportQuerySchema>

// What the export writes.

const ExportedProjectEnvironment = z.object({
  name: z.string(),
  changeRequestsEnabled: z.boolean(),
  requiredApprovals: z.number().int(),
  defaultStrategy: z.record(z.string(), z.unknown()).nullable(),
})

export const StateSchema = z
  .object({
    version: z.number().int().openapi({ example: STATE_VERSION }),
    features: z
      .array(
        z.object({
          name: z.string(),
          description: z.string().nullable(),
          type: z.string(),
          project: z.string(),
          stale: z.boolean(),
          impressionData: z.boolean(),
          createdAt: z.string(),
          archived: z.boolean(),
          archivedAt: z.string().nullable(),
        }),
      )
      .optional(),
    strategies: z
      .array(
        z.object({
          name: z.string(),
          title: z.string().nullable(),
          displayName: z.string().nullable(),
          description: z.string().nullable(),
          parameters: z.array(z.object({ name: z.string(), type: z.string(), description: z.string(), required: z.boolean() })),
          deprecated: z.boolean(),
          editable: z.boolean(),
          sortOrder: z.number().int(),
        }),
      )
      .optional()
      .openapi({ description: 'The custom strategy types (built-in ones are every instance’s)' }),
    projects: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          description: z.string().nullable(),
          mode: z.enum(PROJECT_MODES),
          defaultStickiness: z.string(),
          featureLimit: z.number().int().nullable(),
          featureNamingPattern: z.string().nullable(),
          featureNamingExample: z.string().nullable(),
          featureNamingDescription: z.string().nullable(),
          createdAt: z.string(),
          updatedAt: z.string().nullable(),
          environments: z.array(ExportedProjectEnvironment).openapi({ description: 'Flagpost: the environments of the project' }),
        }),
      )
      .optional(),
    tagTypes: z.array(z.object({ name: z.string(), description: z.string().nullable(), icon: z.string().nullable(), color: z.string().nullable() })).optional(),
    tags: z.array(z.object({ type: z.string(), value: z.string() })).optional(),
    featureTags: z.array(z.object({ featureName: z.string(), tagType: z.string(), tagValue: z.string() })).optional(),
    featureStrategies: z
      .array(
        z.object({
          id: z.string(),
          featureName: z.string(),
          projectId: z.string(),
          environment: z.string(),
          strategyName: z.string(),
          title: z.string().nullable(),
          parameters: z.record(z.string(), z.string()),
          constraints: z.array(ConstraintSchema),
          variants: z.array(VariantSchema),
          sortOrder: z.number().int(),
          disabled: z.boolean(),
          createdAt: z.string(),
        }),
      )
      .optional(),
    environments: z.array(z.object({ name: z.string(), type: z.string(), sortOrder: z.number().int(), enabled: z.boolean(), protected: z.boolean() })).optional(),
    featureEnvironments: z.array(z.object({ featureName: z.string(), environment: z.string(), enabled: z.boolean(), variants: z.array(VariantSchema) })).optional(),
    segments: z
      .array(
        z.object({
          id: z.number().int(),
          name: z.string(),
          description: z.string().nullable(),
          project: z.string().nullable(),
          constraints: z.array(ConstraintSchema),
          createdBy: z.string().nullable(),
          createdAt: z.string(),
        }),
      )
      .optional(),
    featureStrategySegments: z.array(z.object({ featureStrategyId: z.string(), segmentId: z.number().int() })).optional(),
    contextFields: z
      .array(
        z.object({
          name: z.string(),
          description: z.string().nullable(),
          stickiness: z.boolean(),
          sortOrder: z.number().int(),
          legalValues: z.array(z.object({ value: z.string(), description: z.string().nullable().optional() })),
          project: z.string().optional().openapi({ description: "The project of a project's own field; absent for a global one" }),
        }),
      )
      .optional()
      .openapi({ description: 'Flagpost: the context fields' }),
    featureDependencies: z
      .array(z.object({ child: z.string(), parent: z.string(), enabled: z.boolean(), variants: z.array(z.string()) }))
      .optional()
      .openapi({ description: 'Flagpost: which flag depends on which' }),
    featureLinks: z
      .array(z.object({ featureName: z.string(), url: z.string(), title: z.string().nullable() }))
      .optional()
      .openapi({ description: "Flagpost: the flags' links, each flag's oldest first" }),
  })
  .openapi('stateSchema')
export type StateDocument = z.infer<typeof StateSchema>

// What the import takes: the export of Flagpost, or of Unleash 4 or 5. Fields of an item it does not use are
// ignored (Unleash's carry more); what it uses is held to the rules of the routes that write it.

const name = pathSegmentName('Flag name')
const LIST_MAX = 10_000
const RELATION_MAX = 50_000
const text = (max: number) => z.string().max(max).nullable().optional()
/** Unleash stored some parameters as numbers and booleans: they are strings in a strategy. */
const parameterValue = z.union([z.string().max(10_000), z.number(), z.boolean()]).transform(String)

const ImportedFeature = z.object({
  name,
  description: text(10_000),
  type: FlagTypeSchema.optional().openapi({ description: 'Default `release`' }),
  project: z.string().min(1).max(100).optional().openapi({ description: 'Default `default`' }),
  stale: z.boolean().nullable().optional(),
  impressionData: z.boolean().nullable().optional(),
  createdAt: dateTime.nullable().optional(),
  archived: z.boolean().nullable().optional().openapi({ description: 'An archived flag the instance lacks is made archived (metadata and archivedAt only); one it has is left as it is' }),
  archivedAt: z.string().nullable().optional(),
  variants: z.array(VariantInputSchema).max(100).nullable().optional().openapi({ description: 'Documents before version 4: the variants of every environment of the flag' }),
})

const ImportedDefinition = z.object({
  name: strategyDefinitionName,
  title: text(100),
  displayName: text(100),
  description: text(1000),
  parameters: StrategyParametersInputSchema.optional(),
  deprecated: z.boolean().nullable().optional(),
  sortOrder: z.number().int().min(-2147483648).max(2147483647).nullable().optional(),
})

/** A default strategy as the default-strategy route takes it (segments by the document's ids). */
const ImportedDefaultStrategy = CreateStrategySchema

const ImportedProject = z
  .object({
    id: projectId(1),
    name: z.string().max(100).regex(/^(?!\s*$).+/, 'name must contain at least one non-whitespace character'),
    description: text(10_000),
    mode: z.enum(PROJECT_MODES).optional(),
    defaultStickiness: z.string().min(1).max(100).optional(),
    featureLimit: z.number().int().min(0).max(2147483647).nullable().optional(),
    featureNamingPattern: text(500),
    featureNamingExample: text(500),
    featureNamingDescription: text(1000),
    createdAt: dateTime.nullable().optional(),
    environments: z
      .array(
        z.object({
          name: z.string().min(1).max(100),
          changeRequestsEnabled: z.boolean().optional(),
          requiredApprovals: z.number().int().min(MIN_APPROVALS).max(MAX_APPROVALS).optional(),
          defaultStrategy: ImportedDefaultStrategy.nullable().optional(),
        }),
      )
      .min(1, 'a project has at least one environment')
      .max(1000)
      .optional()
      .openapi({ description: 'Flagpost: the environments of the project; absent (Unleash): those its flags use and the document’s environments' }),
  })
  .superRefine((p, ctx) => {
    if (!p.featureNamingPattern) {
      if (p.featureNamingExample) ctx.addIssue({ code: 'custom', path: ['featureNamingExample'], message: 'an example needs a pattern' })
      return
    }
    const problem = regexProblem(p.featureNamingPattern)
    if (problem !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['featureNamingPattern'], message: `pattern ${p.featureNamingPattern} is not a valid regular expression (RE2 syntax): ${problem}` })
      return
    }
    if (p.featureNamingExample && !compileWholeTextRegex(p.featureNamingPattern).test(p.featureNamingExample)) {
      ctx.addIssue({ code: 'custom', path: ['featureNamingExample'], message: `example ${p.featureNamingExample} does not match the pattern ${p.featureNamingPattern}` })
    }
  })

const ImportedTagType = TagTypeInputSchema.extend({ description: z.string().max(10_000).nullable().optional() })

const tagPart = (what: string) => z.string().trim().min(2, `tag ${what} must be 2 to 50 characters`).max(50, `tag ${what} must be 2 to 50 characters`)
const ImportedTag = z.object({ type: tagPart('type'), value: tagPart('value') })

/** Unleash wrote a flag's tag as `tagType`/`tagValue`, and earlier as `type`/`value`. */
const ImportedFeatureTag = z
  .object({ featureName: name, tagType: tagPart('type').optional(), type: tagPart('type').optional(), tagValue: tagPart('value').optional(), value: tagPart('value').optional() })
  .superRefine((t, ctx) => {
    if (t.tagValue === undefined && t.value === undefined) ctx.addIssue({ code: 'custom', path: ['tagValue'], message: 'a flag tag needs its tagValue' })
  })
  .transform((t) => ({ featureName: t.featureName, tagType: t.tagType ?? t.type ?? 'simple', tagValue: (t.tagValue ?? t.value)! }))

/** A flag's strategy in an environment: Unleash's `strategyName` (or Flagpost's `name`), held to the strategy routes' rules. */
const ImportedFeatureStrategy = z
  .object({
    id: z.string().max(100).optional(),
    featureName: name,
    environment: z.string().min(1).max(100),
    strategyName: z.string().optional(),
    name: z.string().optional(),
    // Unleash 8.2 takes a strategy title of any length (the strategy routes do too).
    title: z.string().nullable().optional(),
    disabled: z.boolean().nullable().optional(),
    sortOrder: z.number().int().min(-2147483648).max(2147483647).nullable().optional(),
    parameters: z.record(z.string().max(100), parameterValue).nullable().optional(),
    constraints: StrategyConstraintsSchema.nullable().optional(),
    variants: z.array(StrategyVariantInputSchema).max(100).nullable().optional(),
    createdAt: dateTime.nullable().optional().openapi({ description: 'Kept: among strategies of one sort order, the older comes first' }),
  })
  .superRefine((s, ctx) => {
    if (s.strategyName === undefined && s.name === undefined) ctx.addIssue({ code: 'custom', path: ['strategyName'], message: 'a strategy needs its strategyName' })
  })

const ImportedEnvironment = z.object({
  name: environmentName(),
  type: z.string().trim().min(1).max(100),
  sortOrder: z.number().int().min(-2147483648).max(2147483647).nullable().optional(),
  enabled: z.boolean().nullable().optional(),
  protected: z.boolean().nullable().optional().openapi({ description: 'Ignored: as through the environment routes, an environment is protected by no import' }),
})

const ImportedFeatureEnvironment = z.object({
  featureName: name,
  environment: z.string().min(1).max(100),
  enabled: z.boolean().nullable().optional(),
  variants: z.array(VariantInputSchema).max(100).nullable().optional(),
})

const ImportedSegment = z.object({
  id: z.number().int().openapi({ description: 'The segment’s id in the document: what `featureStrategySegments` and default strategies name. An existing segment is the one of the same name; a new one gets an id of its own' }),
  name: z.string().trim().min(1, 'segment name must not be empty').max(100, 'segment name must be at most 100 characters'),
  description: text(10_000),
  project: z.string().min(1).max(100).nullable().optional(),
  constraints: SegmentConstraintsSchema.optional(),
  createdAt: dateTime.nullable().optional(),
})

const ImportedContextField = z.object({
  name: contextFieldName,
  description: z.string().max(250, 'description must be at most 250 characters').nullable().optional(),
  stickiness: z.boolean().nullable().optional(),
  sortOrder: z.number().int().min(-2147483648).max(2147483647).nullable().optional(),
  legalValues: LegalValuesSchema,
  project: z.string().min(1).max(100).nullable().optional().openapi({ description: "A project's own field: of that project (in the document, or a live project of the instance); absent or null: global" }),
})

const ImportedLink = z.object({ featureName: name, url: LinkSchema.shape.url, title: LinkSchema.shape.title })
const ImportedDependency = z.object({ child: name, parent: name, enabled: z.boolean().nullable().optional(), variants: z.array(z.string().min(1).max(100)).max(100).nullable().optional() })

export const StateImportSchema = z
  .object({
    version: z.number().int().min(2, 'documents of version 1 (Unleash 3) are not supported: import them into Unleash 4 and export them again').max(STATE_VERSION),
    features: z.array(ImportedFeature).max(LIST_MAX).optional(),
    strategies: z.array(ImportedDefinition).max(1000).optional(),
    projects: z.array(ImportedProject).max(1000).optional(),
    tagTypes: z.array(ImportedTagType).max(1000).optional(),
    tags: z.array(ImportedTag).max(LIST_MAX).optional(),
    featureTags: z.array(ImportedFeatureTag).max(RELATION_MAX).optional(),
    featureStrategies: z.array(ImportedFeatureStrategy).max(RELATION_MAX).optional(),
    environments: z.array(ImportedEnvironment).max(1000).optional(),
    featureEnvironments: z.array(ImportedFeatureEnvironment).max(RELATION_MAX).optional(),
    segments: z.array(ImportedSegment).max(1000).optional(),
    featureStrategySegments: z.array(z.object({ featureStrategyId: z.string().min(1).max(100), segmentId: z.number().int() })).max(RELATION_MAX).optional(),
    contextFields: z.array(ImportedContextField).max(1000).optional(),
    featureDependencies: z.array(ImportedDependency).max(LIST_MAX).optional(),
    // Checked as the link routes check a link; a flag the document writes has exactly its links here (when present).
    featureLinks: z.array(ImportedLink).max(RELATION_MAX).optional(),
  })
  .strict()
  .openapi('stateImportSchema')
export type StateImport = z.infer<typeof StateImportSchema>

const counts = z.object({
  environments: z.number().int(),
  projects: z.number().int(),
  strategies: z.number().int(),
  contextFields: z.number().int(),
  tagTypes: z.number().int(),
  tags: z.number().int(),
  segments: z.number().int(),
  features: z.number().int(),
  featureTags: z.number().int(),
})
export type StateCounts = z.infer<typeof counts>

export const StateImportResultSchema = z
  .object({
    imported: counts.openapi({ description: 'Objects created or overwritten, by kind' }),
    unchanged: counts.openapi({ description: 'Objects of the document already so, or kept as they were (`keep`), by kind' }),
    dropped: counts.openapi({ description: 'Objects deleted by `drop`, by kind' }),
    events: z.number().int().openapi({ description: 'How many events the import recorded' }),
  })
  .openapi('stateImportResultSchema')
export type StateImportResult = z.infer<typeof StateImportResultSchema>

