import { adminRoute, createRouter, jsonContent } from '../http/openapi.js'
import { pickErrors } from '../http/errors.js'
import { Permission } from '../core/permissions.js'
import { projectIdParam } from '../http/common-schemas.js'
import {
  ActionDefinitionsSchema,
  ActionSetEventsSchema,
  ActionSetParams,
  ActionsListSchema,
  ActionsSchema,
  CreateActionsSchema,
  EventsQuery,
  MAX_ACTION_SETS_PER_PROJECT,
  MAX_ACTIONS_PER_SET,
  MAX_FILTER_VALUES,
  MAX_FILTERS,
} from './schemas.js'
import { actionDefinitions, createActionSet, deleteActionSet, listActionSetEvents, listActionSets, switchActionSet, updateActionSet } from './store.js'
import { KEPT_RUNS_PER_SET } from './runs.js'

const tags = ['Actions']
const ADMIN_ONLY = ' Needs ADMIN, as in Unleash.'
const base = '/api/admin/projects/{projectId}/actions'
const setPath = `${base}/{actionSetId}`

const WHAT =
  'When a signal of the endpoint `match.sourceId` arrives whose payload passes every filter of `match.payload` (strategy constraint operators on the payload’s parameters), ' +
  'the actions run after the signal’s answer, in their `sortOrder`, as the service account `actorId`: `TOGGLE_FEATURE_ON` and `TOGGLE_FEATURE_OFF` switch the flag `featureName` in `environment` of this project; ' +
  '`TOGGLE_FEATURES_ON_BY_TAG` and `TOGGLE_FEATURES_OFF_BY_TAG` every live flag of this project carrying the tag `tag` (`TYPE:VALUE`) when the action runs, in name order (none: nothing to do; the tag deleted meanwhile: the action fails). ' +
  'Each is checked as the switch route checks it, for the service account: UPDATE_FEATURE_ENVIRONMENT there, and SKIP_CHANGE_REQUEST where the project requires change requests; ' +
  'a refused action fails, it is never forced, and the actions after it do not start (see the run log, `…/events`). Their events name the service account. '

const WRITE_RULES =
  `The project must be live (404 otherwise); \`actorId\` a service account, \`match.sourceId\` a signal endpoint, each action's environment one of the project's, and its flag a live flag of it or its tag an existing tag (400 otherwise). ` +
  `A project has at most ${MAX_ACTION_SETS_PER_PROJECT} action sets, one of a name (409), each at most ${MAX_ACTIONS_PER_SET} actions and ${MAX_FILTERS} filters of at most ${MAX_FILTER_VALUES} values (Unleash's defaults are 5, 10, 5 and 25).`

const listRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: base,
  operationId: 'getActions',
  tags,
  summary: "Get a project's action sets",
  description: `By id.${ADMIN_ONLY}`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The action sets', content: jsonContent(ActionsListSchema) }, ...pickErrors(401, 403, 404) },
})

const configRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: `${base}/config`,
  operationId: 'getActionsConfig',
  tags,
  summary: 'Get the actions an action set may take',
  description: `What each action does, needs and takes, with the project's environments and live flags as the choices of its parameters.${ADMIN_ONLY}`,
  request: { params: projectIdParam },
  responses: { 200: { description: 'The actions', content: jsonContent(ActionDefinitionsSchema) }, ...pickErrors(401, 403, 404) },
})

