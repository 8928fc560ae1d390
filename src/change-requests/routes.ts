import * as z from '../http/zod.js'
import { ZodError } from 'zod'
import { adminRoute, createRouter, jsonContent, zodValidationError } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { projectIdParam } from '../http/common-schemas.js'
import { hasPermission, Permission, requirePermission, type PermissionName } from '../core/permissions.js'
import {
  ChangeRequestConfigInputSchema,
  ChangeRequestConfigSchema,
  ChangeRequestListQuery,
  changeRequestParams,
  ChangeRequestSchema,
  ChangeRequestStateSchema,
  ChangeOneOrManySchema,
  changeParams,
  ChangeSchema,
  type ChangeAction,
} from './schemas.js'
import { protectionWeakeningCheck } from './guard.js'
import {
  addChanges,
  approve,
  changeState,
  discardChange,
  discardChangeRequest,
  editChange,
  getChangeRequest,
  getChangeRequestConfig,
  listChangeRequests,
  setChangeRequestConfig,
  type ChangeRequestParties,
} from './store.js'
import type { Caller } from '../core/principal.js'
import { noAccess } from '../core/errors.js'
import { APPLY_PERMISSION, REVIEW_PERMISSION } from './permissions.js'

const tags = ['Change requests']
const base = '/api/admin/projects/{projectId}/change-requests'
const environmentParams = projectIdParam.extend({ environment: z.string().openapi({ param: { name: 'environment', in: 'path' } }) })

/** The permission each change needs, as its direct route does (SKIP_CHANGE_REQUEST aside). */
const ACTION_PERMISSIONS: Record<ChangeAction, PermissionName> = {
  updateEnabled: Permission.UPDATE_FEATURE_ENVIRONMENT,
  addStrategy: Permission.CREATE_FEATURE_STRATEGY,
  updateStrategy: Permission.UPDATE_FEATURE_STRATEGY,
  deleteStrategy: Permission.DELETE_FEATURE_STRATEGY,
  patchVariant: Permission.UPDATE_FEATURE_ENVIRONMENT_VARIANTS,
  addDependency: Permission.UPDATE_FEATURE,
  deleteDependency: Permission.UPDATE_FEATURE,
  archiveFeature: Permission.DELETE_FEATURE,
}

/**
 * A body that is one item or a list: when it is neither, report the problems of the form that was
 * sent (an object or an array), so the error names the field at fault rather than "Invalid input".
 */
function oneOrManyHook(result: { success: true } | { success: false; error: ZodError }): undefined {
  if (result.success) return undefined
  const union = result.error.issues.find((i) => i.code === 'invalid_union' && i.path.length === 0)
  if (!union || union.code !== 'invalid_union' || union.errors.length !== 2) throw zodValidationError(result.error, 'body')
  const [one, many] = union.errors as [z.core.$ZodIssue[], z.core.$ZodIssue[]]
  const wrongShape = (issues: z.core.$ZodIssue[]) => issues.some((i) => i.code === 'invalid_type' && i.path.length === 0)
  throw zodValidationError(new ZodError(wrongShape(one) && !wrongShape(many) ? many : one), 'body')
}

const getConfig = adminRoute({
  method: 'get',
  path: `${base}/config`,
  operationId: 'getChangeRequestConfig',
  tags,
  summary: "Get a project's change request settings",
  description: 'Per environment of the project: whether change requests are required and how many approvals they need.',
  request: { params: projectIdParam },
  responses: { 200: { description: 'The settings per environment', content: jsonContent(ChangeRequestConfigSchema) }, ...pickErrors(401, 403, 404) },
})

