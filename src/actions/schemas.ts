import * as z from '../http/zod.js'
import { isValidVersion as validVersion } from '../evaluation/index.js'
import { pagingParam } from '../http/common-schemas.js'

/** How many action sets a project has, actions an action set, filters and values a filter (Unleash's defaults are 5, 10, 5, 25). */
export const MAX_ACTION_SETS_PER_PROJECT = 10
export const MAX_ACTIONS_PER_SET = 10
export const MAX_FILTERS = 10
export const MAX_FILTER_VALUES = 100

/**
 * The actions an action set may take, Unleash's: switching a flag of its project on or off in an environment, or every
 * live flag of its project carrying a tag (`TYPE:VALUE`).
 */
export const ACTIONS = ['TOGGLE_FEATURE_ON', 'TOGGLE_FEATURE_OFF', 'TOGGLE_FEATURES_ON_BY_TAG', 'TOGGLE_FEATURES_OFF_BY_TAG'] as const
export type ActionName = (typeof ACTIONS)[number]
/** The actions naming their flags by a tag (`executionParams.tag`) rather than by name (`executionParams.featureName`). */
export const BY_TAG_ACTIONS: readonly ActionName[] = ['TOGGLE_FEATURES_ON_BY_TAG', 'TOGGLE_FEATURES_OFF_BY_TAG']
/** Whether the action switches flags on (the others switch them off). */
export const switchesOn = (action: ActionName) => action === 'TOGGLE_FEATURE_ON' || action === 'TOGGLE_FEATURES_ON_BY_TAG'

/** A tag as actions name it, `TYPE:VALUE` (a tag type's name has no colon; the value may), or undefined when malformed. */
export function parseTag(tag: string): { type: string; value: string } | undefined {
  const at = tag.indexOf(':')
  return at > 0 && at < tag.length - 1 ? { type: tag.slice(0, at), value: tag.slice(at + 1) } : undefined
}

/** The filter operators Unleash offers for a signal's payload: the constraint operators on lists, strings, numbers and versions. */
export const LIST_OPERATORS = ['IN', 'NOT_IN', 'STR_CONTAINS', 'STR_STARTS_WITH', 'STR_ENDS_WITH'] as const
export const NUMBER_OPERATORS = ['NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE'] as const
export const VERSION_OPERATORS = ['SEMVER_EQ', 'SEMVER_GT', 'SEMVER_GTE', 'SEMVER_LT', 'SEMVER_LTE'] as const
const OPERATORS = [...LIST_OPERATORS, ...NUMBER_OPERATORS, ...VERSION_OPERATORS] as const

const dateTimeText = z.string().openapi({ format: 'date-time' })

export const FilterSchema = z
  .object({
    operator: z.enum(OPERATORS),
    values: z.array(z.string().max(1000, 'a value must be at most 1000 characters')).max(MAX_FILTER_VALUES, `a filter has at most ${MAX_FILTER_VALUES} values`).optional(),
    value: z.string().max(1000, 'value must be at most 1000 characters').optional(),
    inverted: z.boolean().optional(),
    caseInsensitive: z.boolean().optional(),
  })
  .superRefine((filter, context) => {
    const operator = filter.operator as string
    if ((LIST_OPERATORS as readonly string[]).includes(operator)) {
      if (!filter.values?.length) context.addIssue({ code: 'custom', path: ['values'], message: `${operator} needs values` })
    } else if (filter.value === undefined || filter.value.trim() === '') {
      context.addIssue({ code: 'custom', path: ['value'], message: `${operator} needs a value` })
    } else if ((NUMBER_OPERATORS as readonly string[]).includes(operator) && !Number.isFinite(Number(filter.value))) {
      context.addIssue({ code: 'custom', path: ['value'], message: `${operator} needs a number` })
    } else if ((VERSION_OPERATORS as readonly string[]).includes(operator) && (filter.value.trimStart().startsWith('v') || !validVersion(filter.value))) {
      context.addIssue({ code: 'custom', path: ['value'], message: `${operator} needs a version (semver, without a leading v)` })
    }
  })
  .openapi('actionSetFilterSchema', { description: 'A test of one parameter of the signal’s payload, as a strategy constraint tests a context field' })

export type Filter = z.infer<typeof FilterSchema>

const MatchSchema = z.object({
  source: z.literal('signal-endpoint').openapi({ description: 'Where the signals come from: a signal endpoint' }),
  sourceId: z.number().int().min(1).openapi({ description: 'The signal endpoint' }),
  payload: z
    .record(z.string().min(1).max(255), FilterSchema)
    .refine((filters) => Object.keys(filters).length <= MAX_FILTERS, `an action set has at most ${MAX_FILTERS} filters`)
    .openapi({
      description:
        'The filters, by parameter of the payload: nested keys joined with dots, array items as `key[0]` (Unleash’s flattening). Every filter must hold; none: every signal of the source matches.',
      example: { 'data.severity': { operator: 'IN', values: ['critical'] } },
    }),
})

const ExecutionParamsSchema = z.object({
  project: z.string().optional().openapi({ description: 'The action set’s project (it may be left out)' }),
  environment: z.string().min(1).max(100),
  featureName: z.string().min(1).max(255).optional().openapi({ description: 'The flag `TOGGLE_FEATURE_ON` and `TOGGLE_FEATURE_OFF` switch' }),
  tag: z
    .string()
    .min(3)
    .max(300)
    .optional()
    .openapi({ description: 'The tag, `TYPE:VALUE`, whose flags `TOGGLE_FEATURES_ON_BY_TAG` and `TOGGLE_FEATURES_OFF_BY_TAG` switch', example: 'team:checkout' }),
})

