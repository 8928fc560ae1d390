import * as z from '../http/zod.js'
import { CreateDependencySchema } from '../dependencies/schemas.js'
import { CreateStrategySchema, UpdateStrategySchema } from '../strategies/schemas.js'
import { VariantsInputSchema } from '../variants/schemas.js'
import { dateTime } from '../http/common-schemas.js'

export const CHANGE_REQUEST_STATES = ['Draft', 'In review', 'Approved', 'Scheduled', 'Applied', 'Rejected', 'Cancelled'] as const
export type ChangeRequestState = (typeof CHANGE_REQUEST_STATES)[number]
/** The states whose changes are still to be applied. */
export const OPEN_STATES: readonly ChangeRequestState[] = ['Draft', 'In review', 'Approved', 'Scheduled']
/** The states in which the author may still edit or discard single changes (as Unleash: not once Scheduled). */
export const EDITABLE_STATES: readonly ChangeRequestState[] = ['Draft', 'In review', 'Approved']
export const SCHEDULE_STATUSES = ['pending', 'failed', 'suspended'] as const
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number]

const feature = z.string().min(1).max(100).openapi({ description: 'The flag the change is about (a live flag of the project)' })
const strategyId = z.string().uuid().openapi({ description: 'The id of a strategy of the flag in the environment' })

/** Each action's payload is validated as the direct route validates its body. */
export const ChangeSchema = z
  .discriminatedUnion('action', [
    z.object({ feature, action: z.literal('updateEnabled'), payload: z.object({ enabled: z.boolean() }) }),
    z.object({ feature, action: z.literal('addStrategy'), payload: CreateStrategySchema }),
    z.object({ feature, action: z.literal('updateStrategy'), payload: z.object({ id: strategyId }).and(UpdateStrategySchema) }),
    z.object({ feature, action: z.literal('deleteStrategy'), payload: z.object({ id: strategyId }) }),
    z.object({ feature, action: z.literal('patchVariant'), payload: z.object({ variants: VariantsInputSchema }) }),
    z.object({ feature, action: z.literal('addDependency'), payload: CreateDependencySchema }),
    z.object({ feature, action: z.literal('deleteDependency'), payload: z.object({ feature: z.string().min(1).max(100).openapi({ description: 'The parent flag' }) }) }),
    z.object({ feature, action: z.literal('archiveFeature'), payload: z.object({}).optional() }),
  ])
  .openapi('changeRequestAddChangeSchema')
export type ChangeInput = z.infer<typeof ChangeSchema>
export type ChangeAction = ChangeInput['action']
export const CHANGE_ACTIONS = ChangeSchema.options.map((o) => o.shape.action.value) as readonly ChangeAction[]

export const MAX_CHANGES_PER_REQUEST = 100
export const ChangesSchema = z.array(ChangeSchema).min(1).max(MAX_CHANGES_PER_REQUEST)
export const ChangeOneOrManySchema = z.union([ChangeSchema, ChangesSchema]).openapi('changeRequestOneOrManySchema')

const userRef = z.object({ id: z.number().int().openapi({ description: 'The user id; -42 for an admin API token (as in Unleash), -1337 for the system' }), username: z.string() })

export const ChangeViewSchema = z.object({
  id: z.number().int(),
  action: z.string(),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  createdBy: userRef,
})

export const ChangeRequestScheduleSchema = z
  .object({
    scheduledAt: z.string().openapi({ description: 'When the change request is (or was, if the schedule failed or is suspended) to be applied' }),
    status: z.enum(SCHEDULE_STATUSES).openapi({ description: 'pending; failed (applying it failed, see reason); suspended (see reason): reschedule it, apply it now, or reject or cancel it' }),
    reason: z.string().optional().openapi({ description: 'Why it failed or was suspended' }),
    failureReason: z.string().nullable().optional().openapi({ description: 'Why it failed (Unleash\'s older name of reason, on failed schedules)' }),
    scheduledBy: userRef.openapi({ description: 'Who scheduled it: it is applied with their access' }),
  })
  .openapi('changeRequestScheduleSchema')
export type ChangeRequestScheduleView = z.infer<typeof ChangeRequestScheduleSchema>

export const ChangeRequestSchema = z
  .object({
    id: z.number().int(),
    title: z.string(),
    project: z.string(),
    environment: z.string(),
    state: z.enum(CHANGE_REQUEST_STATES),
    minApprovals: z.number().int().openapi({ description: "The environment's required approvals" }),
    createdAt: z.string(),
    updatedAt: z.string(),
    createdBy: userRef,
    features: z.array(z.object({ name: z.string(), changes: z.array(ChangeViewSchema) })).openapi({ description: 'The changes grouped by flag, in the order they were added' }),
    approvals: z.array(z.object({ createdBy: userRef, createdAt: z.string() })),
    schedule: ChangeRequestScheduleSchema.optional().openapi({ description: 'Only while the change request is Scheduled' }),
  })
  .openapi('changeRequestSchema')
export type ChangeRequestView = z.infer<typeof ChangeRequestSchema>

export const ChangeRequestStateSchema = z
  .object({
    state: z.enum(['In review', 'Approved', 'Scheduled', 'Applied', 'Rejected', 'Cancelled']),
    comment: z.string().max(1000).optional(),
    scheduledAt: dateTime.optional().openapi({ description: 'With `Scheduled` (and only then): when to apply it, in the future (ISO 8601 with a time zone)' }),
  })
  .superRefine((body, ctx) => {
    if (body.state === 'Scheduled' && body.scheduledAt === undefined) ctx.addIssue({ code: 'custom', path: ['scheduledAt'], message: 'scheduling needs scheduledAt: when to apply the change request' })
    if (body.state !== 'Scheduled' && body.scheduledAt !== undefined) ctx.addIssue({ code: 'custom', path: ['scheduledAt'], message: 'scheduledAt goes only with the state Scheduled' })
  })
  .openapi('changeRequestStateSchema')

export const changeParams = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }),
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, description: 'The change request id' }),
  changeId: z.string().openapi({ param: { name: 'changeId', in: 'path' }, description: 'The id of a change of the change request' }),
})

const ConfigEntrySchema = z.object({
  environment: z.string().min(1).max(100),
  changeRequestsEnabled: z.boolean(),
  requiredApprovals: z.number().int().optional().openapi({ description: 'Approvals needed before applying; clamped to 1..10; unchanged when left out (1 for a new setting)' }),
})
export const ChangeRequestConfigInputSchema = z.union([ConfigEntrySchema, z.array(ConfigEntrySchema).min(1).max(100)]).openapi('updateChangeRequestEnvironmentConfigSchema')
export type ChangeRequestConfigEntry = z.infer<typeof ConfigEntrySchema>

export const ChangeRequestConfigSchema = z
  .array(z.object({ environment: z.string(), type: z.string(), changeRequestsEnabled: z.boolean(), requiredApprovals: z.number().int() }))
  .openapi('changeRequestConfigSchema')

export const changeRequestParams = z.object({
  projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }),
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, description: 'The change request id' }),
})

export const ChangeRequestListQuery = z.object({
  state: z.enum(CHANGE_REQUEST_STATES).optional().openapi({ param: { name: 'state', in: 'query' }, description: 'Only change requests in this state' }),
})