const putConfig = adminRoute({
  method: 'put',
  'x-change-requests': 'guarded',
  'x-permission': { name: Permission.UPDATE_PROJECT, project: 'projectId' },
  path: `${base}/config`,
  operationId: 'updateChangeRequestConfig',
  tags,
  summary: "Set a project's change request settings",
  description:
    'One environment or a list: `changeRequestsEnabled`, and `requiredApprovals` clamped to 1..10 (unchanged when left out). Each environment must be enabled in the project (404). ' +
    'Where change requests are enabled, every direct write that changes what SDKs of the environment receive needs SKIP_CHANGE_REQUEST. Needs UPDATE_PROJECT; ' +
    'turning change requests off in an environment, or lowering its required approvals, needs SKIP_CHANGE_REQUEST there too (403 otherwise). ' +
    'Emits `change-request-configuration-updated` per environment whose settings changed.',
  request: { params: projectIdParam, body: { required: true, content: jsonContent(ChangeRequestConfigInputSchema) } },
  responses: { 200: { description: 'The settings now in force', content: jsonContent(ChangeRequestConfigSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const addChangesRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'change-request',
  'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT, project: 'projectId', environment: 'environment', checkedBy: 'handler' },
  path: '/api/admin/projects/{projectId}/environments/{environment}/change-requests',
  operationId: 'addChangesToChangeRequest',
  tags,
  summary: 'Add changes to your draft change request',
  description:
    'One change or a list, each `{ feature, action, payload }` with action `updateEnabled` (`{ enabled }`), `addStrategy` (a strategy), `updateStrategy` (`{ id, ...strategy }`), ' +
    '`deleteStrategy` (`{ id }`), `patchVariant` (`{ variants }`, the whole list), `addDependency` (`{ feature, enabled?, variants? }`), `deleteDependency` (`{ feature }`) or `archiveFeature`. ' +
    'Each payload is validated as its direct route validates it, and the flag, strategy or dependency it names must exist (404). The changes go into your open Draft for this ' +
    "project and environment, which is created when you have none; they are applied in the order they were added. 400 when the environment doesn't require change requests. " +
    'Each change needs the permission of its direct route. Emits `change-request-created` for a new draft and `change-added` per change.',
  request: { params: environmentParams, body: { required: true, content: jsonContent(ChangeOneOrManySchema) } },
  responses: { 200: { description: 'The draft change request', content: jsonContent(ChangeRequestSchema) }, ...pickErrors(400, 401, 403, 404, 415) },
})

const listRoute = adminRoute({
  method: 'get',
  path: base,
  operationId: 'getChangeRequests',
  tags,
  summary: "List a project's change requests",
  description: 'Newest first, optionally only those in one `state`; drafts included. 404 too for a private project the caller may not read (not a member, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: projectIdParam, query: ChangeRequestListQuery },
  responses: { 200: { description: 'The change requests', content: jsonContent(z.array(ChangeRequestSchema)) }, ...pickErrors(400, 401, 403, 404) },
})

const getRoute = adminRoute({
  method: 'get',
  path: `${base}/{id}`,
  operationId: 'getChangeRequest',
  tags,
  summary: 'Get a change request',
  description: '404 for an unknown change request or project. 404 too for a private project the caller may not read (not a member, admin, admin token or root role other than Viewer): for them it does not exist, as in Unleash.',
  request: { params: changeRequestParams },
  responses: { 200: { description: 'The change request', content: jsonContent(ChangeRequestSchema) }, ...pickErrors(401, 403, 404) },
})

const stateRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'change-request',
  'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT, project: 'projectId', checkedBy: 'handler' },
  path: `${base}/{id}/state`,
  operationId: 'changeRequestStateChange',
  tags,
  summary: 'Move a change request to another state',
  description:
    'Draft → `In review` (its author) → `Approved` (after the required approvals, as the approve operation) → `Applied`, or `Scheduled` with `scheduledAt` (a time in the future: ' +
    'applied then, within a minute on Node and within the cron trigger\'s five minutes on Workers, with the access of whoever scheduled it); `Rejected` (by a reviewer, from In review, Approved or Scheduled); ' +
    '`Cancelled` (its author or an admin, while not closed). A Scheduled request may be scheduled again (another time; a failed or suspended schedule becomes pending again, its author the caller), applied now, ' +
    'rejected or cancelled (which drops its schedule). Other moves are 409 ConflictError. Applying runs every change in one transaction through the direct routes\' own ' +
    'write paths, with their usual events, attributed to the caller; a change that no longer applies (flag archived, strategy gone…) fails the whole request with 409 and changes nothing. ' +
    'Reviewing (approve, reject), applying and scheduling need UPDATE_FEATURE_ENVIRONMENT in the environment. ' +
    'A schedule is suspended (`change-request-schedule-suspended`, with the reason) when its author is deleted or loses that permission, or when a conflicting change lands, as Unleash decides it: ' +
    'the flag of one of its changes is archived, a strategy it updates or deletes is updated or deleted, or the variants it sets are changed in its environment. When applying it fails, the schedule is ' +
    'failed with the reason (`change-request-scheduled-application-failure`, attributed to its author); on success `change-request-applied` and `change-request-scheduled-application-success`. ' +
    'Emits `change-request-sent-to-review`, `change-request-approved` / `change-request-approval-added`, `change-request-scheduled`, `change-request-applied`, `change-request-rejected` or `change-request-cancelled`.',
  request: { params: changeRequestParams, body: { required: true, content: jsonContent(ChangeRequestStateSchema) } },
  responses: { 200: { description: 'The change request', content: jsonContent(ChangeRequestSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const approveRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'change-request',
  'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT, project: 'projectId', checkedBy: 'handler' },
  path: `${base}/{id}/approve`,
  operationId: 'approveChangeRequest',
  tags,
  summary: 'Approve a change request',
  description:
    "Adds your approval to a change request In review; never its author's (403), once per approver (409). With the environment's `requiredApprovals` reached it becomes Approved " +
    '(`change-request-approved`), before that `change-request-approval-added`. Needs UPDATE_FEATURE_ENVIRONMENT in the environment.',
  request: { params: changeRequestParams },
  responses: { 200: { description: 'The change request', content: jsonContent(ChangeRequestSchema) }, ...pickErrors(401, 403, 404, 409) },
})


const editChangeRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'change-request',
  'x-permission': { name: Permission.UPDATE_FEATURE_ENVIRONMENT, project: 'projectId', checkedBy: 'handler' },
  path: `${base}/{id}/changes/{changeId}`,
  operationId: 'editChange',
  tags,
  summary: 'Edit a change of a change request',
  description:
    'Replaces the payload of one change of a Draft, In review or Approved change request (409 once it is Scheduled or closed), checked as adding it is (400, 404). The body is the change ' +
    '(`{ feature, action, payload }`); its flag and action must be the stored change\'s (400 otherwise: discard it and add another). Only the request\'s author, or an admin, with the permission of the ' +
    "change's direct route in the environment (403). Approvals given are withdrawn, and an Approved request goes back to In review: they were for what it held. " +
    'Emits `change-edited` (data and preData: the change after and before, and the state when it moved back).',
  request: { params: changeParams, body: { required: true, content: jsonContent(ChangeSchema) } },
  responses: { 200: { description: 'The change request', content: jsonContent(ChangeRequestSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const discardChangeRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'change-request',
  'x-permission': { name: Permission.ADMIN, checkedBy: 'handler' },
  path: `${base}/{id}/changes/{changeId}`,
  operationId: 'discardChange',
  tags,
  summary: 'Discard a change of a change request',
  description:
    'Removes one change of a Draft, In review or Approved change request (409 once it is Scheduled or closed, and for its only change: discard or cancel the request instead). ' +
    "Only the request's author or an admin (ADMIN) (403). Approvals given are withdrawn, and an Approved request goes back to In review. Emits `change-discarded` (preData: the change).",
  request: { params: changeParams },
  responses: { 200: { description: 'The change request', content: jsonContent(ChangeRequestSchema) }, ...pickErrors(401, 403, 404, 409) },
})

const discardRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'change-request',
  'x-permission': { name: Permission.ADMIN, checkedBy: 'handler' },
  path: `${base}/{id}`,
  operationId: 'deleteChangeRequest',
  tags,
  summary: 'Discard a draft change request',
  description:
    "Deletes a Draft with its changes, as Unleash's discard of a draft (409 for any other state: cancel it instead). Only its author or an admin (ADMIN) (403). " +
    'Emits `change-request-discarded` (preData: the change request as it was).',
  request: { params: changeRequestParams },
  responses: { 200: { description: 'The draft was discarded' }, ...pickErrors(401, 403, 404, 409) },
})

/**
 * Who may change what a change request holds (edit or discard a change, discard it): its author, or an admin.
 * Anyone else learns that they would need ADMIN.
 */
function authorizeAuthor(caller: Caller, doing: string) {
  return (cr: ChangeRequestParties) => {
    if (cr.authorKey === caller.key || hasPermission(caller.principal, Permission.ADMIN)) return
    throw noAccess(`Only the author of change request ${cr.id} (${cr.author}) may ${doing}: anyone else needs permission=${Permission.ADMIN}`)
  }
}

/**
 * Who may move a change request on: its author sends it to review; a reviewer in its environment (never
 * its author) approves or rejects it; anyone who may apply in the environment applies it; its author or an
 * admin cancels it.
 */
function authorizeMove(caller: Caller, cr: ChangeRequestParties, to: string) {
  const scope = { project: cr.project, environment: cr.environment }
  const isAuthor = cr.authorKey === caller.key
  switch (to) {
    case 'In review':
      if (!isAuthor) throw noAccess(`Only the author of change request ${cr.id} (${cr.author}) can send it to review`)
      return
    case 'Approved':
      requirePermission(caller.principal, REVIEW_PERMISSION, scope)
      if (isAuthor) throw noAccess(`You cannot approve your own change request ${cr.id}: someone else must approve it`)
      return
    case 'Rejected':
      requirePermission(caller.principal, REVIEW_PERMISSION, scope)
      if (isAuthor) throw noAccess(`You cannot reject your own change request ${cr.id}: cancel it instead`)
      return
    case 'Applied':
    case 'Scheduled':
      requirePermission(caller.principal, APPLY_PERMISSION, scope)
      return
    case 'Cancelled':
      if (!isAuthor && !hasPermission(caller.principal, Permission.ADMIN)) throw noAccess(`Only the author of change request ${cr.id} (${cr.author}) or an admin can cancel it`)
      return
  }
}

export const changeRequestRoutes = createRouter()
  .openapi(getConfig, async (c) => {
    const { projectId } = c.req.valid('param')
    return c.json(await getChangeRequestConfig(c.var.db, projectId), 200)
  })
  .openapi(
    putConfig,
    async (c) => {
      const { projectId } = c.req.valid('param')
      const body = c.req.valid('json')
      const entries = Array.isArray(body) ? body : [body]
      return c.json(await setChangeRequestConfig(c.var.db, c.var.caller, projectId, entries, protectionWeakeningCheck(c, projectId)), 200)
    },
    oneOrManyHook,
  )
  .openapi(
    addChangesRoute,
    async (c) => {
      const { projectId, environment } = c.req.valid('param')
      const body = c.req.valid('json')
      const changes = Array.isArray(body) ? body : [body]
      for (const action of new Set(changes.map((ch) => ch.action))) requirePermission(c.var.principal, ACTION_PERMISSIONS[action], { project: projectId, environment })
      return c.json(await addChanges(c.var.db, c.var.caller, { projectId, environment, changes }), 200)
    },
    oneOrManyHook,
  )
  .openapi(listRoute, async (c) => {
    const { projectId } = c.req.valid('param')
    return c.json(await listChangeRequests(c.var.db, projectId, c.req.valid('query').state), 200)
  })
  .openapi(getRoute, async (c) => {
    const { projectId, id } = c.req.valid('param')
    return c.json(await getChangeRequest(c.var.db, projectId, id), 200)
  })
  .openapi(stateRoute, async (c) => {
    const { projectId, id } = c.req.valid('param')
    const { state, comment, scheduledAt } = c.req.valid('json')
    return c.json(await changeState(c.var.db, c.var.caller, { projectId, id, state, comment, scheduledAt }, (cr) => authorizeMove(c.var.caller, cr, state)), 200)
  })
  .openapi(editChangeRoute, async (c) => {
    const { projectId, id, changeId } = c.req.valid('param')
    const change = c.req.valid('json')
    const author = authorizeAuthor(c.var.caller, 'edit its changes')
    const authorize = (cr: ChangeRequestParties) => {
      requirePermission(c.var.principal, ACTION_PERMISSIONS[change.action], { project: projectId, environment: cr.environment })
      author(cr)
    }
    return c.json(await editChange(c.var.db, c.var.caller, { projectId, id, changeId, change }, authorize), 200)
  })
  .openapi(discardChangeRoute, async (c) => {
    const { projectId, id, changeId } = c.req.valid('param')
    return c.json(await discardChange(c.var.db, c.var.caller, { projectId, id, changeId }, authorizeAuthor(c.var.caller, 'discard its changes')), 200)
  })
  .openapi(discardRoute, async (c) => {
    const { projectId, id } = c.req.valid('param')
    await discardChangeRequest(c.var.db, c.var.caller, { projectId, id }, authorizeAuthor(c.var.caller, 'discard it'))
    return c.body(null, 200)
  })
  .openapi(approveRoute, async (c) => {
    const { projectId, id } = c.req.valid('param')
    return c.json(await approve(c.var.db, c.var.caller, { projectId, id }, (cr) => authorizeMove(c.var.caller, cr, 'Approved')), 200)
  })