const createActionsRoute = adminRoute({
  method: 'post',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: base,
  operationId: 'createActions',
  tags,
  summary: 'Create an action set',
  description: `${WHAT}${WRITE_RULES}${ADMIN_ONLY} Emits \`actions-created\`.`,
  request: { params: projectIdParam, body: { required: true, content: jsonContent(CreateActionsSchema) } },
  responses: { 201: { description: 'The action set', content: jsonContent(ActionsSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const updateActionsRoute = adminRoute({
  method: 'put',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: setPath,
  operationId: 'updateActions',
  tags,
  summary: 'Update an action set',
  description: `Replaces it (\`enabled\` kept when left out); runs already queued keep the action set as it was. ${WRITE_RULES}${ADMIN_ONLY} Emits \`actions-updated\`.`,
  request: { params: ActionSetParams, body: { required: true, content: jsonContent(CreateActionsSchema) } },
  responses: { 200: { description: 'The action set', content: jsonContent(ActionsSchema) }, ...pickErrors(400, 401, 403, 404, 409, 415) },
})

const switchRoute = (enabled: boolean) =>
  adminRoute({
    method: 'post',
    'x-change-requests': 'no-sdk-effect',
    'x-permission': { name: Permission.ADMIN },
    path: `${setPath}/${enabled ? 'on' : 'off'}`,
    operationId: enabled ? 'enableActions' : 'disableActions',
    tags,
    summary: enabled ? 'Enable an action set' : 'Disable an action set',
    description: `${enabled ? 'Signals start runs of it again' : 'Signals start no run of it (runs already queued still run)'}. 404 for an unknown action set.${ADMIN_ONLY} Emits \`actions-updated\` when it changes.`,
    request: { params: ActionSetParams },
    responses: { 200: { description: 'The action set', content: jsonContent(ActionsSchema) }, ...pickErrors(400, 401, 403, 404) },
  })
const onRoute = switchRoute(true)
const offRoute = switchRoute(false)

const deleteActionsRoute = adminRoute({
  method: 'delete',
  'x-change-requests': 'no-sdk-effect',
  'x-permission': { name: Permission.ADMIN },
  path: setPath,
  operationId: 'deleteActions',
  tags,
  summary: 'Delete an action set',
  description: `Its run log goes with it. 404 for an unknown action set.${ADMIN_ONLY} Emits \`actions-deleted\`.`,
  request: { params: ActionSetParams },
  responses: { 200: { description: 'The action set was deleted' }, ...pickErrors(400, 401, 403, 404) },
})

const eventsRoute = adminRoute({
  method: 'get',
  'x-permission': { name: Permission.ADMIN },
  path: `${setPath}/events`,
  operationId: 'getActionsEvents',
  tags,
  summary: "Get an action set's runs",
  description: `Its run log, newest first (the newest ${KEPT_RUNS_PER_SET} are kept): each run with the signal that started it and the action set as it was, each action with its state (\`not started\`, \`started\`, \`success\`, \`failed\` and why).${ADMIN_ONLY}`,
  request: { params: ActionSetParams, query: EventsQuery },
  responses: { 200: { description: 'The runs', content: jsonContent(ActionSetEventsSchema) }, ...pickErrors(400, 401, 403, 404) },
})

export const actionRoutes = createRouter()
  .openapi(listRoute, async (c) => c.json({ actions: await listActionSets(c.var.db, c.req.valid('param').projectId) }, 200))
  .openapi(configRoute, async (c) => c.json(await actionDefinitions(c.var.db, c.req.valid('param').projectId), 200))
  .openapi(createActionsRoute, async (c) => c.json(await createActionSet(c.var.db, c.var.caller, c.req.valid('param').projectId, c.req.valid('json')), 201))
  .openapi(updateActionsRoute, async (c) => {
    const { projectId, actionSetId } = c.req.valid('param')
    return c.json(await updateActionSet(c.var.db, c.var.caller, projectId, Number(actionSetId), c.req.valid('json')), 200)
  })
  .openapi(onRoute, async (c) => {
    const { projectId, actionSetId } = c.req.valid('param')
    return c.json(await switchActionSet(c.var.db, c.var.caller, projectId, Number(actionSetId), true), 200)
  })
  .openapi(offRoute, async (c) => {
    const { projectId, actionSetId } = c.req.valid('param')
    return c.json(await switchActionSet(c.var.db, c.var.caller, projectId, Number(actionSetId), false), 200)
  })
  .openapi(deleteActionsRoute, async (c) => {
    const { projectId, actionSetId } = c.req.valid('param')
    await deleteActionSet(c.var.db, c.var.caller, projectId, Number(actionSetId))
    return c.body(null, 200)
  })
  .openapi(eventsRoute, async (c) => {
    const { projectId, actionSetId } = c.req.valid('param')
    return c.json({ actionSetEvents: await listActionSetEvents(c.var.db, projectId, Number(actionSetId), c.req.valid('query')) }, 200)
  })
