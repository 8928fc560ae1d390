import { IMPORT_DOCUMENT_LIMITS } from './document-limits.js'
import * as z from '../http/zod.js'
import { LinkSchema, MAX_LINKS_PER_FLAG } from '../links/schemas.js'
import { ConstraintSchema, StrategySchema } from '../strategies/schemas.js'
import { VariantSchema } from '../variants/schemas.js'

export const ExportQuerySchema = z
  .object({
    environment: z.string().min(1).max(100).openapi({ description: 'The environment to export from', example: 'development' }),
    features: z.array(z.string().min(1).max(100)).max(1000).optional().openapi({ description: 'Selects flags by name; an empty list selects by `tag` or `project`, or every flag' }),
    tag: z.string().min(1).max(100).optional().openapi({ description: 'Selects the flags with a tag of this value (of any type)', example: 'release' }),
    project: z.string().min(1).max(100).optional().openapi({ description: 'Selects the flags of this project, when neither `tag` nor `features` is given' }),
    downloadFile: z.boolean().optional().openapi({ description: 'Answer as a file to download (`Content-Disposition: attachment`)' }),
  })
  .openapi('exportQuerySchema')
export type ExportQuery = z.infer<typeof ExportQuerySchema>

const ExportedFeature = z.object({
  name: z.string(),
  type: z.string(),
  description: z.string().nullable(),
  project: z.string(),
  stale: z.boolean(),
  impressionData: z.boolean(),
  archived: z.boolean(),
})
const ExportedFeatureEnvironment = z.object({ name: z.string(), featureName: z.string(), environment: z.string(), enabled: z.boolean(), variants: z.array(VariantSchema) })
const ExportedContextField = z.object({
  name: z.string(),
  description: z.string().nullable(),
  stickiness: z.boolean(),
  sortOrder: z.number().int(),
  legalValues: z.array(z.object({ value: z.string(), description: z.string().nullable().optional() })),
  project: z.string().optional().openapi({ description: "The project of a project's own field (absent for a global one), as Unleash exports it" }),
})
const ExportedFeatureTag = z.object({ featureName: z.string(), tagType: z.string(), tagValue: z.string() })
const ExportedTagType = z.object({ name: z.string(), description: z.string().nullable(), icon: z.string().nullable(), color: z.string().nullable() })
const ExportedDependency = z.object({ feature: z.string(), enabled: z.boolean(), variants: z.array(z.string()) })

export const ExportResultSchema = z
  .object({
    features: z.array(ExportedFeature),
    featureStrategies: z.array(StrategySchema),
    featureEnvironments: z.array(ExportedFeatureEnvironment),
    contextFields: z.array(ExportedContextField),
    featureTags: z.array(ExportedFeatureTag),
    segments: z.array(z.object({ id: z.number().int(), name: z.string() })),
    tagTypes: z.array(ExportedTagType),
    dependencies: z.array(z.object({ feature: z.string(), dependencies: z.array(ExportedDependency) })),
    links: z.array(z.object({ feature: z.string(), links: z.array(z.object({ url: z.string(), title: z.string().nullable() })) })).openapi({ description: 'The links of the flags that have any' }),
  })
  .openapi('exportResultSchema')
export type ExportResult = z.infer<typeof ExportResultSchema>

/*
 * What an import accepts: an export, of Flagpost or of Unleash. Fields it does not use are ignored (an Unleash
 * export carries more), so the parts are lenient here and checked where they are used.
 */