export const CreateActionSchema = z
  .object({
    action: z.enum(ACTIONS),
    sortOrder: z.number().int().min(0),
    executionParams: ExecutionParamsSchema,
  })
  .superRefine(({ action, executionParams }, context) => {
    if (BY_TAG_ACTIONS.includes(action)) {
      if (executionParams.tag === undefined || !parseTag(executionParams.tag)) context.addIssue({ code: 'custom', path: ['executionParams', 'tag'], message: `${action} needs a tag as TYPE:VALUE` })
      if (executionParams.featureName !== undefined) context.addIssue({ code: 'custom', path: ['executionParams', 'featureName'], message: `${action} names its flags by tag, not by name` })
    } else {
      if (executionParams.featureName === undefined) context.addIssue({ code: 'custom', path: ['executionParams', 'featureName'], message: `${action} needs a featureName` })
      if (executionParams.tag !== undefined) context.addIssue({ code: 'custom', path: ['executionParams', 'tag'], message: `${action} names its flag by featureName, not by tag` })
    }
  })
  .openapi('createActionSchema')

export const CreateActionsSchema = z
  .object({
    name: z.string().trim().min(1, 'name must not be empty').max(255, 'name must be at most 255 characters'),
    description: z.string().max(1000, 'description must be at most 1000 characters').nullable().optional(),
    enabled: z.boolean().optional().openapi({ description: 'Default true; when updating, left out keeps it' }),
    actorId: z.number().int().min(1).openapi({ description: 'The service account the actions run as' }),
    match: MatchSchema,
    actions: z.array(CreateActionSchema).min(1, 'an action set needs at least one action').max(MAX_ACTIONS_PER_SET, `an action set has at most ${MAX_ACTIONS_PER_SET} actions`),
  })
  .openapi('createActionsSchema')

export type CreateActions = z.infer<typeof CreateActionsSchema>

export const ActionSchema = z
  .object({
    id: z.number().int(),
    action: z.enum(ACTIONS),
    sortOrder: z.number().int(),
    executionParams: ExecutionParamsSchema,
    createdAt: dateTimeText,
    createdByUserId: z.number().int().nullable(),
  })
  .openapi('actionSchema')

export const ActionsSchema = z
  .object({
    id: z.number().int(),
    project: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    actorId: z.number().int(),
    match: MatchSchema,
    actions: z.array(ActionSchema),
    createdAt: dateTimeText,
    createdByUserId: z.number().int().nullable(),
  })
  .openapi('actionsSchema')

export type ActionSet = z.infer<typeof ActionsSchema>

export const ActionsListSchema = z.object({ actions: z.array(ActionsSchema) }).openapi('actionsListSchema')

export const ACTION_STATES = ['not started', 'started', 'success', 'failed'] as const
export const RUN_STATES = ['started', 'success', 'failed'] as const

export const ActionEventSchema = ActionSchema.extend({
  state: z.enum(ACTION_STATES),
  details: z.string().nullable().optional().openapi({ description: 'Why it failed' }),
}).openapi('actionEventSchema')

export const ActionSetEventSchema = z
  .object({
    id: z.number().int(),
    actionSetId: z.number().int(),
    signalId: z.number().int(),
    createdAt: dateTimeText,
    state: z.enum(RUN_STATES).openapi({ description: '`started` until every action has run or one failed (the ones after it are `not started`)' }),
    signal: z
      .object({ id: z.number().int(), source: z.literal('signal-endpoint'), sourceId: z.number().int(), createdAt: dateTimeText, createdBySourceTokenId: z.number().int().nullable(), payload: z.unknown() })
      .openapi('signalSchema'),
    actionSet: ActionsSchema.extend({ actions: z.array(ActionEventSchema) }),
  })
  .openapi('actionSetEventSchema')

export type ActionSetEvent = z.infer<typeof ActionSetEventSchema>

export const ActionSetEventsSchema = z.object({ actionSetEvents: z.array(ActionSetEventSchema) }).openapi('actionSetEventsSchema')

const ParameterSchema = z.object({
  name: z.enum(['project', 'environment', 'featureName', 'tag']),
  label: z.string(),
  type: z.enum(['hidden', 'select']),
  optional: z.boolean().optional(),
  options: z.array(z.string()).optional(),
})

export const ActionDefinitionsSchema = z
  .record(
    z.enum(ACTIONS),
    z.object({ label: z.string(), description: z.string(), category: z.string(), permissions: z.array(z.string()), parameters: z.array(ParameterSchema) }).openapi('actionDefinitionSchema'),
  )
  .openapi('actionDefinitionsConfigSchema')

export const ActionSetParams = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' }, example: 'default' }),
  actionSetId: z
    .string()
    .regex(/^\d{1,9}$/, 'actionSetId must be an action set id (a positive integer)')
    .openapi({ param: { name: 'actionSetId', in: 'path' }, example: '1' }),
})

export const EventsQuery = z.object({ limit: pagingParam('limit', 1000, 50), offset: pagingParam('offset', 1_000_000, 0) })
