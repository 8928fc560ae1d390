import * as z from '../http/zod.js'
import { pagingParam } from '../http/common-schemas.js'
import { LIFECYCLE_STAGES, TagSchema } from './schemas.js'

/** The longest filter a search takes (many values separated by commas): the work a search does is bounded by it. */
const MAX_FILTER = 4000

const filter = (description: string) =>
  z
    .string()
    .max(MAX_FILTER)
    .regex(/^(IS|IS_NOT|IS_ANY_OF|IS_NONE_OF):.+$/, 'must be IS:, IS_NOT:, IS_ANY_OF: or IS_NONE_OF: followed by values separated by commas')
    .optional()
    .openapi({ description: `${description}: \`IS:<v>\`, \`IS_NOT:<v>\`, \`IS_ANY_OF:<v1>,<v2>\` or \`IS_NONE_OF:<v1>,<v2>\`` })
const listFilter = (description: string) =>
  z
    .string()
    .max(MAX_FILTER)
    .regex(/^(INCLUDE|DO_NOT_INCLUDE|INCLUDE_ALL_OF|INCLUDE_ANY_OF|EXCLUDE_IF_ANY_OF|EXCLUDE_ALL):.+$/, 'must be INCLUDE:, DO_NOT_INCLUDE:, INCLUDE_ALL_OF:, INCLUDE_ANY_OF:, EXCLUDE_IF_ANY_OF: or EXCLUDE_ALL: followed by values separated by commas')
    .optional()
    .openapi({ description: `${description}; operators INCLUDE, DO_NOT_INCLUDE, INCLUDE_ALL_OF, INCLUDE_ANY_OF, EXCLUDE_IF_ANY_OF, EXCLUDE_ALL` })
const dayFilter = (description: string) =>
  z
    .string()
    .regex(/^(IS_BEFORE|IS_ON_OR_AFTER):\d{4}-\d{2}-\d{2}$/, 'must be IS_BEFORE:yyyy-MM-dd or IS_ON_OR_AFTER:yyyy-MM-dd')
    .refine((v) => !Number.isNaN(Date.parse(`${v.slice(v.indexOf(':') + 1)}T00:00:00Z`)), 'must name a real date')
    .optional()
    .openapi({ description: `${description}: \`IS_BEFORE:yyyy-MM-dd\` or \`IS_ON_OR_AFTER:yyyy-MM-dd\` (UTC, from the start of the day)` })

export const FeatureSearchQuerySchema = z.object({
  query: z.string().max(200).optional().openapi({ description: 'Text matched case-insensitively in the name, the description and tags (`type:value`); several terms separated by commas match any' }),
  project: filter('Project ids'),
  type: filter('Flag types'),
  state: filter('`active`, `stale` or `potentially-stale`'),
  lifecycle: filter('Lifecycle stages (`archived` selects archived flags)'),
  createdBy: filter('Ids of the users who created the flags'),
  tag: listFilter('Tags as `type:value`'),
  segment: listFilter('Names of segments used by the flags\' strategies'),
  status: z.union([z.string().max(200), z.array(z.string().max(200)).max(50)]).optional().openapi({ description: '`<environment>:enabled` or `<environment>:disabled`, repeatable: flags in any of these states' }),
  createdAt: dayFilter('Creation day'),
  lastSeenAt: dayFilter('Day SDKs last reported the flag in any environment'),
  favorite: z.string().regex(/^(IS|IS_ANY_OF):(true|false)(,(true|false))*$/, 'must be IS:true, IS:false or IS_ANY_OF:true,false').optional().openapi({ description: "The caller's favorites: `IS:true` or `IS:false`" }),
  archived: z.string().regex(/^IS:(true|false)$/, 'must be IS:true or IS:false').optional().openapi({ description: '`IS:true`: archived flags only (over `lifecycle`), as Unleash 8 lists the archive' }),
  sortBy: z.string().max(200).optional().openapi({ description: '`createdAt` (default), `name`, `type`, `stale`, `project`, `lastSeenAt` or `environment:<name>` (enabled there first with `desc`); anything else sorts by `createdAt`, as in Unleash' }),
  sortOrder: z.enum(['asc', 'desc']).optional().openapi({ description: 'Default `asc`' }),
  favoritesFirst: z.enum(['true', 'false']).optional().openapi({ description: "The caller's favorites before the rest" }),
  offset: pagingParam('offset', 1_000_000_000, 0),
  limit: pagingParam('limit', 1000, 50),
})
export type FeatureSearchQuery = z.infer<typeof FeatureSearchQuerySchema>

const UserRefSchema = z.object({ id: z.number().int(), name: z.string(), imageUrl: z.string() })

export const FeatureSearchEnvironmentSchema = z
  .object({
    name: z.string(),
    environment: z.string(),
    featureName: z.string(),
    type: z.string(),
    enabled: z.boolean(),
    sortOrder: z.number().int(),
    variantCount: z.number().int(),
    lastSeenAt: z.string().nullable(),
    hasStrategies: z.boolean(),
    hasEnabledStrategies: z.boolean(),
  })
  .openapi('featureSearchEnvironmentSchema')

export const FeatureSearchResultSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    description: z.string().nullable(),
    dependencyType: z.enum(['parent', 'child']).nullable().openapi({ description: '`parent` when another flag depends on it, else `child` when it depends on one' }),
    project: z.string(),
    stale: z.boolean(),
    potentiallyStale: z.boolean().openapi({ description: 'Outlived its type\'s lifetime and not marked stale (as the project overview\'s flags; the `state` filter\'s `potentially-stale`)' }),
    favorite: z.boolean(),
    impressionData: z.boolean(),
    createdAt: z.string().nullable(),
    archivedAt: z.string().nullable(),
    environments: z.array(FeatureSearchEnvironmentSchema),
    segments: z.array(z.string()).openapi({ description: "Names of the segments the flag's strategies use" }),
    tags: z.array(TagSchema),
    lifecycle: z.object({ stage: z.enum(LIFECYCLE_STAGES), status: z.string().optional(), enteredStageAt: z.string() }),
    createdBy: UserRefSchema,
  })
  .openapi('featureSearchResponseSchema')

export const SearchFeaturesSchema = z.object({ features: z.array(FeatureSearchResultSchema), total: z.number().int() }).openapi('searchFeaturesSchema')
export type SearchFeatures = z.infer<typeof SearchFeaturesSchema>