const name = z.string().min(1).max(100)
const ImportedFeature = z.object({
  name,
  type: z.string().max(100).optional(),
  description: z.string().max(10_000).nullable().optional(),
  project: z.string().max(100).nullable().optional(),
  stale: z.boolean().nullable().optional(),
  impressionData: z.boolean().nullable().optional(),
  archived: z.boolean().nullable().optional().openapi({ description: 'A new flag is created archived (with `feature-created` then `feature-archived`); a live flag of the project cannot be archived by an import' }),
})
const ImportedStrategy = z.object({
  // Unleash 8's strategy ids are ULIDs (time-ordered): where no sortOrder is given, they give the order.
  id: z.string().max(100).nullable().optional(),
  name: z.string().min(1).max(100),
  featureName: name.optional(),
  // Unleash 8.2 takes a strategy title of any length (the strategy routes do too).
  title: z.string().nullable().optional(),
  disabled: z.boolean().nullable().optional(),
  // Unleash 8.2 takes a null sortOrder (as no sortOrder: the strategy keeps its place in the list).
  sortOrder: z
    .number()
    .int()
    .nullable()
    .optional()
    .transform((v) => v ?? undefined),
  segments: z.array(z.number().int()).max(100).optional(),
  constraints: z.array(ConstraintSchema.partial({ caseInsensitive: true, inverted: true, values: true })).max(100).optional(),
  variants: z.array(z.unknown()).max(100).optional(),
  parameters: z.record(z.string(), z.string()).optional(),
})
const ImportedFeatureEnvironment = z.object({ name: name.optional(), featureName: name.optional(), enabled: z.boolean(), variants: z.array(z.unknown()).max(100).optional() })
const ImportedContextField = z.object({
  name,
  description: z.string().max(1000).nullable().optional(),
  stickiness: z.boolean().optional(),
  sortOrder: z.number().int().optional(),
  legalValues: z.array(z.object({ value: z.string(), description: z.string().nullable().optional() })).max(1000).optional(),
  project: z.string().nullable().optional().openapi({ description: "Set for a project's own field: imported as a field of the import's project (as Unleash does), else global" }),
})

export const ImportDataSchema = z.object({
  features: z.array(ImportedFeature).max(IMPORT_DOCUMENT_LIMITS.flags),
  featureStrategies: z.array(ImportedStrategy).max(IMPORT_DOCUMENT_LIMITS.strategies),
  featureEnvironments: z.array(ImportedFeatureEnvironment).max(1000).optional(),
  contextFields: z.array(ImportedContextField).max(1000).optional(),
  // Tag types and values are trimmed, as the tag routes trim them.
  featureTags: z.array(z.object({ featureName: name, tagType: z.string().trim().max(100).optional(), tagValue: z.string().trim().max(100) })).max(10_000).optional(),
  segments: z.array(z.object({ id: z.number().int(), name: z.string() })).max(1000).optional(),
  tagTypes: z.array(z.object({ name: z.string().trim().min(1).max(100), description: z.string().nullable().optional(), icon: z.string().nullable().optional(), color: z.string().nullable().optional() })).max(1000),
  dependencies: z.array(z.object({ feature: name, dependencies: z.array(z.object({ feature: name, enabled: z.boolean().optional(), variants: z.array(z.string()).optional() })).max(100) })).max(1000).optional(),
  // Checked as the link routes check a link (src/links/schemas.ts); a flag listed here has exactly these links after.
  links: z.array(z.object({ feature: name, links: z.array(LinkSchema).max(MAX_LINKS_PER_FLAG) })).max(1000).optional(),
})
export type ImportData = z.infer<typeof ImportDataSchema>

export const ImportTogglesSchema = z
  .object({
    project: z.string().min(1).max(100).openapi({ description: 'The project to import into', example: 'default' }),
    environment: z.string().min(1).max(100).openapi({ description: 'The environment to import into', example: 'development' }),
    data: ImportDataSchema,
  })
  .strict()
  .openapi('importTogglesSchema')
export type ImportToggles = z.infer<typeof ImportTogglesSchema>

/** Validate's body: the envelope, so that every problem of a malformed `data` is answered in `errors` (importTogglesSchema). */
export const ValidateImportBodySchema = z
  .object({
    project: z.string().min(1).max(100).openapi({ description: 'The project to import into', example: 'default' }),
    environment: z.string().min(1).max(100).openapi({ description: 'The environment to import into', example: 'development' }),
    data: z.unknown().openapi({ description: 'The export (importTogglesSchema\'s data): what does not fit it is answered in `errors`' }),
  })
  .loose()
  .openapi('validateImportTogglesSchema')

export const ImportTogglesValidateItemSchema = z
  .object({ message: z.string(), affectedItems: z.array(z.string()) })
  .openapi('importTogglesValidateItemSchema')
export type ValidationItem = z.infer<typeof ImportTogglesValidateItemSchema>

export const ImportTogglesValidateSchema = z
  .object({ errors: z.array(ImportTogglesValidateItemSchema), warnings: z.array(ImportTogglesValidateItemSchema), permissions: z.array(ImportTogglesValidateItemSchema) })
  .openapi('importTogglesValidateSchema')
export type ImportValidation = z.infer<typeof ImportTogglesValidateSchema>
